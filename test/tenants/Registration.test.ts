/**
 * The provider's registration on the tenant (SPEC §5): who edits and reads it, how an update merges,
 * what is refused with `400 invalid_request` on our own field names, the contract's example, and the
 * `422 registration_incomplete` a document gets when the tenant lacks what a service invoice needs,
 * with nothing taken (number, quota, Idempotency-Key).
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { addMember, expectError, field } from "../support/accounts.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { completeRegistration } from "../support/registration.js"
import { makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

const tenantUrl = (tenantId: string) => `/v1/tenants/${tenantId}`

const invoice = {
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria da Silva" },
  service: { code: "010101", nbs_code: "115013000", description: "Consultoria", municipality_code: "3304557" },
  amounts: { services: 100_000, iss_rate: "2.00" }
}

const pathsOf = (json: unknown): Array<string> =>
  (field(json, "issues") as Array<{ path: Array<string> }>).map((issue) => issue.path.join("."))

for (const database of testDatabases) {
  const app = makeTestApp(database, { loginRateLimit: { perMinute: 10_000 } })

  layer(app, { timeout: 90_000, excludeTestServices: true })(`the provider's registration (${database})`, (it) => {
    it.effect("the contract's example on the update is accepted as it is, and the tenant shows it back", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("example")
        const document = yield* rawRequest("GET", "/openapi.json")
        const schemas = field(field(document.json, "components"), "schemas") as Record<string, { examples?: unknown }>
        const examples = schemas["TenantChanges"]?.examples as ReadonlyArray<Record<string, unknown>>
        expect(examples.length).toBeGreaterThan(0)
        for (const example of examples) {
          const updated = yield* rawRequest("PATCH", tenantUrl(owner.tenantId), { token: owner.session, body: example })
          expect(updated.status, updated.text).toBe(200)
          expect(field(updated.json, "registration")).toEqual(example["registration"])
        }
      }))

    it.effect("owners and admins edit it; developers and keys read it; a developer's edit is 403 and changes nothing", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("roles")
        const admin = yield* addMember(owner, "admin")
        const developer = yield* addMember(owner, "developer")
        const byAdmin = yield* rawRequest("PATCH", tenantUrl(owner.tenantId), {
          token: admin.session,
          body: { registration: { municipal_registration: "51034401", special_regime: "professional_society" } }
        })
        expect(byAdmin.status, byAdmin.text).toBe(200)
        const refused = yield* rawRequest("PATCH", tenantUrl(owner.tenantId), {
          token: developer.session,
          body: { registration: { legal_name: "Outra Empresa Ltda" } }
        })
        expectError(refused, 403, "forbidden")
        const expected = {
          ...completeRegistration,
          municipal_registration: "51034401",
          special_regime: "professional_society"
        }
        const asDeveloper = yield* rawRequest("GET", tenantUrl(owner.tenantId), { token: developer.session })
        expect(field(asDeveloper.json, "registration")).toEqual(expected)
        const key = yield* createKey(owner, "test", ["documents:read"])
        const asKey = yield* rawRequest("GET", tenantUrl(owner.tenantId), { token: key.token })
        expect(asKey.status, asKey.text).toBe(200)
        expect(field(asKey.json, "registration")).toEqual(expected)
        const keyEdit = yield* rawRequest("PATCH", tenantUrl(owner.tenantId), {
          token: key.token,
          body: { registration: { legal_name: "Outra Empresa Ltda" } }
        })
        expect(keyEdit.status).toBe(401)
      }))

    it.effect("an update replaces the fields it names (null clears one), keeps the others, and the address whole", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("merge")
        const updated = yield* rawRequest("PATCH", tenantUrl(owner.tenantId), {
          token: owner.session,
          body: {
            registration: {
              phone: "(21) 2222-3333",
              email: null,
              address: {
                street: "Rua da Assembleia",
                number: "10",
                district: "Centro",
                municipality_code: "3304557",
                state: "RJ",
                postal_code: "20011-000"
              }
            }
          }
        })
        expect(updated.status, updated.text).toBe(200)
        expect(field(updated.json, "registration")).toEqual({
          ...completeRegistration,
          phone: "2122223333",
          email: null,
          address: {
            street: "Rua da Assembleia",
            number: "10",
            complement: null,
            district: "Centro",
            municipality_code: "3304557",
            state: "RJ",
            postal_code: "20011000"
          }
        })
        // The name and the Simples option are untouched by a registration update, and the other way round.
        const name = yield* rawRequest("PATCH", tenantUrl(owner.tenantId), {
          token: owner.session,
          body: { name: "X" }
        })
        expect(field(field(name.json, "registration"), "phone")).toBe("2122223333")
      }))

    it.effect("each field is checked: 400 invalid_request naming it, and nothing is stored", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("checks")
        const address = completeRegistration.address!
        const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
          ["empty legal name", { legal_name: "  " }, "registration.legal_name"],
          ["legal name with a control character", { legal_name: "Acme\u0007 Ltda" }, "registration.legal_name"],
          ["trade name over 150", { trade_name: "x".repeat(151) }, "registration.trade_name"],
          [
            "IM over 15 (TSInscMun)",
            { municipal_registration: "1234567890123456" },
            "registration.municipal_registration"
          ],
          ["phone with 5 digits", { phone: "12345" }, "registration.phone"],
          ["phone with letters", { phone: "11 3333-CASA" }, "registration.phone"],
          ["e-mail", { email: "not-an-address" }, "registration.email"],
          ["e-mail over 80", { email: `${"a".repeat(80)}@example.com` }, "registration.email"],
          ["apportionment", { simples_nacional_apportionment: "4" }, "registration.simples_nacional_apportionment"],
          ["special regime", { special_regime: "7" }, "registration.special_regime"],
          ["CRT", { crt: "3" }, "registration.crt"],
          [
            "IBGE code of 6 digits",
            { address: { ...address, municipality_code: "355030" } },
            "registration.address.municipality_code"
          ],
          [
            "unknown state prefix",
            { address: { ...address, municipality_code: "9950308" } },
            "registration.address.municipality_code"
          ],
          ["unknown UF", { address: { ...address, state: "XX" } }, "registration.address.state"],
          ["UF of another state", { address: { ...address, state: "RJ" } }, "registration.address.state"],
          ["CEP of 7 digits", { address: { ...address, postal_code: "0131010" } }, "registration.address.postal_code"],
          [
            "address without its district",
            { address: { ...address, district: undefined } },
            "registration.address.district"
          ],
          ["a legal name that is not text", { legal_name: 42 }, "registration.legal_name"]
        ]
        for (const [label, registration, path] of cases) {
          const response = yield* rawRequest("PATCH", tenantUrl(owner.tenantId), {
            token: owner.session,
            body: { registration }
          })
          expectError(response, 400, "invalid_request")
          expect(pathsOf(response.json), label).toContain(path)
        }
        const after = yield* rawRequest("GET", tenantUrl(owner.tenantId), { token: owner.session })
        expect(field(after.json, "registration")).toEqual(completeRegistration)
      }))

    it.effect("a document needs the legal name and the address: 422 registration_incomplete naming them, nothing taken", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("incomplete")
        const cleared = yield* rawRequest("PATCH", tenantUrl(owner.tenantId), {
          token: owner.session,
          body: { registration: { legal_name: null, address: null } }
        })
        expect(cleared.status, cleared.text).toBe(200)
        const live = yield* createKey(owner, "live")
        const test = yield* createKey(owner, "test")
        for (const key of [live, test]) {
          const refused = yield* rawRequest("POST", "/v1/documents", {
            token: key.token,
            body: invoice,
            headers: { "idempotency-key": `order-${key.api_key.environment}` }
          })
          expectError(refused, 422, "registration_incomplete")
          expect(pathsOf(refused.json)).toEqual([
            "registration.legal_name",
            "registration.address.street",
            "registration.address.number",
            "registration.address.district",
            "registration.address.municipality_code",
            "registration.address.state",
            "registration.address.postal_code"
          ])
        }
        const tenant = yield* rawRequest("GET", tenantUrl(owner.tenantId), { token: owner.session })
        expect(field(field(tenant.json, "quota"), "used")).toBe(0)

        // Only the name missing: only the name named.
        yield* rawRequest("PATCH", tenantUrl(owner.tenantId), {
          token: owner.session,
          body: { registration: { address: completeRegistration.address } }
        })
        const nameOnly = yield* rawRequest("POST", "/v1/documents", { token: test.token, body: invoice })
        expectError(nameOnly, 422, "registration_incomplete")
        expect(pathsOf(nameOnly.json)).toEqual(["registration.legal_name"])

        // Completed, the same requests (the same Idempotency-Keys) are accepted, numbered from 1.
        yield* rawRequest("PATCH", tenantUrl(owner.tenantId), {
          token: owner.session,
          body: { registration: { legal_name: "Empresa Completa Ltda" } }
        })
        for (const key of [live, test]) {
          const accepted = yield* rawRequest("POST", "/v1/documents", {
            token: key.token,
            body: invoice,
            headers: { "idempotency-key": `order-${key.api_key.environment}` }
          })
          expect(accepted.status, accepted.text).toBe(202)
          expect(field(accepted.json, "number")).toBe(1)
        }
        const used = yield* rawRequest("GET", tenantUrl(owner.tenantId), { token: owner.session })
        expect(field(field(used.json, "quota"), "used")).toBe(1)
      }))

    it.effect("service.nbs_code is required in every environment: 400 naming it, on the simulator too", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("nbs")
        const { nbs_code: _, ...service } = invoice.service
        for (const environment of ["test", "live"] as const) {
          const key = yield* createKey(owner, environment)
          const refused = yield* rawRequest("POST", "/v1/documents", {
            token: key.token,
            body: { ...invoice, service }
          })
          expectError(refused, 400, "invalid_request")
          expect(pathsOf(refused.json)).toContain("service.nbs_code")
        }
      }))
  })
}
