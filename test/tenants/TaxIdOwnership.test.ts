/**
 * Tax id ownership over HTTP (SPEC §5, §8): several tenants may name one tax id until one proves
 * it with a certificate issued to it; that tenant is `verified` and holds the tax id alone (no new
 * registration with it, no certificate of it for another tenant, no live documents for the
 * others). Tenants that share a tax id meanwhile never meet at the authority simulator.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { expectError, field } from "../support/accounts.js"
import { makePkcs12, type TestPkcs12 } from "../support/certificates.js"
import { cnpj, createKey, markEmailVerified, PASSWORD, uniqueEmail } from "../support/fixtures.js"
import { completeRegistration } from "../support/registration.js"
import { consultingService } from "../support/samples.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

const PFX_PASSWORD = "ownership-test-pass"

/** `11.222.333/0001-81` for `11222333000181`: how a client may type the same tax id. */
const formatted = (taxId: string) =>
  `${taxId.slice(0, 2)}.${taxId.slice(2, 5)}.${taxId.slice(5, 8)}/${taxId.slice(8, 12)}-${taxId.slice(12)}`

const register = (email: string, taxId: string) =>
  rawRequest("POST", "/v1/auth/register", {
    body: { email, password: PASSWORD, name: "owner", tenant: { name: "Empresa Ltda", tax_id: taxId } }
  })

/** A new owner and tenant that names `taxId`, logged in. */
const tenantNaming = (taxId: string) =>
  Effect.gen(function*() {
    const email = uniqueEmail("taxid")
    const registration = yield* register(email, taxId)
    expect(registration.status, registration.text).toBe(201)
    yield* markEmailVerified(String(field(field(registration.json, "user"), "id")))
    const login = yield* (yield* client()).auth.login({ payload: { email, password: Redacted.make(PASSWORD) } })
    const tenantId = String(field(field(registration.json, "tenant"), "id"))
    yield* (yield* client(login.token)).tenants.update({
      params: { tenantId },
      payload: { registration: completeRegistration }
    })
    return { tenantId, session: login.token }
  })

type Tenant = Effect.Success<ReturnType<typeof tenantNaming>>

/**
 * A certificate issued to `taxId`, as ICP-Brasil issues them (CNPJ in the SAN and after the CN's
 * colon). Made before a test's first request: openssl blocks the event loop, and a pooled
 * connection left idle past the server's keep-alive timeout meanwhile can be reset when reused.
 */
const certificateOf = (taxId: string): TestPkcs12 =>
  makePkcs12({ cn: `EMPRESA LTDA:${taxId}`, cnpjOid: taxId, password: PFX_PASSWORD })

const upload = (tenant: Tenant, p12: TestPkcs12) =>
  rawRequest("POST", `/v1/tenants/${tenant.tenantId}/credentials`, {
    token: tenant.session,
    body: { pkcs12: Buffer.from(p12.pfx).toString("base64"), password: PFX_PASSWORD }
  })

const verifiedOf = (tenant: Tenant) =>
  Effect.map(
    rawRequest("GET", `/v1/tenants/${tenant.tenantId}`, { token: tenant.session }),
    (response) => field(response.json, "verified")
  )

const invoice = (notes?: string) => ({
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria da Silva" },
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" },
  ...(notes === undefined ? {} : { notes })
})

const issue = (token: string, idempotencyKey?: string) =>
  rawRequest("POST", "/v1/documents", {
    token,
    body: invoice(),
    headers: idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }
  })

/** Polls the document until the authority has answered, bounded at 400 × 25 ms. */
const settled = (token: string, id: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 400; i++) {
      const response = yield* rawRequest("GET", `/v1/documents/${id}`, { token })
      const status = field(response.json, "status")
      if (status !== "queued" && status !== "submitting") return response.json
      yield* Effect.sleep(Duration.millis(25))
    }
    return yield* Effect.die(new Error(`document ${id} did not settle`))
  })

const fast = {
  loginRateLimit: { perMinute: 100_000 },
  rateLimit: { perSecond: 100_000, burst: 100_000 },
  queue: { instanceId: "ownership", shutdownGrace: Duration.seconds(1) },
  issuance: { concurrency: 4, pollInterval: Duration.millis(20), lease: Duration.seconds(60) }
}

for (const database of testDatabases) {
  layer(makeTestApp(database, fast), { timeout: 120_000, excludeTestServices: true })(
    `tax id ownership (${database})`,
    (it) => {
      it.effect("tenants may share a tax id until one proves it; then it is that tenant's alone (409 conflict)", () =>
        Effect.gen(function*() {
          const taxId = cnpj()
          const p12 = certificateOf(taxId)
          const renewal = certificateOf(taxId)
          const holder = yield* tenantNaming(taxId)
          // The same tax id, typed with punctuation.
          const other = yield* tenantNaming(formatted(taxId))
          expect(yield* verifiedOf(holder)).toBe(false)
          expect(yield* verifiedOf(other)).toBe(false)

          const proven = yield* upload(holder, p12)
          expect(proven.status, proven.text).toBe(201)
          expect(yield* verifiedOf(holder)).toBe(true)
          expect(yield* verifiedOf(other)).toBe(false)
          const typed = yield* (yield* client(holder.session)).tenants.get({ params: { tenantId: holder.tenantId } })
          expect(typed.verified).toBe(true)

          // No new tenant with that tax id, however it is typed; the refused registration creates no user.
          const email = uniqueEmail("late")
          for (const typedAs of [taxId, formatted(taxId)]) {
            const refused = yield* register(email, typedAs)
            expectError(refused, 409, "conflict")
            expect(String(field(refused.json, "message"))).toContain("tax id")
            expect(field(refused.json, "issues")).toEqual([
              { path: ["tenant", "tax_id"], message: "was proven by another tenant with its certificate" }
            ])
          }
          expect((yield* register(email, cnpj())).status).toBe(201)

          // Another tenant's certificate of the same tax id is refused and not stored.
          expectError(yield* upload(other, p12), 409, "conflict")
          expect(yield* verifiedOf(other)).toBe(false)
          const reader = yield* createKey(other, "test", ["credentials:read"])
          const stored = yield* rawRequest("GET", `/v1/tenants/${other.tenantId}/credentials`, { token: reader.token })
          expect(field(stored.json, "data")).toEqual([])

          // The holder renews its certificate and stays verified.
          const renewed = yield* upload(holder, renewal)
          expect(renewed.status, renewed.text).toBe(201)
          expect(yield* verifiedOf(holder)).toBe(true)
        }))

      it.effect("a tenant whose tax id another has proven issues no live documents (422 credential_required); test ones go on", () =>
        Effect.gen(function*() {
          const taxId = cnpj()
          const p12 = certificateOf(taxId)
          const holder = yield* tenantNaming(taxId)
          const other = yield* tenantNaming(taxId)
          const otherLive = yield* createKey(other, "live", ["documents:write", "documents:read"])
          const otherTest = yield* createKey(other, "test", ["documents:write", "documents:read"])
          const holderLive = yield* createKey(holder, "live", ["documents:write", "documents:read"])

          // Before anyone has proven the tax id, both may issue live documents.
          const before = yield* issue(otherLive.token)
          expect(before.status, before.text).toBe(202)

          expect((yield* upload(holder, p12)).status).toBe(201)
          const refused = yield* issue(otherLive.token)
          expectError(refused, 422, "credential_required")
          expect(String(field(refused.json, "message"))).toContain("Test documents are unaffected")
          // The refusal is the answer an Idempotency-Key replays.
          const key = `own-${randomBytes(6).toString("hex")}`
          expectError(yield* issue(otherLive.token, key), 422, "credential_required")
          expectError(yield* issue(otherLive.token, key), 422, "credential_required")
          // A refused document takes no quota: only the one issued before counts.
          const tenant = yield* rawRequest("GET", `/v1/tenants/${other.tenantId}`, { token: other.session })
          expect(field(field(tenant.json, "quota"), "used")).toBe(1)

          const testDocument = yield* issue(otherTest.token)
          expect(testDocument.status, testDocument.text).toBe(202)
          expect(field(yield* settled(otherTest.token, String(field(testDocument.json, "id"))), "status")).toBe(
            "authorized"
          )
          const holderDocument = yield* issue(holderLive.token)
          expect(holderDocument.status, holderDocument.text).toBe(202)
        }))

      it.effect("concurrent uploads by tenants sharing a tax id: exactly one is verified, the others get 409 conflict", () =>
        Effect.gen(function*() {
          const taxId = cnpj()
          const p12 = certificateOf(taxId)
          const tenants = yield* Effect.all(Array.from({ length: 3 }, () => tenantNaming(taxId)))
          const responses = yield* Effect.all(tenants.map((tenant) => upload(tenant, p12)), {
            concurrency: "unbounded"
          })
          expect(responses.map((response) => response.status).sort(), responses.map((r) => r.text).join("\n")).toEqual([
            201,
            409,
            409
          ])
          for (const response of responses.filter((r) => r.status === 409)) expectError(response, 409, "conflict")
          const verified = yield* Effect.forEach(tenants, verifiedOf)
          expect(verified.filter((flag) => flag === true).length).toBe(1)
          expect(verified[responses.findIndex((response) => response.status === 201)]).toBe(true)
        }))

      it.effect("two unverified tenants with one tax id issue at once: every document authorized on its own", () =>
        Effect.gen(function*() {
          const taxId = cnpj()
          const first = yield* tenantNaming(taxId)
          const second = yield* tenantNaming(taxId)
          // Each tenant numbers from 1 in each environment: the two tenants' DPS ids coincide.
          const keys = yield* Effect.forEach([first, second], (tenant) =>
            Effect.all([
              createKey(tenant, "test", ["documents:write", "documents:read"]),
              createKey(tenant, "live", ["documents:write", "documents:read"])
            ]))
          const tokens = keys.flatMap(([test, live]) => [
            ...Array.from({ length: 4 }, () => test.token),
            ...Array.from({ length: 2 }, () => live.token)
          ])
          const accepted = yield* Effect.all(tokens.map((token) => issue(token)), { concurrency: "unbounded" })
          for (const response of accepted) expect(response.status, response.text).toBe(202)
          const documents = yield* Effect.all(
            accepted.map((response, i) => settled(tokens[i]!, String(field(response.json, "id")))),
            { concurrency: "unbounded" }
          )
          expect(documents.map((document) => field(document, "status"))).toEqual(tokens.map(() => "authorized"))
          // No document adopted another tenant's authorization.
          const accessKeys = documents.map((document) => field(field(document, "authority"), "access_key"))
          expect(new Set(accessKeys).size).toBe(tokens.length)
          const numbers = (from: number) =>
            documents.slice(from, from + 6).map((document) => field(document, "number")).sort()
          expect(numbers(0)).toEqual(numbers(6))
        }))
    }
  )
}
