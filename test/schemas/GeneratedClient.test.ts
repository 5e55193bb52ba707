/**
 * The OpenAPI document is a contract others generate clients from: types generated from the
 * served /openapi.json with openapi-typescript type-check (strict) a small openapi-fetch client,
 * which then talks to the service over real HTTP: register, log in, create a key, issue a document
 * (and replay it), read it back, list with `limit`, and read typed error bodies with the headers
 * the document promises.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { createServer, get } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import openapiTS, { astToString } from "openapi-typescript"
import ts from "typescript"
import { makeApp } from "../../src/App.js"
import { cnpj, PASSWORD, uniqueEmail } from "../support/fixtures.js"
import { databaseLayer, testConfig } from "../support/TestApp.js"

const app = makeApp(testConfig(), databaseLayer("embedded")).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0 }))
)

const baseUrl = Effect.map(HttpServer.HttpServer, (server) =>
  server.address._tag === "UnixPathAddress" ? "" : `http://127.0.0.1:${server.address.port}`)

/**
 * An integrator's client, written against the generated `paths` and `components` only. The
 * `@ts-expect-error` lines hold the document to its types: they stop compiling (an unused
 * directive is an error) if `limit` became a string again, or if an error body required `_tag`.
 */
const clientSource = `
import createClient from "openapi-fetch"
import type { components, paths } from "./schema.js"

type NewDocument = components["schemas"]["NewDocument"]
type NotFound = components["schemas"]["NotFound"]

// An error body without the typed client's \`_tag\` is a valid one.
export const plainNotFound: NotFound = { code: "not_found", message: "No such resource." }

export const typeChecks = (api: ReturnType<typeof createClient<paths>>) => {
  // @ts-expect-error \`limit\` is an integer, not text
  void api.GET("/v1/documents", { params: { query: { limit: "5" } } })
  // @ts-expect-error an error body has a \`code\`
  const noCode: NotFound = { message: "No such resource." }
  return noCode
}

export const run = async (baseUrl: string, email: string, password: string, taxId: string) => {
  const anonymous = createClient<paths>({ baseUrl })
  const registered = await anonymous.POST("/v1/auth/register", {
    body: { email, password, tenant: { name: "Contract Ltda", tax_id: taxId } }
  })
  const tenantId = registered.data?.tenant?.id
  if (tenantId === undefined) throw new Error("register: " + registered.response.status)
  const login = await anonymous.POST("/v1/auth/login", { body: { email, password } })
  if (login.data === undefined) throw new Error("login: " + login.response.status)
  const expiresAt: string = login.data.expires_at

  const dashboard = createClient<paths>({ baseUrl, headers: { authorization: "Bearer " + login.data.token } })
  const completed = await dashboard.PATCH("/v1/tenants/{tenantId}", {
    params: { path: { tenantId } },
    body: {
      registration: {
        legal_name: "Contract Ltda",
        address: {
          street: "Avenida Paulista",
          number: "1000",
          district: "Bela Vista",
          municipality_code: "3550308",
          state: "SP",
          postal_code: "01310-100"
        }
      }
    }
  })
  if (completed.data === undefined) throw new Error("registration: " + completed.response.status)
  const key = await dashboard.POST("/v1/tenants/{tenantId}/api-keys", {
    params: { path: { tenantId } },
    body: { name: "backend", environment: "test", scopes: ["documents:read", "documents:write"] }
  })
  if (key.data === undefined) throw new Error("create key: " + key.response.status)

  const backend = createClient<paths>({ baseUrl, headers: { authorization: "Bearer " + key.data.token } })
  const document: NewDocument = {
    type: "service_invoice",
    reference: "contract-1",
    taker: { tax_id: "52998224725", name: "Maria da Silva" },
    service: { code: "010101", nbs_code: "115013000", description: "Consultoria em sistemas", municipality_code: "3550308" },
    amounts: { services: 150000, iss_rate: "2.00" }
  }
  // A field the document does not know: the server ignores it, as the open schema says.
  const withExtraField = { ...document, client_note: "ignored" }
  const issued = await backend.POST("/v1/tenants/{tenantId}/documents", {
    params: { path: { tenantId }, header: { "idempotency-key": "contract-" + tenantId } },
    body: withExtraField
  })
  if (issued.data === undefined) throw new Error("issue: " + issued.response.status)
  const replayed = await backend.POST("/v1/tenants/{tenantId}/documents", {
    params: { path: { tenantId }, header: { "idempotency-key": "contract-" + tenantId } },
    body: withExtraField
  })

  const read = await backend.GET("/v1/tenants/{tenantId}/documents/{docId}", {
    params: { path: { tenantId, docId: issued.data.id } }
  })
  const page = await backend.GET("/v1/documents", { params: { query: { limit: 1 } } })
  const missing = await backend.GET("/v1/documents/{docId}", {
    params: { path: { docId: "doc_00000000000000000000000000" } }
  })
  const notFound: NotFound | undefined = missing.error?.code === "not_found" ? missing.error : undefined
  const unauthenticated = await anonymous.GET("/v1/documents", {})

  return {
    expiresAt,
    issued: { status: issued.response.status, id: issued.data.id, state: issued.data.status, createdAt: issued.data.created_at },
    replayed: { id: replayed.data?.id, header: replayed.response.headers.get("idempotent-replayed") },
    read: {
      id: read.data?.id,
      reference: read.data?.reference,
      // The answer is one of the document types, told apart by \`type\`.
      services: read.data?.type === "service_invoice" ? read.data.amounts.services : undefined
    },
    page: {
      ids: page.data?.data.map((d) => d.id),
      hasMore: page.data?.has_more,
      rateLimit: page.response.headers.get("ratelimit-limit")
    },
    missing: {
      status: missing.response.status,
      code: notFound?.code,
      message: notFound?.message,
      requestId: missing.response.headers.get("x-request-id")
    },
    unauthenticated: {
      status: unauthenticated.response.status,
      code: unauthenticated.error?.code,
      challenge: unauthenticated.response.headers.get("www-authenticate")
    }
  }
}
`

interface ClientResult {
  readonly expiresAt: string
  readonly issued: { readonly status: number; readonly id: string; readonly state: string; readonly createdAt: string }
  readonly replayed: { readonly id?: string; readonly header: string | null }
  readonly read: { readonly id?: string; readonly reference?: string | null; readonly services?: number }
  readonly page: { readonly ids?: ReadonlyArray<string>; readonly hasMore?: boolean; readonly rateLimit: string | null }
  readonly missing: {
    readonly status: number
    readonly code?: string
    readonly message?: string
    readonly requestId: string | null
  }
  readonly unauthenticated: { readonly status: number; readonly code?: string; readonly challenge: string | null }
}

interface ClientModule {
  readonly run: (baseUrl: string, email: string, password: string, taxId: string) => Promise<ClientResult>
}

/** Strict type-check of the client against the generated types, as `tsc --noEmit --strict` would. */
const typeErrors = (file: string): ReadonlyArray<string> => {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    noUnusedLocals: true,
    exactOptionalPropertyTypes: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
    types: [],
    skipLibCheck: true
  })
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined
    return `${d.file?.fileName ?? ""}:${where ? where.line + 1 : ""} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`
  })
}

/**
 * The served document, over a connection closed after the answer. The strict type-check below holds
 * this process's event loop (and so the server's) for seconds: a kept-alive socket from a pooled
 * `fetch` would then be closed by the server's keep-alive timer just as the client reuses it (ECONNRESET).
 */
const servedDocument = (url: string) =>
  new Promise<string>((resolve, reject) => {
    get(`${url}/openapi.json`, { agent: false, headers: { connection: "close" } }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () =>
        response.statusCode === 200
          ? resolve(Buffer.concat(chunks).toString("utf8"))
          : reject(new Error(`GET /openapi.json: ${response.statusCode}`)))
      response.on("error", reject)
    }).on("error", reject)
  })

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

layer(app, { timeout: 120_000, excludeTestServices: true })("a client generated from the served OpenAPI document", (it) => {
  it.effect("type-checks strictly and round-trips over HTTP with typed bodies and errors", () =>
    Effect.gen(function*() {
      const url = yield* baseUrl
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "etd-openapi-client-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      // An ES module package of its own that resolves openapi-fetch from this repository.
      writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }))
      symlinkSync(fileURLToPath(new URL("../../node_modules", import.meta.url)), join(dir, "node_modules"), "dir")

      const types = yield* Effect.promise(async () => astToString(await openapiTS(await servedDocument(url))))
      writeFileSync(join(dir, "schema.d.ts"), types)
      writeFileSync(join(dir, "client.ts"), clientSource)
      expect(typeErrors(join(dir, "client.ts"))).toEqual([])

      const compiled = ts.transpileModule(clientSource, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 }
      })
      writeFileSync(join(dir, "client.js"), compiled.outputText)
      const client = yield* Effect.promise(() => import(pathToFileURL(join(dir, "client.js")).href) as Promise<ClientModule>)
      const result = yield* Effect.promise(() => client.run(url, uniqueEmail("openapi"), PASSWORD, cnpj()))

      expect(result.expiresAt).toMatch(ISO_TIMESTAMP)
      expect(result.issued).toMatchObject({ status: 202, state: "queued" })
      expect(result.issued.id).toMatch(/^doc_/)
      expect(result.issued.createdAt).toMatch(ISO_TIMESTAMP)
      expect(result.replayed).toEqual({ id: result.issued.id, header: "true" })
      expect(result.read).toEqual({ id: result.issued.id, reference: "contract-1", services: 150000 })
      expect(result.page.ids).toEqual([result.issued.id])
      expect(result.page.hasMore).toBe(false)
      expect(Number(result.page.rateLimit)).toBeGreaterThan(0)
      expect(result.missing).toMatchObject({ status: 404, code: "not_found" })
      expect(typeof result.missing.message).toBe("string")
      expect(result.missing.requestId).toMatch(/^[0-9a-f]{32}/)
      expect(result.unauthenticated).toMatchObject({ status: 401, code: "missing_credentials" })
      expect(result.unauthenticated.challenge).toMatch(/^Bearer /)
    }).pipe(Effect.scoped), 90_000)
})
