/**
 * The read benchmark's setup through the API (read.bench.ts): a tenant and a key made as a user
 * makes them, and the check every server under test passes before it is measured.
 */
import { cnpj } from "../support/taxIds.js"
import type { Child } from "./children.js"

const call = async (base: string, method: "GET" | "POST", path: string, token?: string, body?: unknown) => {
  const response = await fetch(base + path, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
    },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  return { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, unknown> }
}

const expectOk = async (base: string, method: "GET" | "POST", path: string, token?: string, body?: unknown) => {
  const answer = await call(base, method, path, token, body)
  if (answer.status >= 300) {
    throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`)
  }
  return answer.body
}

/** A tenant and a test key of it, as a user would make them (README, "With curl"). */
export const setUp = async (base: string, runId: string) => {
  const email = `readbench-${runId}@example.com`
  const password = "correct horse battery staple"
  const registration = await expectOk(base, "POST", "/v1/auth/register", undefined, {
    email,
    password,
    name: "Read Bench",
    tenant: { name: "Read Bench Ltda", tax_id: cnpj() }
  })
  const tenantId = String((registration["tenant"] as { id: string }).id)
  const session = String((await expectOk(base, "POST", "/v1/auth/login", undefined, { email, password }))["token"])
  // `GET /v1/tenants/{id}` asks no scope of a key (src/tenants/Api.ts): any active key of the tenant reads it.
  const created = await expectOk(base, "POST", `/v1/tenants/${tenantId}/api-keys`, session, {
    name: "read bench",
    environment: "test",
    scopes: ["documents:read"]
  })
  return { tenantId, token: String(created["token"]) }
}

/** The read answers 200 with the tenant, and a well-formed unknown key 401, before anything is measured. */
export const checkRead = async (child: Child, path: string, token: string) => {
  const ok = await call(child.base, "GET", path, token)
  if (ok.status !== 200) throw new Error(`${child.name}: GET ${path} answered ${ok.status}: ${JSON.stringify(ok.body)}`)
  const unknown = await call(child.base, "GET", path, `etd_test_${"a".repeat(32)}`)
  if (unknown.status !== 401) throw new Error(`${child.name}: an unknown key was answered ${unknown.status}, not 401`)
  return ok.body
}
