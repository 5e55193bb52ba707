import { expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { PASSWORD, registerOwner, uniqueEmail } from "../support/fixtures.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

for (const database of testDatabases) {
  layer(makeTestApp(database), { timeout: 60_000, excludeTestServices: true })(
    `users and sessions (${database})`,
    (it) => {
      it.effect("registers a user with a tenant and logs in", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const api = yield* client(owner.session)
          const me = yield* api.auth.me()
          expect(me.id).toBe(owner.userId)
          const mine = yield* api.auth.myTenants({ query: { limit: 20 } })
          expect(mine.data.map((m) => [m.tenant.id, m.role])).toEqual([[owner.tenantId, "owner"]])
        }))

      it.effect("refuses a taken email with 409 conflict, case-insensitively", () =>
        Effect.gen(function*() {
          const email = uniqueEmail()
          const api = yield* client()
          yield* api.auth.register({ payload: { email, password: Redacted.make(PASSWORD) } })
          const error = yield* Effect.flip(
            api.auth.register({ payload: { email: email.toUpperCase(), password: Redacted.make(PASSWORD) } })
          )
          expect(error._tag).toBe("Conflict")
          // The taken field is named, so a page can say which one.
          expect(error._tag === "Conflict" && error.issues).toEqual([{
            path: ["email"],
            message: "is already registered"
          }])
        }))

      it.effect("answers a wrong password and an unknown email the same way", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const api = yield* client()
          const wrong = yield* Effect.flip(
            api.auth.login({ payload: { email: owner.email, password: Redacted.make("not the password!") } })
          )
          const unknown = yield* Effect.flip(
            api.auth.login({ payload: { email: uniqueEmail(), password: Redacted.make(PASSWORD) } })
          )
          expect(wrong).toEqual(unknown)
          expect(wrong._tag).toBe("InvalidCredentials")
        }))

      it.effect("logout revokes the session for the very next request", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const api = yield* client(owner.session)
          yield* api.auth.logout()
          const error = yield* Effect.flip(api.auth.me())
          expect(error._tag).toBe("InvalidSession")
        }))

      it.effect("never echoes a password in a validation error", () =>
        Effect.gen(function*() {
          const secret = "x".repeat(1100)
          for (const path of ["/v1/auth/register", "/v1/auth/login"]) {
            const response = yield* rawRequest("POST", path, { body: { email: uniqueEmail(), password: secret } })
            expect(response.status).toBe(400)
            expect(response.text).not.toContain("xxxxxxxxxxxx")
          }
        }))

      it.effect("a tax id no tenant has proven may be named by another registration (SPEC §5)", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const api = yield* client(owner.session)
          const tenant = yield* api.tenants.get({ params: { tenantId: owner.tenantId } })
          const response = yield* rawRequest("POST", "/v1/auth/register", {
            body: { email: uniqueEmail(), password: PASSWORD, tenant: { name: "Same Ltda", tax_id: tenant.tax_id } }
          })
          expect(response.status, response.text).toBe(201)
          expect(response.json?.["tenant"]).toMatchObject({ tax_id: tenant.tax_id, verified: false })
          // A proven tax id is refused: test/tenants/TaxIdOwnership.test.ts.
        }))

      it.effect("rejects an invalid tax id with 400 invalid_request naming the field", () =>
        Effect.gen(function*() {
          // Raw request: the typed client would refuse to send an invalid tax id at all.
          const response = yield* rawRequest("POST", "/v1/auth/register", {
            body: { email: uniqueEmail(), password: PASSWORD, tenant: { name: "X", tax_id: "11.222.333/0001-82" } }
          })
          expect(response.status).toBe(400)
          expect(response.json?.["code"]).toBe("invalid_request")
          expect(response.json?.["issues"]).toEqual([
            { path: ["tenant", "tax_id"], message: expect.stringContaining("check digits") }
          ])
        }))
    }
  )
}
