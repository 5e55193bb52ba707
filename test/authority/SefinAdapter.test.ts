/**
 * The `sefin` adapter against the local authority, call by call (issue 9 "Tests for"): what never
 * leaves (a DPS that fails the official schema, no usable certificate), what the authority refuses
 * (a DPS signed with another tenant's certificate), duplicates adopted through `GET /dps/{id}`, a
 * cancellation already registered, an HTML 404 that proves nothing, and one TLS identity per
 * credential, replaced when the credential changes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import { createServer } from "node:https"
import type { AddressInfo } from "node:net"
import { gzipSync } from "node:zlib"
import { withTimeout } from "../../src/authority/Authorities.js"
import { makeSefinAuthority } from "../../src/authority/sefin/SefinAdapter.js"
import { type LocalAuthority, localAuthorityScoped } from "../../tools/local-authority/LocalAuthority.js"
import { localAuthorityKeys } from "../../tools/local-authority/LocalAuthorityKeys.js"
import { missingValues, pdfText } from "../support/DanfseText.js"
import { cnpj } from "../support/fixtures.js"
import { certificateFor, DAY, document, materialOf, submission, TENANT, vaultHolding } from "../support/SefinHarness.js"
import { hasTool } from "../support/tools.js"

const POPPLER = hasTool("pdftotext")

const adapterOn = (
  local: LocalAuthority,
  endpoints: Partial<{ sefinUrl: string }> = {},
  danfseSource?: "local" | "national"
) =>
  Effect.map(
    makeSefinAuthority({
      environment: "test",
      system: "homologation",
      timeout: Duration.seconds(3),
      danfseSource,
      endpoints: { sefinUrl: endpoints.sefinUrl ?? local.url, danfseUrl: local.danfseUrl, ca: local.caPem }
    }),
    (authority) => withTimeout(authority, Duration.seconds(3))
  )

const submitsTo = (local: LocalAuthority) => local.received.filter((r) => r.operation === "submitDps").length

describe("sefin adapter against the local authority", () => {
  const taxId = cnpj()
  const ours = certificateFor(taxId)
  const vault = vaultHolding(materialOf(ours, "crd_1"))

  it.live("the official schema is checked at acceptance, naming the field; what is sent is not checked again", () =>
    Effect.gen(function*() {
      const local = yield* localAuthorityScoped()
      const authority = yield* adapterOn(local)
      const issuer = { tenantId: TENANT, verified: true }
      const doc = document(taxId)
      yield* authority.requirementsFor(issuer, doc)
      const { nbs_code: _, ...service } = doc.service
      const missing = yield* Effect.flip(authority.requirementsFor(issuer, { ...doc, service }))
      expect(missing._tag).toBe("InvalidRequest")
      if (missing._tag === "InvalidRequest") {
        expect(missing.issues?.map((issue) => issue.path)).toEqual([["service", "nbs_code"]])
      }
      const tooLong = { ...doc, taker: { ...doc.taker, name: "Maria ".repeat(60) + "da Silva" } }
      const refused = yield* Effect.flip(authority.requirementsFor(issuer, tooLong))
      expect(refused._tag).toBe("InvalidRequest")
      if (refused._tag === "InvalidRequest") {
        expect(refused.issues?.map((issue) => issue.path)).toContainEqual(["taker", "name"])
      }
      expect(local.received).toHaveLength(0)
      // The worker signs the DPS that acceptance checked: a document that skipped the check reaches
      // the authority, whose refusal is final.
      const error = yield* Effect.flip(authority.submit(submission(tooLong)))
      expect(error._tag).toBe("AuthorityRejected")
      expect(submitsTo(local)).toBe(1)
    }).pipe(Effect.provide(vault.layer)))

  it.live("a DPS signed with another tenant's certificate is refused by the authority, and is final", () =>
    Effect.gen(function*() {
      const local = yield* localAuthorityScoped()
      const someoneElse = vaultHolding(materialOf(certificateFor(cnpj()), "crd_other"))
      const authority = yield* Effect.provide(adapterOn(local), someoneElse.layer)
      const error = yield* Effect.flip(authority.submit(submission(document(taxId))))
      expect(error._tag).toBe("AuthorityRejected")
      if (error._tag === "AuthorityRejected") expect(error.code).toBe("E0718")
      expect(submitsTo(local)).toBe(1)
      expect(local.submissions()).toHaveLength(0)
    }))

  it.live("a duplicate DPS id is adopted through GET /dps/{id}: the same note, not a second one", () =>
    Effect.gen(function*() {
      const local = yield* localAuthorityScoped()
      const authority = yield* adapterOn(local)
      const sub = submission(document(taxId))
      const first = yield* authority.submit(sub)
      expect(first.accessKey).toMatch(/^[0-9]{50}$/)
      expect(first.nfseXml).toContain(`Id="NFS${first.accessKey}"`)
      const again = yield* Effect.flip(authority.submit(sub))
      expect(again._tag).toBe("AlreadyAuthorized")
      if (again._tag === "AlreadyAuthorized") {
        expect(again.accessKey).toBe(first.accessKey)
        expect(again.nfseXml).toBe(first.nfseXml)
      }
      expect(local.received.filter((r) => r.operation === "findDps")).toHaveLength(1)
      expect(local.submissions()).toHaveLength(1)
      const found = yield* authority.lookup(sub)
      expect(Option.map(found, (record) => record.authorization.accessKey)).toEqual(Option.some(first.accessKey))
      expect(Option.isNone(yield* authority.lookup(submission(document(taxId))))).toBe(true)
    }).pipe(Effect.provide(vault.layer)))

  it.live("cancels with the signed event; a cancellation already registered counts as done", () =>
    Effect.gen(function*() {
      const local = yield* localAuthorityScoped()
      const authority = yield* adapterOn(local)
      const sub = submission(document(taxId))
      const note = yield* authority.submit(sub)
      const request = {
        ...sub,
        environment: "test" as const,
        issuerTaxId: taxId,
        accessKey: note.accessKey,
        reasonCode: "issue_error" as const,
        reason: "Valor errado na nota fiscal",
        requestedAt: new Date()
      }
      const cancelled = yield* authority.cancel(request)
      expect(cancelled.protocol).not.toBeNull()
      // The first answer was lost; the retry finds the event registered (E0840).
      const again = yield* authority.cancel(request)
      expect(again.protocol).toBeNull()
      expect(local.received.filter((r) => r.operation === "registerEvent")).toHaveLength(2)
      const refused = submission(document(taxId, { notes: "simulate:cancel-reject" }))
      const other = yield* authority.submit(refused)
      const error = yield* Effect.flip(authority.cancel({ ...request, ...refused, accessKey: other.accessKey }))
      expect(error._tag).toBe("AuthorityRejected")
    }).pipe(Effect.provide(vault.layer)))

  it.live.skipIf(!POPPLER)(
    "renders the DANFSe from the NFS-e XML by default; relays the national DANFSe API only when configured (needs pdftotext)",
    () =>
      Effect.gen(function*() {
        const local = yield* localAuthorityScoped()
        const note = yield* (yield* adapterOn(local)).submit(submission(document(taxId)))
        const request = {
          tenantId: TENANT,
          accessKey: note.accessKey,
          nfseXml: note.nfseXml,
          cancelled: false,
          substituted: false
        }
        const rendered = yield* (yield* adapterOn(local)).danfse(request)
        expect(local.received.some((r) => r.operation === "getDanfse")).toBe(false)
        expect(missingValues(note.nfseXml, pdfText(rendered))).toEqual([])
        const marked = pdfText(yield* (yield* adapterOn(local)).danfse({ ...request, cancelled: true }))
        expect(marked).toContain("NFS-e CANCELADA")
        expect(missingValues(note.nfseXml, marked)).toEqual([])

        const relayed = yield* (yield* adapterOn(local, {}, "national")).danfse(request)
        expect(local.received.filter((r) => r.operation === "getDanfse")).toHaveLength(1)
        // The local authority renders with the same renderer: the relayed PDF is the same document.
        expect(Buffer.from(relayed).equals(Buffer.from(rendered))).toBe(true)
        const unknown = yield* Effect.flip(
          (yield* adapterOn(local, {}, "national")).danfse({ ...request, accessKey: "1".repeat(50) })
        )
        expect(unknown._tag).toBe("AuthorityUnavailable")
      }).pipe(Effect.provide(vault.layer))
  )

  it.live("no certificate, or an expired one: RequestNotSent credential_required, nothing sent", () =>
    Effect.gen(function*() {
      const local = yield* localAuthorityScoped()
      const changing = vaultHolding(null)
      const authority = yield* Effect.provide(adapterOn(local), changing.layer)
      const none = yield* Effect.flip(authority.submit(submission(document(taxId))))
      expect(none._tag === "RequestNotSent" && none.code).toBe("credential_required")
      const refusedAtAcceptance = authority.requirementsFor({ tenantId: TENANT, verified: true }, document(taxId))
      expect((yield* Effect.flip(refusedAtAcceptance))._tag).toBe("CredentialRequired")
      changing.set(materialOf(ours, "crd_old", new Date(Date.now() - DAY)))
      const expired = yield* Effect.flip(authority.submit(submission(document(taxId))))
      expect(expired._tag === "RequestNotSent" && expired.code).toBe("credential_required")
      expect((yield* Effect.flip(refusedAtAcceptance))._tag).toBe("CredentialRequired")
      expect(local.received).toHaveLength(0)
    }))

  it.live("production takes only a certificate with an ICP-Brasil chain: refused at acceptance and at sending", () =>
    Effect.gen(function*() {
      const local = yield* localAuthorityScoped({ environment: 1 })
      const homologation = vaultHolding({ ...materialOf(ours, "crd_test"), verifiedChain: false })
      const live = yield* Effect.provide(
        Effect.map(
          makeSefinAuthority({
            environment: "live",
            system: "production",
            timeout: Duration.seconds(3),
            endpoints: { sefinUrl: local.url, danfseUrl: local.danfseUrl, ca: local.caPem }
          }),
          (authority) => withTimeout(authority, Duration.seconds(3))
        ),
        homologation.layer
      )
      const liveDocument = document(taxId, { environment: "live" })
      for (const verified of [true, false]) {
        const refused = yield* Effect.flip(live.requirementsFor({ tenantId: TENANT, verified }, liveDocument))
        expect(refused._tag).toBe("CredentialRequired")
        expect(refused.message).toContain("ICP-Brasil")
      }
      // Accepted while an ICP-Brasil certificate was active, then replaced by one stored for homologation.
      const notSent = yield* Effect.flip(live.submit(submission(liveDocument)))
      expect(notSent._tag === "RequestNotSent" && notSent.code).toBe("credential_required")
      expect(local.received).toHaveLength(0)
      // Homologation takes it: the test environment's adapter only needs a certificate that can sign.
      const test = yield* Effect.provide(adapterOn(local), homologation.layer)
      yield* test.requirementsFor({ tenantId: TENANT, verified: false }, document(taxId))
      // With the chain verified and the tax id proven, production takes the same document.
      homologation.set(materialOf(ours, "crd_icp"))
      yield* live.requirementsFor({ tenantId: TENANT, verified: true }, liveDocument)
    }))

  it.live("an HTML 404 (wrong base path) proves nothing: the lookup is transient, never 'not submitted'", () =>
    Effect.gen(function*() {
      const local = yield* localAuthorityScoped()
      const authority = yield* adapterOn(local, { sefinUrl: local.url.replace(/\/SefinNacional$/, "") })
      const error = yield* Effect.flip(authority.lookup(submission(document(taxId))))
      expect(error._tag).toBe("AuthorityUnavailable")
    }).pipe(Effect.provide(vault.layer)))

  it.live("an answer that is not the note of our DPS is not recorded: the outcome stays unknown (transient)", () =>
    Effect.gen(function*() {
      const local = yield* localAuthorityScoped()
      const authority = yield* adapterOn(local)
      const someoneElses = yield* authority.submit(submission(document(taxId)))
      // A server (trusted, answering in the real shape) that hands back that other note for any DPS.
      const keys = localAuthorityKeys()
      const server = createServer(
        { key: keys.server.privateKeyPem, cert: keys.server.certificatePem },
        (request, response) => {
          request.resume()
          request.on("end", () => {
            response.writeHead(201, { "content-type": "application/json" })
            response.end(JSON.stringify({
              tipoAmbiente: 2,
              versaoAplicativo: "SefinNacional_1.6.0",
              dataHoraProcessamento: "2026-11-20T10:00:00.0000000-03:00",
              idDps: `NFS${someoneElses.accessKey}`,
              chaveAcesso: someoneElses.accessKey,
              nfseXmlGZipB64: gzipSync(Buffer.from(someoneElses.nfseXml)).toString("base64"),
              alertas: null
            }))
          })
        }
      )
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))),
        () => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
      )
      const port = (server.address() as AddressInfo).port
      const confused = yield* Effect.map(
        makeSefinAuthority({
          environment: "test",
          system: "homologation",
          timeout: Duration.seconds(3),
          endpoints: {
            sefinUrl: `https://127.0.0.1:${port}/SefinNacional`,
            danfseUrl: local.danfseUrl,
            ca: keys.caCertificatePem
          }
        }),
        (adapter) => withTimeout(adapter, Duration.seconds(3))
      )
      const error = yield* Effect.flip(confused.submit(submission(document(taxId))))
      expect(error._tag).toBe("AuthorityUnavailable")
      expect(error.message).toContain("not the note of this DPS")
    }).pipe(Effect.provide(vault.layer)))

  it.live("one TLS identity per credential: a new certificate is used as soon as it replaces the old one", () =>
    Effect.gen(function*() {
      const local = yield* localAuthorityScoped()
      const changing = vaultHolding(materialOf(ours, "crd_a"))
      const authority = yield* Effect.provide(adapterOn(local), changing.layer)
      yield* authority.submit(submission(document(taxId)))
      const renewed = certificateFor(taxId, { freshKey: true })
      changing.set(materialOf(renewed, "crd_b"))
      yield* authority.submit(submission(document(taxId)))
      const presented = local.received.map((r) => r.clientCertificatePem?.replace(/\s/g, ""))
      expect(presented[0]).toBe(ours.certificatePem.replace(/\s/g, ""))
      expect(presented.at(-1)).toBe(renewed.certificatePem.replace(/\s/g, ""))
    }))
})
