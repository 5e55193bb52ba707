/**
 * The national NFS-e protocol end to end (issue 9, "Done when"): the service's `sefin` adapter
 * against the protocol-faithful local authority, over real mutual TLS. Test keys' documents go to
 * the local "produção restrita"; live keys stay on the simulator.
 *
 * A tenant uploads its A1 certificate, issues a document, the DPS it sent is checked by tools we
 * did not write (xmlsec1 for the signature, xmllint for the official schema), reads the NFS-e XML
 * and the DANFSe (rendered by the service from that XML, every value of it on the page), and cancels
 * it with a signed e101101 event. Around that path: a tenant without a
 * certificate is refused at acceptance, a business refusal becomes `rejected` with the authority's
 * code, and an answer lost to a timeout is reconciled through `GET /dps/{id}` without a second note.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { writePatchedSchemas } from "../../src/authority/xml/Xsd.js"
import { expectError } from "../support/accounts.js"
import { missingValues, pdfText } from "../support/DanfseText.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { Authority, certifiedTenant, nationalApp, settle } from "../support/NationalApp.js"
import { expectSchemaValid, expectSignatureValid, XMLLINT, XMLSEC1 } from "../support/OfficialXml.js"
import { bytesRequest, rawRequest, type TestDatabase, testDatabases } from "../support/TestApp.js"
import { hasTool } from "../support/tools.js"

const PDFTOTEXT = hasTool("pdftotext")

/** A binary answer that must be there, byte for byte. */
const bytesOf = (token: string, path: string) =>
  Effect.map(bytesRequest(path, token), (answer) => {
    expect(answer.status).toBe(200)
    return answer.bytes
  })

/** Short timeout so `simulate:timeout` is reconciled within the test. */
const appOn = (database: TestDatabase) =>
  nationalApp(database, { callTimeout: Duration.seconds(2), authority: { timeoutAfter: "4 seconds" } })

const invoice = (notes?: string) => ({
  type: "service_invoice",
  taker: {
    tax_id: "529.982.247-25",
    name: "Maria José da Conceição",
    email: "maria@example.com",
    address: {
      street: "Rua das Acácias",
      number: "100",
      district: "Centro",
      municipality_code: "3550308",
      state: "SP",
      postal_code: "01001000"
    }
  },
  service: {
    code: "010101",
    nbs_code: "115013000",
    description: "Análise e desenvolvimento de sistemas — sprint de novembro",
    municipality_code: "3550308"
  },
  amounts: { services: 150000, deductions: 10000, iss_rate: "2.00" },
  ...(notes === undefined ? {} : { notes })
})

const tmp = () => mkdtempSync(join(tmpdir(), "etd-sefin-"))

for (const database of testDatabases) {
  layer(appOn(database), { timeout: 300_000, excludeTestServices: true })(
    `national NFS-e through the sefin adapter (${database})`,
    (it) => {
      it.effect("issues, verifies, reads, renders and cancels a note over mutual TLS", () =>
        Effect.gen(function*() {
          const local = yield* Authority
          const { owner, p12, taxId, token } = yield* certifiedTenant("nacional")

          // The national system needs the NBS code; the API says so before anything is queued.
          const withoutNbs = invoice()
          const { nbs_code: _, ...serviceWithoutNbs } = withoutNbs.service
          const refused = yield* rawRequest("POST", "/v1/documents", {
            token,
            body: { ...withoutNbs, service: serviceWithoutNbs }
          })
          expectError(refused, 400, "invalid_request")
          expect(JSON.stringify(refused.json)).toContain("nbs_code")

          const accepted = yield* rawRequest("POST", "/v1/documents", { token, body: invoice() })
          expect(accepted.status, accepted.text).toBe(202)
          const document = yield* settle(token, String(accepted.json?.["id"]), ["authorized", "rejected", "failed"])
          expect(document.status, JSON.stringify(document.last_error ?? document.rejection)).toBe("authorized")
          const accessKey = document.authority!.access_key
          expect(accessKey).toMatch(/^[0-9]{50}$/)
          expect(document.authority!.nfse_number).toMatch(/^[0-9]+$/)

          // What went over the wire: one POST /nfse, over TLS with the tenant's certificate.
          const posts = local.received.filter((r) => r.operation === "submitDps")
          expect(posts).toHaveLength(1)
          const sent = posts[0]!
          expect(sent.clientTaxId).toBe(taxId)
          expect(sent.clientCertificatePem?.replace(/\s/g, "")).toBe(p12.certificatePem.replace(/\s/g, ""))
          const dpsXml = sent.xml!
          // The deterministic DPS id: municipality, CNPJ, series 1, number 1.
          expect(dpsXml).toContain(`<infDPS Id="DPS35503082${taxId}00001${"1".padStart(15, "0")}"`)
          expect(dpsXml).toMatch(/<Signature xmlns="http:\/\/www\.w3\.org\/2000\/09\/xmldsig#">/)

          const dir = tmp()
          writeFileSync(join(dir, "dps.xml"), dpsXml)
          writeFileSync(join(dir, "cert.pem"), p12.certificatePem)
          if (XMLSEC1) {
            // An independent XMLDSig verifier, trusting only the tenant's certificate.
            execFileSync("xmlsec1", [
              "--verify",
              "--id-attr:Id",
              "infDPS",
              "--pubkey-cert-pem",
              join(dir, "cert.pem"),
              join(dir, "dps.xml")
            ], { stdio: "pipe" })
            // And it fails once one character of the signed content changes.
            writeFileSync(join(dir, "tampered.xml"), dpsXml.replace("Maria José", "Mario José"))
            expect(() =>
              execFileSync("xmlsec1", [
                "--verify",
                "--id-attr:Id",
                "infDPS",
                "--pubkey-cert-pem",
                join(dir, "cert.pem"),
                join(dir, "tampered.xml")
              ], { stdio: "pipe" })
            ).toThrow()
          }
          if (XMLLINT) {
            const schemas = writePatchedSchemas(join(dir, "xsd"))
            execFileSync("xmllint", ["--noout", "--schema", join(schemas, "DPS_v1.01.xsd"), join(dir, "dps.xml")], {
              stdio: "pipe"
            })
          }

          // The XML file: the NFS-e exactly as the authority answered, the signed DPS inside it.
          const xml = yield* rawRequest("GET", `/v1/documents/${document.id}/xml`, { token })
          expect(xml.status).toBe(200)
          expect(xml.headers["content-type"]).toContain("application/xml")
          expect(xml.headers["content-disposition"]).toContain(`NFSe-${accessKey}.xml`)
          expect(xml.headers["etd-document-status"]).toBe("authorized")
          const authorized = local.submissions().find((s) => s.accessKey === accessKey)!
          expect(xml.text).toBe(authorized.nfseXml)
          expect(xml.text).toContain(`Id="NFS${accessKey}"`)

          // The same for a member's session, on the tenant path.
          const bySession = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}/documents/${document.id}/xml`, {
            token: owner.session
          })
          expect(bySession.status).toBe(200)
          expect(bySession.text).toBe(xml.text)

          // The DANFSe is rendered by the service from the NFS-e XML, not asked of the national DANFSe API.
          const pdf = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}/documents/${document.id}/pdf`, { token })
          expect(pdf.status).toBe(200)
          expect(pdf.headers["content-type"]).toContain("application/pdf")
          expect(pdf.text.startsWith("%PDF-")).toBe(true)
          expect(local.received.some((r) => r.operation === "getDanfse")).toBe(false)
          if (PDFTOTEXT) {
            const text = pdfText(yield* bytesOf(token, `/v1/documents/${document.id}/pdf`))
            expect(missingValues(xml.text, text)).toEqual([])
            expect(text).toContain("São Paulo - SP")
          }

          // A reason the national schema refuses (outside Latin-1) is a 400 on `reason`; the note stands.
          const emojiReason = yield* rawRequest("POST", `/v1/documents/${document.id}/cancel`, {
            token,
            body: { reason_code: "other", reason: "Cancelado a pedido do cliente 🙏" }
          })
          expectError(emojiReason, 400, "invalid_request")
          expect(emojiReason.json?.["issues"]).toContainEqual({
            path: ["reason"],
            message: expect.stringContaining("characters")
          })
          expect((yield* settle(token, document.id, ["authorized"])).cancellation).toBeNull()

          // Cancellation: the signed e101101 event, registered by the authority.
          const cancel = yield* rawRequest("POST", `/v1/documents/${document.id}/cancel`, {
            token,
            body: { reason_code: "service_not_provided", reason: "O serviço não foi prestado ao tomador." }
          })
          expect(cancel.status, cancel.text).toBe(202)
          const cancelled = yield* settle(token, document.id, ["cancelled", "authorized"])
          expect(cancelled.status, JSON.stringify(cancelled.cancellation)).toBe("cancelled")
          expect(cancelled.cancellation!.protocol).not.toBeNull()
          const event = local.received.find((r) => r.operation === "registerEvent")!
          expect(event.xml).toContain("<e101101>")
          expect(event.xml).toContain("<cMotivo>2</cMotivo>")
          if (XMLSEC1) {
            writeFileSync(join(dir, "event.xml"), event.xml!)
            execFileSync("xmlsec1", [
              "--verify",
              "--id-attr:Id",
              "infPedReg",
              "--pubkey-cert-pem",
              join(dir, "cert.pem"),
              join(dir, "event.xml")
            ], { stdio: "pipe" })
          }
          // The request as sent and the event the authority registered pass the official schemas; the
          // event's own signature is the authority's, and the request it embeds is still the tenant's.
          const registered = local.submissions().find((s) => s.accessKey === accessKey)?.cancellation
          expect(registered).toBeTruthy()
          const evento = registered!.eventXml
          expect(evento).toContain("<e101101>")
          if (XMLLINT) {
            expectSchemaValid(event.xml!, "pedRegEvento_v1.01.xsd")
            expectSchemaValid(evento, "evento_v1.01.xsd")
          }
          if (XMLSEC1) {
            expectSignatureValid(evento, { signed: "infEvento", parent: ["evento"], trust: { caPem: local.caPem } })
            expectSignatureValid(evento, {
              signed: "infPedReg",
              parent: ["evento", "infEvento", "pedRegEvento"],
              trust: { certificatePem: p12.certificatePem }
            })
          }

          // A cancelled note keeps its files, and they say it is cancelled.
          const afterXml = yield* rawRequest("GET", `/v1/documents/${document.id}/xml`, { token })
          expect(afterXml.status).toBe(200)
          expect(afterXml.headers["etd-document-status"]).toBe("cancelled")
          // The cancelled note is still the authority's signed NFS-e, with the tenant's signed DPS inside.
          expect(afterXml.text).toBe(xml.text)
          if (XMLLINT) expectSchemaValid(afterXml.text, "NFSe_v1.01.xsd")
          if (XMLSEC1) {
            expectSignatureValid(afterXml.text, { signed: "infNFSe", parent: ["NFSe"], trust: { caPem: local.caPem } })
            expectSignatureValid(afterXml.text, {
              signed: "infDPS",
              parent: ["NFSe", "infNFSe", "DPS"],
              trust: { certificatePem: p12.certificatePem }
            })
          }
          if (PDFTOTEXT) {
            const afterPdf = pdfText(yield* bytesOf(token, `/v1/documents/${document.id}/pdf`))
            expect(afterPdf).toContain("NFS-e CANCELADA")
            expect(missingValues(xml.text, afterPdf)).toEqual([])
          }
        }))

      it.effect("a tenant without a certificate is refused at acceptance with 422 credential_required; live stays on the simulator", () =>
        Effect.gen(function*() {
          const local = yield* Authority
          const before = local.received.length
          const owner = yield* registerOwner("sem-certificado")
          const test = yield* createKey(owner, "test")
          const refused = yield* rawRequest("POST", "/v1/documents", { token: test.token, body: invoice() })
          expectError(refused, 422, "credential_required")
          // Live keys' documents go to the simulator here: no certificate needed, nothing sent to the local authority.
          const live = yield* createKey(owner, "live")
          const accepted = yield* rawRequest("POST", "/v1/documents", { token: live.token, body: invoice() })
          expect(accepted.status, accepted.text).toBe(202)
          const done = yield* settle(live.token, String(accepted.json?.["id"]), ["authorized"])
          expect(done.authority?.access_key).toMatch(/^[0-9]{50}$/)
          expect(local.received.length).toBe(before)
        }))

      it.effect("what the national schema would refuse is a 400 at acceptance on the caller's field: nothing queued, no number or quota taken", () =>
        Effect.gen(function*() {
          const local = yield* Authority
          const before = local.received.length
          const { owner, token } = yield* certifiedTenant("esquema")
          const base = invoice()
          const emoji = yield* rawRequest("POST", "/v1/documents", {
            token,
            body: { ...base, taker: { ...base.taker, address: { ...base.taker.address, street: "Rua das Flores 🌸" } } }
          })
          expectError(emoji, 400, "invalid_request")
          expect(String(emoji.json?.["message"])).toContain("national NFS-e system")
          // The schema's refusal, on the field the caller wrote (not the DPS element, xLgr).
          expect(emoji.json?.["issues"]).toContainEqual({
            path: ["taker", "address", "street"],
            message: expect.stringContaining("characters the national NFS-e system does not accept")
          })
          const dashAndLongEmail = yield* rawRequest("POST", "/v1/documents", {
            token,
            body: {
              ...base,
              notes: "Pedido 42 — entrega parcial",
              taker: { ...base.taker, email: `${"a".repeat(75)}@example.com` }
            }
          })
          expectError(dashAndLongEmail, 400, "invalid_request")
          const paths = (dashAndLongEmail.json?.["issues"] as Array<{ path: Array<string>; message: string }>).map((
            i
          ) => i.path.join("."))
          expect(paths).toEqual(expect.arrayContaining(["notes", "taker.email"]))
          expect(JSON.stringify(dashAndLongEmail.json)).toContain("80 characters at most")
          const tomorrow = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10)
          const future = yield* rawRequest("POST", "/v1/documents", { token, body: { ...base, issue_date: tomorrow } })
          expectError(future, 400, "invalid_request")
          expect(future.json?.["issues"]).toContainEqual({
            path: ["issue_date"],
            message: expect.stringContaining("after today")
          })
          // The same DPS element of another party is that party's field: the intermediary's e-mail
          // (Latin-1 only in the schema), and the provider's, which comes from the registration.
          const pathsOf = (answer: { json?: Record<string, unknown> | null }) =>
            (answer.json?.["issues"] as Array<{ path: Array<string> }>).map((issue) => issue.path.join("."))
          const latin1Only = "contato@łódź.example"
          const intermediaryEmail = yield* rawRequest("POST", "/v1/documents", {
            token,
            body: { ...base, intermediary: { tax_id: "11444777000161", name: "Agência Ltda", email: latin1Only } }
          })
          expectError(intermediaryEmail, 400, "invalid_request")
          expect(pathsOf(intermediaryEmail)).toEqual(["intermediary.email"])
          const tenantPath = `/v1/tenants/${owner.tenantId}`
          const withEmail = yield* rawRequest("PATCH", tenantPath, {
            token: owner.session,
            body: { registration: { email: latin1Only } }
          })
          expect(withEmail.status, withEmail.text).toBe(200)
          const providerEmail = yield* rawRequest("POST", "/v1/documents", { token, body: base })
          expectError(providerEmail, 400, "invalid_request")
          expect(pathsOf(providerEmail)).toEqual(["registration.email"])
          const cleared = yield* rawRequest("PATCH", tenantPath, {
            token: owner.session,
            body: { registration: { email: null } }
          })
          expect(cleared.status, cleared.text).toBe(200)
          // None took a number: the next document is number 1, and nothing reached the authority.
          const accepted = yield* rawRequest("POST", "/v1/documents", { token, body: base })
          expect(accepted.status, accepted.text).toBe(202)
          expect(accepted.json?.["number"]).toBe(1)
          const list = yield* rawRequest("GET", "/v1/documents", { token })
          expect((list.json?.["data"] as Array<unknown>).length).toBe(1)
          expect(local.received.slice(before).filter((r) => r.xml?.includes("🌸"))).toHaveLength(0)
        }))

      it.effect("the authority's error list becomes the rejection, with its code, and is never retried", () =>
        Effect.gen(function*() {
          const local = yield* Authority
          const { token } = yield* certifiedTenant("recusada")
          const accepted = yield* rawRequest("POST", "/v1/documents", { token, body: invoice("simulate:reject") })
          const document = yield* settle(token, String(accepted.json?.["id"]), ["authorized", "rejected", "failed"])
          expect(document.status).toBe("rejected")
          expect(document.rejection?.code).toMatch(/^E[0-9]{4}$/)
          expect(document.rejection?.message.length).toBeGreaterThan(10)
          // The message is the authority's words; its code is in `code`, not repeated.
          expect(document.rejection?.message.startsWith(document.rejection.code)).toBe(false)
          const submits = local.received.filter((r) =>
            r.operation === "submitDps" && r.xml?.includes("simulate:reject")
          )
          expect(submits).toHaveLength(1)
          const files = yield* rawRequest("GET", `/v1/documents/${document.id}/xml`, { token })
          expectError(files, 409, "invalid_state")
        }))

      it.effect("an answer lost to a timeout is reconciled through GET /dps/{id}: one note, adopted", () =>
        Effect.gen(function*() {
          const local = yield* Authority
          const { token } = yield* certifiedTenant("reconcilia")
          const accepted = yield* rawRequest("POST", "/v1/documents", { token, body: invoice("simulate:timeout") })
          const document = yield* settle(token, String(accepted.json?.["id"]), ["authorized", "rejected", "failed"])
          expect(document.status, JSON.stringify(document.last_error)).toBe("authorized")
          expect(document.attempts).toBeGreaterThanOrEqual(2)
          const notes = local.submissions().filter((s) => s.accessKey === document.authority!.access_key)
          expect(notes).toHaveLength(1)
          // The retry asked by DPS id before sending anything again.
          const dpsQueries = local.received.filter((r) => r.operation === "findDps")
          expect(dpsQueries.length).toBeGreaterThanOrEqual(1)
          const submitsOfIt = local.received.filter((r) =>
            r.operation === "submitDps" && r.xml?.includes("simulate:timeout")
          )
          expect(submitsOfIt).toHaveLength(1)
        }))
    }
  )
}
