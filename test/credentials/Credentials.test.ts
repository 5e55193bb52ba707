/**
 * Credentials over HTTP (SPEC §8): upload as multipart and as JSON, every refusal with its status
 * and code, replacement of the previous credential, reads by API key with `credentials:read`, and
 * the proof that the certificate's content and its password leave no trace in responses, log
 * lines, span attributes or the database (other than as ciphertext).
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Redacted, Tracer } from "effect"
import { SqlClient } from "effect/sql"
import { createPrivateKey, randomBytes } from "node:crypto"
import { vi } from "vitest"
import { CredentialVault } from "../../src/credentials/CredentialVault.js"
import { addMember, expectError, field } from "../support/accounts.js"
import { makePkcs12, type MakePkcs12Options, reexportWithIterations } from "../support/certificates.js"
import { cnpj, createKey, registerOwner } from "../support/fixtures.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

const DAY = 86_400_000
const password = () => `pfx-pass-${randomBytes(8).toString("hex")}`

/** A registered owner whose tenant's CNPJ is known, for certificates issued to it. */
const tenantWithTaxId = Effect.gen(function*() {
  const owner = yield* registerOwner("cred")
  const tenant = yield* (yield* client(owner.session)).tenants.get({ params: { tenantId: owner.tenantId } })
  return { ...owner, taxId: tenant.tax_id }
})

const certificateFor = (taxId: string, options: Partial<MakePkcs12Options> = {}) => {
  const pass = options.password ?? password()
  return { pass, p12: makePkcs12({ cn: `EMPRESA TESTE LTDA:${taxId}`, cnpjOid: taxId, password: pass, ...options }) }
}

const formOf = (pfx: Uint8Array, pass: string) => {
  const form = new FormData()
  form.append("file", new Blob([pfx], { type: "application/x-pkcs12" }), "certificate.pfx")
  form.append("password", pass)
  return form
}

const upload = (session: string, tenantId: string, body: unknown) =>
  rawRequest("POST", `/v1/tenants/${tenantId}/credentials`, { token: session, body })

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

// Spans of the app under test, with every attribute and event set on them.
const recordedSpans: Array<{ name: string; attributes: Array<[string, unknown]>; events: Array<unknown> }> = []
const RecordingTracer = Layer.effect(
  Tracer.Tracer,
  Effect.map(Effect.tracer, (base) =>
    Tracer.make({
      context: base.context,
      span: (options) => {
        const span = base.span(options)
        const record = { name: span.name, attributes: [] as Array<[string, unknown]>, events: [] as Array<unknown> }
        recordedSpans.push(record)
        const attribute = span.attribute.bind(span)
        const event = span.event.bind(span)
        span.attribute = (key, value) => {
          record.attributes.push([key, value])
          attribute(key, value)
        }
        span.event = (name, startTime, attributes) => {
          record.events.push([name, attributes])
          event(name, startTime, attributes)
        }
        for (const entry of span.attributes) record.attributes.push(entry)
        return span
      }
    }))
)

for (const database of testDatabases) {
  layer(makeTestApp(database).pipe(Layer.provide(RecordingTracer)), { timeout: 120_000, excludeTestServices: true })(
    `credentials (${database})`,
    (it) => {
      it.effect("uploads as multipart/form-data and answers the metadata", () =>
        Effect.gen(function*() {
          const owner = yield* tenantWithTaxId
          const { p12, pass } = certificateFor(owner.taxId)
          const api = yield* client(owner.session)
          const credential = yield* api.credentials.upload({
            params: { tenantId: owner.tenantId },
            payload: formOf(p12.pfx, pass)
          })
          expect(credential).toMatchObject({
            object: "credential",
            kind: "a1_certificate",
            status: "active",
            tax_id: owner.taxId,
            serial_number: p12.serialNumber,
            fingerprint_sha256: p12.fingerprintSha256,
            subject: p12.subject,
            issuer: p12.issuer
          })
          expect(credential.id).toMatch(/^crd_[0-9a-hjkmnp-tv-z]{26}$/)
          expect(credential.not_after.getTime()).toBeGreaterThan(Date.now() + 300 * DAY)
        }))

      it.effect("uploads as JSON with base64; a new upload replaces the active credential", () =>
        Effect.gen(function*() {
          const owner = yield* tenantWithTaxId
          const first = certificateFor(owner.taxId)
          const second = certificateFor(owner.taxId, { freshKey: true })
          const api = yield* client(owner.session)
          const a = yield* api.credentials.upload({
            params: { tenantId: owner.tenantId },
            payload: { pkcs12: base64(first.p12.pfx), password: Redacted.make(first.pass) }
          })
          const raw = yield* upload(owner.session, owner.tenantId, {
            pkcs12: base64(second.p12.pfx),
            password: second.pass
          })
          expect(raw.status, raw.text).toBe(201)
          const b = field(raw.json, "id")

          const reader = yield* client((yield* createKey(owner, "live", ["credentials:read"])).token)
          const list = yield* reader.credentials.list({ params: { tenantId: owner.tenantId }, query: { limit: 20 } })
          expect(list.data.map((c) => [c.id, c.status])).toEqual([[b, "active"], [a.id, "replaced"]])
          const one = yield* reader.credentials.get({ params: { tenantId: owner.tenantId, credId: a.id } })
          expect(one.status).toBe("replaced")
          expect(one.fingerprint_sha256).toBe(first.p12.fingerprintSha256)
          // Only the newest is handed to the authority layers.
          const vault = yield* CredentialVault
          expect((yield* vault.activeFor(owner.tenantId)).credentialId).toBe(b)
        }))

      it.effect("refuses a wrong password with 422 certificate_password_incorrect", () =>
        Effect.gen(function*() {
          const owner = yield* tenantWithTaxId
          const { p12 } = certificateFor(owner.taxId)
          const api = yield* client(owner.session)
          const error = yield* Effect.flip(
            api.credentials.upload({
              params: { tenantId: owner.tenantId },
              payload: formOf(p12.pfx, "not the password")
            })
          )
          expect(error._tag).toBe("CertificatePasswordIncorrect")
          expectError(
            yield* upload(owner.session, owner.tenantId, { pkcs12: base64(p12.pfx), password: "nope" }),
            422,
            "certificate_password_incorrect"
          )
        }))

      it.effect("refuses expired, not yet valid and other-CNPJ certificates with 422 and distinct codes", () =>
        Effect.gen(function*() {
          const owner = yield* tenantWithTaxId
          const expired = certificateFor(owner.taxId, { notBefore: new Date(Date.now() - 400 * DAY), days: 365 })
          const future = certificateFor(owner.taxId, { notBefore: new Date(Date.now() + 10 * DAY) })
          const other = certificateFor(cnpj())
          const noCnpj = (() => {
            const pass = password()
            return { pass, p12: makePkcs12({ cn: "SEM CNPJ", password: pass }) }
          })()
          for (
            const [cert, code] of [
              [expired, "certificate_expired"],
              [future, "certificate_not_yet_valid"],
              [other, "certificate_tax_id_mismatch"],
              [noCnpj, "certificate_tax_id_mismatch"]
            ] as const
          ) {
            expectError(
              yield* upload(owner.session, owner.tenantId, { pkcs12: base64(cert.p12.pfx), password: cert.pass }),
              422,
              code
            )
          }
        }))

      it.effect("refuses what is not a PKCS#12 with 422 invalid_certificate and malformed input with 400", () =>
        Effect.gen(function*() {
          const owner = yield* tenantWithTaxId
          expectError(
            yield* upload(owner.session, owner.tenantId, { pkcs12: base64(randomBytes(300)), password: "x" }),
            422,
            "invalid_certificate"
          )
          expectError(
            yield* upload(owner.session, owner.tenantId, { pkcs12: "not base64 at all!", password: "x" }),
            400,
            "invalid_request"
          )
          expectError(
            yield* upload(owner.session, owner.tenantId, { pkcs12: base64(randomBytes(30)) }),
            400,
            "invalid_request"
          )
          expectError(yield* upload(owner.session, owner.tenantId, {}), 400, "invalid_request")
          const api = yield* client(owner.session)
          const form = new FormData()
          form.append("password", "only a password")
          const error = yield* Effect.flip(
            api.credentials.upload({ params: { tenantId: owner.tenantId }, payload: form })
          )
          expect(error._tag).toBe("InvalidRequest")
        }))

      it.effect("limits the file to 64 KiB (413) and refuses absurd key-derivation iteration counts (422)", () =>
        Effect.gen(function*() {
          const owner = yield* tenantWithTaxId
          const big = randomBytes(64 * 1024 + 1)
          expectError(
            yield* upload(owner.session, owner.tenantId, { pkcs12: base64(big), password: "x" }),
            413,
            "payload_too_large"
          )
          const api = yield* client(owner.session)
          const error = yield* Effect.flip(
            api.credentials.upload({ params: { tenantId: owner.tenantId }, payload: formOf(big, "x") })
          )
          expect(error, JSON.stringify(error)).toMatchObject({ _tag: "PayloadTooLarge" })

          const { p12, pass } = certificateFor(owner.taxId)
          const slow = reexportWithIterations(p12, pass, 150_000)
          const refused = yield* upload(owner.session, owner.tenantId, { pkcs12: base64(slow), password: pass })
          expectError(refused, 422, "invalid_certificate")
          expect(field(refused.json, "message")).toContain("iterations")
          // A normal count is accepted.
          const fine = yield* upload(owner.session, owner.tenantId, {
            pkcs12: base64(reexportWithIterations(p12, pass, 10_000)),
            password: pass
          })
          expect(fine.status, fine.text).toBe(201)
        }))

      it.effect("upload needs an owner's or admin's session; reads need a key with credentials:read or a member's session", () =>
        Effect.gen(function*() {
          const owner = yield* tenantWithTaxId
          const { p12, pass } = certificateFor(owner.taxId)
          const body = { pkcs12: base64(p12.pfx), password: pass }
          const developer = yield* addMember(owner, "developer")
          expectError(yield* upload(developer.session, owner.tenantId, body), 403, "forbidden")
          const admin = yield* addMember(owner, "admin")
          const created = yield* upload(admin.session, owner.tenantId, body)
          expect(created.status, created.text).toBe(201)
          const id = String(field(created.json, "id"))

          const allButRead = yield* createKey(owner, "live", ["documents:read", "webhooks:read"])
          expectError(yield* upload(allButRead.token, owner.tenantId, body), 401, "invalid_session")
          const listUrl = `/v1/tenants/${owner.tenantId}/credentials`
          const denied = yield* rawRequest("GET", listUrl, { token: allButRead.token })
          expectError(denied, 403, "insufficient_scope")
          expect(field(denied.json, "required_scope")).toBe("credentials:read")
          // SPEC §8: any member's session reads the metadata, developers included; a stranger's is 404.
          for (const member of [owner, admin, developer]) {
            const listed = yield* rawRequest("GET", listUrl, { token: member.session })
            expect(listed.status, listed.text).toBe(200)
            expect((listed.json?.["data"] as Array<unknown>).map((c) => field(c, "id"))).toEqual([id])
            const one = yield* rawRequest("GET", `${listUrl}/${id}`, { token: member.session })
            expect(one.status, one.text).toBe(200)
            expect(field(one.json, "fingerprint_sha256")).toBe(field(created.json, "fingerprint_sha256"))
          }
          const typed = yield* client(developer.session)
          expect((yield* typed.credentials.get({ params: { tenantId: owner.tenantId, credId: id } })).id).toBe(id)

          const other = yield* registerOwner("other")
          expectError(yield* rawRequest("GET", listUrl, { token: other.session }), 404, "not_found")
          expectError(yield* rawRequest("GET", `${listUrl}/${id}`, { token: other.session }), 404, "not_found")
          const foreign = yield* createKey(other, "live", ["credentials:read"])
          expectError(yield* rawRequest("GET", listUrl, { token: foreign.token }), 404, "not_found")
          expectError(yield* rawRequest("GET", `${listUrl}/${id}`, { token: foreign.token }), 404, "not_found")
          expectError(
            yield* rawRequest("GET", `/v1/tenants/${other.tenantId}/credentials/${id}`, { token: foreign.token }),
            404,
            "not_found"
          )
          const reader = yield* createKey(owner, "test", ["credentials:read"])
          expectError(
            yield* rawRequest("GET", `${listUrl}/crd_${"0".repeat(26)}`, { token: reader.token }),
            404,
            "not_found"
          )
          const one = yield* rawRequest("GET", `${listUrl}/${id}`, { token: reader.token })
          expect(one.status).toBe(200)
        }))

      it.effect("the content and the password appear in no response, log line, span attribute, nor in clear in the database", () =>
        Effect.gen(function*() {
          const lines: Array<string> = []
          const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
            lines.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"))
            return true
          })
          recordedSpans.length = 0
          const owner = yield* tenantWithTaxId
          const { p12, pass } = certificateFor(owner.taxId)
          const key = yield* createKey(owner, "live", ["credentials:read"])
          const responses: Array<string> = []
          const api = yield* client(owner.session)
          try {
            // Refusals first (they log and fail spans), then successes in both encodings.
            responses.push(
              (yield* upload(owner.session, owner.tenantId, { pkcs12: base64(p12.pfx), password: `${pass}-wrong` }))
                .text
            )
            const other = certificateFor(cnpj(), { password: pass })
            responses.push(
              (yield* upload(owner.session, owner.tenantId, { pkcs12: base64(other.p12.pfx), password: pass })).text
            )
            responses.push(
              (yield* upload(owner.session, owner.tenantId, { pkcs12: base64(p12.pfx), password: pass })).text
            )
            const viaForm = yield* api.credentials.upload({
              params: { tenantId: owner.tenantId },
              payload: formOf(p12.pfx, pass)
            })
            responses.push(JSON.stringify(viaForm))
            const list = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}/credentials`, { token: key.token })
            responses.push(list.text)
            responses.push(
              (yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}/credentials/${viaForm.id}`, {
                token: key.token
              })).text
            )
            // The vault hands the key material over, in memory only.
            const material = yield* (yield* CredentialVault).activeFor(owner.tenantId)
            const der = (pem: string) => createPrivateKey(pem).export({ type: "pkcs8", format: "der" })
            expect(der(Redacted.value(material.privateKeyPem)).equals(der(p12.privateKeyPem))).toBe(true)
            expect(String(material.privateKeyPem)).not.toContain("PRIVATE KEY")
          } finally {
            // The logger writes its lines once per turn of the event loop: let the last turn's out.
            yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
            spy.mockRestore()
          }
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ json: string }>`
            SELECT row_to_json(c)::text AS json FROM credentials c WHERE tenant_id = ${owner.tenantId}`
          expect(rows).toHaveLength(2)

          const pemBody = (pem: string) => pem.split("\n").filter((line) => line.length === 64)
          const secrets = [
            pass,
            base64(p12.pfx).slice(0, 64),
            base64(p12.pfx).slice(-64, -4),
            Buffer.from(p12.pfx).toString("base64url").slice(100, 164),
            ...pemBody(p12.privateKeyPem),
            ...pemBody(p12.certificatePem),
            "PRIVATE KEY"
          ]
          const places = {
            responses: responses.join("\n"),
            logs: lines.join(""),
            spans: JSON.stringify(recordedSpans),
            database: rows.map((row) => row.json).join("\n")
          }
          expect(places.logs).toContain("credential uploaded")
          expect(places.spans).toContain("CredentialService.upload")
          expect(places.database).toContain("\"envelope\":\"v1:")
          for (const [place, text] of Object.entries(places)) {
            for (const secret of secrets) {
              expect(text.includes(secret), `${place} contains ${secret.slice(0, 12)}…`).toBe(false)
            }
          }
        }))
    }
  )
}
