/**
 * Substitution, the analysis of a late cancellation and the event request's form, end to end: the
 * `sefin` adapter against the local authority over mutual TLS (SPEC §6 "Substitution", issue 27
 * items 5 and 9).
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Result, Schema } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Webhook } from "standardwebhooks"
import { validateEventRequest } from "../../src/authority/sefin/EventRequest.js"
import { writePatchedSchemas } from "../../src/authority/xml/Xsd.js"
import { WebhookEvent } from "../../src/domain/Events.js"
import { expectError } from "../support/accounts.js"
import { missingValues, pdfText } from "../support/DanfseText.js"
import { Authority, certifiedTenant, nationalApp, settle } from "../support/NationalApp.js"
import { bytesRequest, client, rawRequest, type TestDatabase, testDatabases } from "../support/TestApp.js"
import { hasTool } from "../support/tools.js"
import { startReceiver, waitFor } from "../webhooks/receiver.js"

const XMLSEC1 = hasTool("xmlsec1")
const XMLLINT = hasTool("xmllint")
const POPPLER = hasTool("pdftotext")

/** A note's DANFSe as the API serves it, read back with pdftotext. */
const danfseText = (token: string, id: string) =>
  Effect.map(bytesRequest(`/v1/documents/${id}/pdf`, token), (answer) => {
    expect(answer.status).toBe(200)
    return pdfText(answer.bytes)
  })

const webhooks = {
  allowPrivateTargets: true,
  timeout: Duration.seconds(10),
  concurrency: 4,
  pollInterval: Duration.millis(20),
  lease: Duration.seconds(60)
}

const appOn = (database: TestDatabase, authority: Parameters<typeof nationalApp>[1]["authority"] = {}) =>
  nationalApp(database, {
    callTimeout: Duration.seconds(5),
    authority,
    // An analysis still undecided is asked about again after retry.maxDelay.
    config: {
      webhooks,
      retry: { baseDelay: Duration.millis(50), maxDelay: Duration.millis(200), window: Duration.seconds(30) }
    }
  })

const invoice = (overrides: { readonly notes?: string; readonly name?: string; readonly services?: number } = {}) => ({
  type: "service_invoice" as const,
  taker: { tax_id: "52998224725", name: overrides.name ?? "Maria José da Conceição" },
  service: {
    code: "010101",
    nbs_code: "115013000",
    description: "Análise e desenvolvimento de sistemas",
    municipality_code: "3550308"
  },
  amounts: { services: overrides.services ?? 150000, iss_rate: "2.00" },
  ...(overrides.notes === undefined ? {} : { notes: overrides.notes })
})

const issueAuthorized = (token: string, body = invoice()) =>
  Effect.gen(function*() {
    const accepted = yield* rawRequest("POST", "/v1/documents", { token, body })
    expect(accepted.status, accepted.text).toBe(202)
    const document = yield* settle(token, String(accepted.json?.["id"]), ["authorized", "rejected", "failed"])
    expect(document.status, JSON.stringify(document.rejection ?? document.last_error)).toBe("authorized")
    return document
  })

const substitution = (overrides: Parameters<typeof invoice>[0] = {}) => ({
  document: invoice({ name: "Maria José da Conceição Souza", services: 160000, ...overrides }),
  reason_code: "other" as const,
  reason: "Valor do serviço informado a menor na nota original"
})

const tmp = () => mkdtempSync(join(tmpdir(), "etd-subst-"))

/**
 * `xml` passes the official schema (xmllint) and its signature over `signedElement` verifies with
 * `certificatePem` (xmlsec1). `outerSignature`: the root's own signature, not the embedded DPS's.
 */
const expectValid = (
  xml: string,
  schema: string | null,
  signedElement: string,
  certificatePem: string,
  outerSignature = false
) => {
  const dir = tmp()
  writeFileSync(join(dir, "doc.xml"), xml)
  writeFileSync(join(dir, "cert.pem"), certificatePem)
  if (XMLLINT && schema !== null) {
    const schemas = writePatchedSchemas(join(dir, "xsd"))
    execFileSync("xmllint", ["--noout", "--schema", join(schemas, schema), join(dir, "doc.xml")], { stdio: "pipe" })
  }
  if (XMLSEC1) {
    execFileSync("xmlsec1", [
      "--verify",
      ...(outerSignature ? ["--node-xpath", "/*/*[local-name()='Signature']"] : []),
      "--id-attr:Id",
      signedElement,
      "--pubkey-cert-pem",
      join(dir, "cert.pem"),
      join(dir, "doc.xml")
    ], { stdio: "pipe" })
  }
}

for (const database of testDatabases) {
  layer(appOn(database, { cancellationDeadline: "2 seconds" }), { timeout: 300_000, excludeTestServices: true })(
    `substitution and late cancellation over the national protocol (${database})`,
    (it) => {
      it.effect("substitutes an authorized note: both notes valid, the original substituted, linked, webhook sent", () =>
        Effect.gen(function*() {
          const local = yield* Authority
          const { owner, p12, token } = yield* certifiedTenant("substitui")
          const receiver = yield* startReceiver(() => 200)
          const hook = yield* rawRequest("POST", `/v1/tenants/${owner.tenantId}/webhook-endpoints`, {
            token,
            body: { url: receiver.url(), events: ["document.substituted"] }
          })
          expect(hook.status, hook.text).toBe(201)

          const original = yield* issueAuthorized(token)
          // The typed client's method, with an Idempotency-Key.
          const etd = yield* client(token)
          const substitute = yield* etd.substitution.substituteForKey({
            params: { docId: original.id },
            payload: substitution(),
            headers: { "idempotency-key": `subst-${original.id}` }
          })
          expect(substitute.status).toBe("queued")
          expect(substitute.substitutes).toBe(original.id)
          expect(substitute.substitution).toEqual({
            reason_code: "other",
            reason: "Valor do serviço informado a menor na nota original",
            original_access_key: original.authority!.access_key
          })
          // The same key and body: the same answer, replayed, nothing issued twice.
          const replay = yield* rawRequest("POST", `/v1/documents/${original.id}/substitute`, {
            token,
            body: substitution(),
            headers: { "idempotency-key": `subst-${original.id}` }
          })
          expect(replay.status).toBe(202)
          expect(replay.headers["idempotent-replayed"]).toBe("true")
          expect(replay.json?.["id"]).toBe(substitute.id)

          const authorized = yield* settle(token, substitute.id, ["authorized", "rejected", "failed"])
          expect(authorized.status, JSON.stringify(authorized.rejection)).toBe("authorized")
          const replaced = yield* settle(token, original.id, ["substituted"])
          expect(replaced.substituted_by).toBe(substitute.id)
          expect(replaced.substitutes).toBeNull()

          // The DPS went with the subst group, in schema order, signed and valid.
          const dps = local.received.filter((r) => r.operation === "submitDps").at(-1)!.xml!
          expect(dps).toContain(
            `<cLocEmi>3550308</cLocEmi><subst><chSubstda>${original.authority!.access_key}</chSubstda>` +
              "<cMotivo>99</cMotivo><xMotivo>Valor do serviço informado a menor na nota original</xMotivo></subst><prest>"
          )
          expectValid(dps, "DPS_v1.01.xsd", "infDPS", p12.certificatePem)
          const originalDps = local.submissions().find((s) => s.accessKey === original.authority!.access_key)!
          expectValid(originalDps.signedDpsXml, "DPS_v1.01.xsd", "infDPS", p12.certificatePem)

          // The authority registered e105102 on the original; its events query shows it.
          expect(originalDps.substitutedBy).toBe(authorized.authority!.access_key)
          const e105102 = originalDps.events.find((e) => e.eventType === "105102")!
          expect(e105102.eventXml).toContain(`<chSubstituta>${authorized.authority!.access_key}</chSubstituta>`)
          // Both notes: the NFS-e as answered passes the schema, and the authority's signature verifies.
          for (
            const note of [
              originalDps,
              local.submissions().find((n) => n.accessKey === authorized.authority!.access_key)!
            ]
          ) {
            expectValid(note.nfseXml, "NFSe_v1.01.xsd", "infNFSe", local.signingCertificatePem, true)
          }
          if (XMLSEC1) expectValid(e105102.eventXml, null, "infEvento", local.signingCertificatePem)
          // In production's request form, so valid as the published schema's one-sequence equivalent.
          expect(validateEventRequest(e105102.eventXml, "evento")).toEqual(Result.void)

          if (POPPLER) {
            // The substitute's DANFSe shows every value of its XML (the note it replaces included); the
            // original's is marked SUBSTITUÍDA.
            const substituteXml = yield* rawRequest("GET", `/v1/documents/${substitute.id}/xml`, { token })
            expect(missingValues(substituteXml.text, yield* danfseText(token, substitute.id))).toEqual([])
            expect(yield* danfseText(token, original.id)).toContain("SUBSTITUÍDA")
          }

          // The webhook: the original, with the link.
          yield* waitFor(() => receiver.received.length >= 1)
          const delivered = receiver.received[0]!
          const event = Schema.decodeUnknownSync(WebhookEvent)(
            new Webhook(String(hook.json!["secret"])).verify(delivered.body, delivered.headers)
          )
          expect(event.type).toBe("document.substituted")
          expect(event.data.object).toMatchObject({
            id: original.id,
            status: "substituted",
            substituted_by: substitute.id
          })

          // Replaced once: a second substitution of the original is refused, nothing taken.
          const again = yield* rawRequest("POST", `/v1/documents/${original.id}/substitute`, {
            token,
            body: substitution()
          })
          expectError(again, 409, "invalid_state")
          // The substituted note's files say so.
          const xml = yield* rawRequest("GET", `/v1/documents/${original.id}/xml`, { token })
          expect(xml.headers["etd-document-status"]).toBe("substituted")
        }))

      it.effect("refuses what cannot be substituted, before anything is taken", () =>
        Effect.gen(function*() {
          const { token } = yield* certifiedTenant("recusa")
          const other = yield* certifiedTenant("outro")
          const original = yield* issueAuthorized(token)

          // Another tenant's note does not exist for this key.
          const foreign = yield* rawRequest("POST", `/v1/documents/${original.id}/substitute`, {
            token: other.token,
            body: substitution()
          })
          expectError(foreign, 404, "not_found")

          // A note not authorized (rejected) cannot be substituted.
          const rejectedAt = yield* rawRequest("POST", "/v1/documents", {
            token,
            body: invoice({ notes: "simulate:reject" })
          })
          const rejected = yield* settle(token, String(rejectedAt.json?.["id"]), ["rejected"])
          const notAuthorized = yield* rawRequest("POST", `/v1/documents/${rejected.id}/substitute`, {
            token,
            body: substitution()
          })
          expectError(notAuthorized, 409, "invalid_state")

          // A reason code outside TSCodJustSubst is our own field's 400.
          const badReason = yield* rawRequest("POST", `/v1/documents/${original.id}/substitute`, {
            token,
            body: { ...substitution(), reason_code: "typo" }
          })
          expectError(badReason, 400, "invalid_request")
          expect(badReason.text).toContain("reason_code")

          // Two substitutions at once: exactly one is taken.
          const both = yield* Effect.all([
            rawRequest("POST", `/v1/documents/${original.id}/substitute`, { token, body: substitution() }),
            rawRequest("POST", `/v1/documents/${original.id}/substitute`, {
              token,
              body: substitution({ services: 170000 })
            })
          ], { concurrency: 2 })
          expect(both.map((r) => r.status).sort()).toEqual([202, 409])
          const winner = both.find((r) => r.status === 202)!
          yield* settle(token, String(winner.json?.["id"]), ["authorized"])
          yield* settle(token, original.id, ["substituted"])
        }))

      it.effect("keeps the original authorized when its substitute is rejected", () =>
        Effect.gen(function*() {
          const { token } = yield* certifiedTenant("rejeita")
          const original = yield* issueAuthorized(token)
          const refused = yield* rawRequest("POST", `/v1/documents/${original.id}/substitute`, {
            token,
            body: substitution({ notes: "simulate:reject" })
          })
          expect(refused.status, refused.text).toBe(202)
          yield* settle(token, String(refused.json?.["id"]), ["rejected"])
          const still = yield* settle(token, original.id, ["authorized"])
          expect(still.substituted_by).toBeNull()
          // Refused, it no longer holds the original: a new substitution is taken.
          const retry = yield* rawRequest("POST", `/v1/documents/${original.id}/substitute`, {
            token,
            body: substitution()
          })
          expect(retry.status, retry.text).toBe(202)
          yield* settle(token, original.id, ["substituted"])
        }))

      it.effect("past the deadline: E0822, then the analysis request, then the municipality's decision", () =>
        Effect.gen(function*() {
          const { token } = yield* certifiedTenant("analise")
          const cancel = (id: string, analysis?: boolean) =>
            rawRequest("POST", `/v1/documents/${id}/cancel`, {
              token,
              body: {
                reason_code: "issue_error",
                reason: "Nota emitida com o tomador errado",
                ...(analysis === undefined ? {} : { analysis })
              }
            })

          const granted = yield* issueAuthorized(token)
          const refusedLater = yield* issueAuthorized(token, invoice({ notes: "simulate:analysis-refuse" }))
          // Within the deadline an analysis is not for this note.
          expectError(yield* cancel(granted.id, true), 409, "invalid_state")
          yield* Effect.sleep(Duration.seconds(2.5))

          for (const document of [granted, refusedLater]) {
            expect((yield* cancel(document.id)).status).toBe(202)
            const late = yield* settle(token, document.id, ["authorized", "cancelled"])
            expect(late.cancellation?.error?.code).toBe("E0822")
            const asked = yield* cancel(document.id, true)
            expect(asked.status, asked.text).toBe(202)
            expect(asked.json?.["cancellation"]).toMatchObject({ analysis: true })
          }
          const cancelled = yield* settle(token, granted.id, ["cancelled"])
          expect(cancelled.cancellation).toMatchObject({ analysis: true, error: null })
          expect(cancelled.cancellation!.cancelled_at).not.toBeNull()
          const kept = yield* settle(token, refusedLater.id, ["authorized"])
          expect(kept.cancellation?.error?.code).toBe("E105105")
        }))
    }
  )

  layer(appOn(database, { eventForm: "with_sequence" }), { timeout: 300_000, excludeTestServices: true })(
    `event requests in the other form (${database})`,
    (it) => {
      it.effect("an authority that demands nPedRegEvento: refused once with E1235, sent again in that form, remembered", () =>
        Effect.gen(function*() {
          const local = yield* Authority
          const { token } = yield* certifiedTenant("formato")
          const first = yield* issueAuthorized(token)
          const second = yield* issueAuthorized(token)
          for (const document of [first, second]) {
            const asked = yield* rawRequest("POST", `/v1/documents/${document.id}/cancel`, {
              token,
              body: { reason_code: "other", reason: "Serviço cancelado pelo cliente" }
            })
            expect(asked.status, asked.text).toBe(202)
            const cancelled = yield* settle(token, document.id, ["cancelled", "authorized"])
            expect(cancelled.status, JSON.stringify(cancelled.cancellation)).toBe("cancelled")
          }
          const events = local.received.filter((r) => r.operation === "registerEvent").map((r) => r.xml ?? "")
          // First the production form (59-character Id), refused; then the other, taken; then only that one.
          expect(events).toHaveLength(3)
          expect(events[0]).not.toContain("nPedRegEvento")
          expect(events[0]).toMatch(/Id="PRE[0-9]{56}"/)
          expect(events[1]).toContain("<nPedRegEvento>001</nPedRegEvento>")
          expect(events[1]).toMatch(/Id="PRE[0-9]{59}"/)
          expect(events[2]).toContain("<nPedRegEvento>001</nPedRegEvento>")
        }))
    }
  )
}
