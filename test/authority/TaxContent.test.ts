/**
 * The whole tax content of a note, end to end (issue 27): each kind of note a business issues is
 * accepted as it is, sent by the `sefin` adapter over mutual TLS to the protocol-faithful local
 * authority, authorized, and its NFS-e passes the official schema (xmllint) and its signature an
 * independent verifier (xmlsec1), and its DANFSe read back with pdftotext shows every value of the
 * XML; the document then shows the note's own figures. The contract's examples are also issued as
 * they are on the simulator (live keys).
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { signEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { b2bWithRetentionsExample, exportExample } from "../../src/domain/DocumentExamples.js"
import type { SimplesNacional } from "../../src/domain/Tenant.js"
import { makePkcs12 } from "../support/certificates.js"
import { missingValues, pdfText } from "../support/DanfseText.js"
import { createKey } from "../support/fixtures.js"
import { Authority, certifiedTenant, nationalApp, settle } from "../support/NationalApp.js"
import { expectSchemaValid, expectSignatureValid, XMLLINT, XMLSEC1 } from "../support/OfficialXml.js"
import { bytesRequest, rawRequest, type TestDatabase, testDatabases } from "../support/TestApp.js"
import { hasTool } from "../support/tools.js"

const POPPLER = hasTool("pdftotext")

const appOn = (database: TestDatabase) => nationalApp(database, { callTimeout: Duration.seconds(5) })

const service = {
  code: "010101",
  nbs_code: "115013000",
  description: "Análise e desenvolvimento de sistemas",
  municipality_code: "3550308"
}
const person = { tax_id: "52998224725", name: "Maria José da Conceição" }

/** A note with the tax reform's IBS/CBS group, 2026's test rates. */
const reformExample = {
  type: "service_invoice",
  issue_date: "2026-11-10",
  taker: person,
  service,
  amounts: { services: 100_000, iss_rate: "2.00" },
  ibs_cbs: { operation_indicator: "100301", cst: "000", class_code: "000001" }
}

/** Stands in for an authority's certificate where the simulator's note must be signed to be schema-valid. */
const simulatorSigner = makePkcs12({ cn: "AUTORIDADE TESTE:00394460005887", cnpjOid: "00394460005887", password: "x" })

const setRegime = (owner: { session: string; tenantId: string }, option: SimplesNacional) =>
  Effect.gen(function*() {
    const response = yield* rawRequest("PATCH", `/v1/tenants/${owner.tenantId}`, {
      token: owner.session,
      body: { simples_nacional: option }
    })
    expect(response.status, response.text).toBe(200)
  })

/**
 * The NFS-e checked by tools we did not write: the official schema, the authority's signature over
 * infNFSe (trusting only the local authority's CA), and the tenant's own signature over the DPS the
 * note embeds (trusting only the tenant's certificate).
 */
const expectOfficial = (nfse: string, tenantCertificatePem: string) =>
  Effect.gen(function*() {
    const local = yield* Authority
    if (XMLLINT) expectSchemaValid(nfse, "NFSe_v1.01.xsd")
    if (XMLSEC1) {
      expectSignatureValid(nfse, { signed: "infNFSe", parent: ["NFSe"], trust: { caPem: local.caPem } })
      expectSignatureValid(nfse, {
        signed: "infDPS",
        parent: ["NFSe", "infNFSe", "DPS"],
        trust: { certificatePem: tenantCertificatePem }
      })
    }
  })

/** Issues `body` with the token, waits for the authority's answer and returns the document and its NFS-e. */
const issue = (token: string, body: object) =>
  Effect.gen(function*() {
    const accepted = yield* rawRequest("POST", "/v1/documents", { token, body })
    expect(accepted.status, accepted.text).toBe(202)
    const document = yield* settle(token, String(accepted.json?.["id"]), ["authorized", "rejected", "failed"])
    expect(document.status, JSON.stringify(document.rejection ?? document.last_error)).toBe("authorized")
    const xml = yield* rawRequest("GET", `/v1/documents/${document.id}/xml`, { token })
    expect(xml.status).toBe(200)
    if (POPPLER) {
      // The DANFSe the service renders from that XML shows every one of its values.
      const pdf = yield* bytesRequest(`/v1/documents/${document.id}/pdf`, token)
      expect(pdf.status).toBe(200)
      expect(missingValues(xml.text, pdfText(pdf.bytes))).toEqual([])
    }
    return { document, nfse: xml.text, dps: /<DPS [\s\S]*<\/DPS>/.exec(xml.text)![0] }
  })

const valores = (nfse: string) => /<valores>(?:(?!<valores>).)*?<vLiq>[^<]*<\/vLiq><\/valores>/.exec(nfse)?.[0]

for (const database of testDatabases) {
  layer(appOn(database), { timeout: 300_000, excludeTestServices: true })(
    `the tax content of a note, against the local authority (${database})`,
    (it) => {
      it.effect("a B2B note with ISS withheld by the taker and federal retentions (the contract's example)", () =>
        Effect.gen(function*() {
          const tenant = yield* certifiedTenant("btob")
          const { document, dps, nfse } = yield* issue(tenant.token, b2bWithRetentionsExample)
          expect(dps).toContain("<tpRetISSQN>2</tpRetISSQN></tribMun>")
          expect(dps).toContain(
            "<tribFed><piscofins><CST>01</CST><vBCPisCofins>10000.00</vBCPisCofins><pAliqPis>0.65</pAliqPis>" +
              "<pAliqCofins>3.00</pAliqCofins><vPis>65.00</vPis><vCofins>300.00</vCofins><tpRetPisCofins>3</tpRetPisCofins>" +
              "</piscofins><vRetCP>1100.00</vRetCP><vRetIRRF>150.00</vRetIRRF><vRetCSLL>100.00</vRetCSLL></tribFed>"
          )
          expect(dps).toContain("<vDescCondIncond><vDescIncond>100.00</vDescIncond></vDescCondIncond>")
          // The shipped schema's formulas: vTotalRet = vRetCP + vRetIRRF + vRetCSLL + the ISS withheld =
          // 1.100 + 150 + 100 + 198 = 1.548,00; vLiq = 10.000 - 100 - 1.548 = 8.352,00 (PIS/COFINS are due, not withheld).
          expect(valores(nfse)).toBe(
            "<valores><vBC>9900.00</vBC><pAliqAplic>2.00</pAliqAplic><vISSQN>198.00</vISSQN>" +
              "<vTotalRet>1548.00</vTotalRet><vLiq>8352.00</vLiq></valores>"
          )
          yield* expectOfficial(nfse, tenant.p12.certificatePem)
          expect(document.amounts).toMatchObject({
            source: "note",
            unconditional_discount: 10_000,
            base: 990_000,
            iss_amount: 19_800,
            iss_withheld: 19_800,
            federal_withheld: 135_000,
            total_withheld: 154_800,
            net: 835_200
          })
        }))

      it.effect("an export to a foreign taker (the contract's example): no ISS, the net value is the service's", () =>
        Effect.gen(function*() {
          const tenant = yield* certifiedTenant("export")
          const { document, dps, nfse } = yield* issue(tenant.token, exportExample)
          expect(dps).toContain("<toma><NIF>94-1234567</NIF><xNome>Acme Software Inc.</xNome><end><endExt>")
          expect(dps).toContain("<comExt><mdPrestacao>1</mdPrestacao><vincPrest>0</vincPrest><tpMoeda>220</tpMoeda>")
          expect(dps).toContain("<tribISSQN>3</tribISSQN><cPaisResult>US</cPaisResult>")
          expect(valores(nfse)).toBe("<valores><vLiq>25000.00</vLiq></valores>")
          yield* expectOfficial(nfse, tenant.p12.certificatePem)
          expect(document.amounts).toMatchObject({ source: "note", iss_amount: null, net: 2_500_000 })
        }))

      it.effect("a Simples ME/EPP note (no pAliq, pTotTribSN) and a MEI note (indTotTrib 0)", () =>
        Effect.gen(function*() {
          const meEpp = yield* certifiedTenant("smallco")
          yield* setRegime(meEpp.owner, "me_epp")
          const small = yield* issue(meEpp.token, {
            type: "service_invoice",
            taker: person,
            service,
            amounts: { services: 50_000 },
            approximate_taxes: { simples_rate: "18.83" }
          })
          expect(small.dps).not.toContain("pAliq")
          expect(small.dps).toContain("<totTrib><pTotTribSN>18.83</pTotTribSN></totTrib>")
          expect(valores(small.nfse)).toBe("<valores><vLiq>500.00</vLiq></valores>")
          yield* expectOfficial(small.nfse, meEpp.p12.certificatePem)
          expect(small.document.amounts).toMatchObject({ iss_rate: null, iss_amount: null, net: 50_000 })

          const mei = yield* certifiedTenant("mei")
          yield* setRegime(mei.owner, "mei")
          const micro = yield* issue(mei.token, {
            type: "service_invoice",
            taker: person,
            service,
            amounts: { services: 20_000 }
          })
          expect(micro.dps).toContain("<totTrib><indTotTrib>0</indTotTrib></totTrib>")
          yield* expectOfficial(micro.nfse, mei.p12.certificatePem)
          // A MEI sends no rate: the refusal names our field.
          const refused = yield* rawRequest("POST", "/v1/documents", {
            token: mei.token,
            body: { type: "service_invoice", taker: person, service, amounts: { services: 20_000, iss_rate: "2.00" } }
          })
          expect(refused.status).toBe(400)
          expect(JSON.stringify(refused.json?.["issues"])).toContain("iss_rate")
        }))

      it.effect("a note with an intermediary that withholds the ISS, and an immune note", () =>
        Effect.gen(function*() {
          const tenant = yield* certifiedTenant("interm")
          const withIntermediary = yield* issue(tenant.token, {
            type: "service_invoice",
            taker: person,
            intermediary: { tax_id: "60701190000104", name: "Agência Intermediária Ltda" },
            service,
            amounts: { services: 100_000, iss_rate: "5" },
            iss: { withheld_by: "intermediary" }
          })
          expect(withIntermediary.dps).toContain(
            "<interm><CNPJ>60701190000104</CNPJ><xNome>Agência Intermediária Ltda</xNome></interm>"
          )
          expect(withIntermediary.dps).toContain("<tpRetISSQN>3</tpRetISSQN>")
          yield* expectOfficial(withIntermediary.nfse, tenant.p12.certificatePem)
          // The local authority applies its municipal rate (2 %): the note's figures are shown.
          // Every withheld figure is the note's: 2 % withheld, not the 5 % the document computed.
          expect(withIntermediary.document.amounts).toMatchObject({
            source: "note",
            iss_rate: "2.00",
            iss_amount: 2_000,
            iss_withheld: 2_000,
            federal_withheld: 0,
            total_withheld: 2_000,
            net: 98_000
          })

          const immune = yield* issue(tenant.token, {
            type: "service_invoice",
            taker: person,
            service,
            amounts: { services: 30_000 },
            iss: { taxation: "immune", immunity: "temples" }
          })
          expect(immune.dps).toContain("<tribISSQN>2</tribISSQN><tpImunidade>2</tpImunidade><tpRetISSQN>1</tpRetISSQN>")
          expect(valores(immune.nfse)).toBe("<valores><vLiq>300.00</vLiq></valores>")
          yield* expectOfficial(immune.nfse, tenant.p12.certificatePem)
        }))

      it.effect("a note with the tax reform's IBS/CBS group: declared in the DPS, computed by the authority", () =>
        Effect.gen(function*() {
          const tenant = yield* certifiedTenant("reform")
          const { document, dps, nfse } = yield* issue(tenant.token, reformExample)
          // The group closes the DPS, after valores.
          expect(dps).toMatch(
            /<\/valores><IBSCBS>.*<cIndOp>100301<\/cIndOp>.*<CST>000<\/CST><cClassTrib>000001<\/cClassTrib>/
          )
          // 2026: CBS 0.9 % and state IBS 0.1 % over the value less the ISS (R$ 1.000,00 − R$ 20,00).
          expect(nfse).toContain("<IBSCBS><cLocalidadeIncid>3550308</cLocalidadeIncid>")
          expect(nfse).toMatch(/<IBSCBS>.*<vBC>980\.00<\/vBC>/)
          expect(nfse).toContain("<vCBS>8.82</vCBS>")
          expect(nfse).toContain("<vIBSUF>0.98</vIBSUF>")
          yield* expectOfficial(nfse, tenant.p12.certificatePem)
          expect(document.amounts.ibs_cbs).toEqual({
            base: 98_000,
            cbs_rate: "0.90",
            state_ibs_rate: "0.10",
            municipal_ibs_rate: "0.00",
            cbs: 882,
            state_ibs: 98,
            municipal_ibs: 0,
            ibs_total: 98,
            note_total: 100_000
          })
          // A class the official table does not allow on an NFS-e is refused on our field.
          const refused = yield* rawRequest("POST", "/v1/documents", {
            token: tenant.token,
            body: {
              type: "service_invoice",
              taker: person,
              service,
              amounts: { services: 100_000 },
              ibs_cbs: { operation_indicator: "100301", cst: "000", class_code: "999999" }
            }
          })
          expect(refused.status, refused.text).toBe(400)
          expect(JSON.stringify(refused.json?.["issues"])).toContain("class_code")
        }))

      it.effect("IBS/CBS from 2027 (rates the Senate has not fixed): accepted, declared, authorized, the note's figures shown", () =>
        Effect.gen(function*() {
          const tenant = yield* certifiedTenant("reform27")
          // The sefin adapter refuses a competence after today, as the national system does: until
          // 2027 a 2027 competence goes to the simulator (live keys); the local authority's part is
          // LocalAuthority.test.ts.
          const live = yield* createKey(tenant.owner, "live")
          const body = {
            type: "service_invoice",
            issue_date: "2027-01-15",
            taker: person,
            service,
            amounts: { services: 100_000, iss_rate: "2.00" },
            ibs_cbs: { operation_indicator: "100301", cst: "000", class_code: "000001" }
          }
          const accepted = yield* rawRequest("POST", "/v1/documents", { token: live.token, body })
          expect(accepted.status, accepted.text).toBe(202)
          // No estimate of ours: 2027's CBS rate is not published; the authority computes it.
          expect((accepted.json?.["amounts"] as Record<string, unknown>)["ibs_cbs"]).toBeNull()
          const document = yield* settle(live.token, String(accepted.json?.["id"]), [
            "authorized",
            "rejected",
            "failed"
          ])
          expect(document.status, JSON.stringify(document.rejection ?? document.last_error)).toBe("authorized")
          const nfse = (yield* rawRequest("GET", `/v1/documents/${document.id}/xml`, { token: live.token })).text
          if (POPPLER) {
            const pdf = yield* bytesRequest(`/v1/documents/${document.id}/pdf`, live.token)
            expect(missingValues(nfse, pdfText(pdf.bytes))).toEqual([])
          }
          expect(nfse).toContain("<dCompet>2027-01-15</dCompet>")
          expect(nfse).toMatch(/<\/valores><IBSCBS>.*<CST>000<\/CST><cClassTrib>000001<\/cClassTrib>/)
          // The simulator's note: the IBS of 2027 (0.05 % + 0.05 %) over R$ 980,00, taxes on top.
          expect(nfse).toContain("<vIBSUF>0.49</vIBSUF>")
          expect(nfse).toContain("<vIBSMun>0.49</vIBSMun>")
          const cbs = Math.round(Number(/<vCBS>([0-9.]+)<\/vCBS>/.exec(nfse)![1]) * 100)
          const noteTotal = Math.round(Number(/<vTotNF>([0-9.]+)<\/vTotNF>/.exec(nfse)![1]) * 100)
          expect(noteTotal).toBe(100_000 + cbs + 98)
          expect(document.amounts).toMatchObject({
            source: "note",
            ibs_cbs: {
              base: 98_000,
              state_ibs_rate: "0.05",
              municipal_ibs_rate: "0.05",
              state_ibs: 49,
              municipal_ibs: 49,
              ibs_total: 98,
              cbs,
              note_total: noteTotal
            }
          })
          expect(document.authority?.ibs_cbs?.note_total).toBe(noteTotal)

          // Before 2026 there is no IBS/CBS (the authority's E0850): a 400 on our field, nothing taken.
          const local = yield* Authority
          const before = local.received.length
          const early = yield* rawRequest("POST", "/v1/documents", {
            token: tenant.token,
            body: { ...body, issue_date: "2025-12-31" }
          })
          expect(early.status, early.text).toBe(400)
          expect(early.json?.["code"]).toBe("invalid_request")
          expect(early.json?.["issues"]).toEqual([{
            path: ["ibs_cbs"],
            message: "ibs_cbs cannot be computed for this note: IBS/CBS can be declared from the 2026 competence on " +
              "(E0850), not 2025-12-31."
          }])
          expect(local.received.length).toBe(before)
        }))

      it.effect("what the national rules refuse is a 400 on our fields, nothing taken", () =>
        Effect.gen(function*() {
          const tenant = yield* certifiedTenant("refused")
          const local = yield* Authority
          const before = local.received.length
          const cases: ReadonlyArray<readonly [object, string]> = [
            [{ ...exportExample, foreign_trade: undefined }, "foreign_trade"],
            [{ ...exportExample, taker: person }, "taker.nif"],
            [{
              type: "service_invoice",
              taker: person,
              service,
              amounts: { services: 100 },
              iss: { taxation: "immune" }
            }, "iss.immunity"],
            [{ ...b2bWithRetentionsExample, taker: { ...exportExample.taker } }, "taker.tax_id"],
            [{ ...b2bWithRetentionsExample, federal: { irrf_withheld: 2_000_000 } }, "federal"],
            [
              {
                ...b2bWithRetentionsExample,
                amounts: { services: 100, unconditional_discount: 101, iss_rate: "2.00" }
              },
              "amounts.unconditional_discount"
            ],
            // tpRetPisCofins has no code for PIS alone with the CSLL unsaid; CST 48 is not in TSTipoCST.
            ...[
              [{ retention: { pis: true, cofins: false } }, "federal.pis_cofins.retention.csll"],
              [{ retention: { pis: true, cofins: true, csll: false } }, "federal.pis_cofins.retention.csll"],
              [{ withheld: true }, "federal.pis_cofins.withheld"],
              [{ cst: "48" }, "federal.pis_cofins.cst"]
            ].map(([change, field]) =>
              [{
                ...b2bWithRetentionsExample,
                federal: {
                  ...b2bWithRetentionsExample.federal,
                  pis_cofins: { ...b2bWithRetentionsExample.federal.pis_cofins, ...change as object }
                }
              }, field as string] as const
            )
          ]
          // What only the national schema refuses (pAliqPis takes at most 99.99) is named by our field too.
          const schemaCase = {
            ...b2bWithRetentionsExample,
            federal: {
              ...b2bWithRetentionsExample.federal,
              pis_cofins: { ...b2bWithRetentionsExample.federal.pis_cofins, pis_rate: "100" }
            }
          }
          for (const [body, field] of [...cases, [schemaCase, "federal.pis_cofins.pis_rate"] as const]) {
            const response = yield* rawRequest("POST", "/v1/documents", { token: tenant.token, body })
            expect(response.status, response.text).toBe(400)
            expect(response.json?.["code"]).toBe("invalid_request")
            const paths = (response.json?.["issues"] as ReadonlyArray<{ path: ReadonlyArray<string> }>).map((i) =>
              i.path.join(".")
            )
            expect(paths, response.text).toContain(field)
          }
          expect(local.received.length).toBe(before)
        }))

      it.effect("the contract's examples are accepted as they are by the simulator (live keys)", () =>
        Effect.gen(function*() {
          const tenant = yield* certifiedTenant("simulated")
          const live = yield* createKey(tenant.owner, "live")
          for (const example of [b2bWithRetentionsExample, exportExample, reformExample]) {
            const { document, nfse } = yield* issue(live.token, { ...example, reference: undefined })
            expect(document.amounts.source).toBe("note")
            // The simulator holds no certificate: signed here, its note is what the official schema takes.
            if (XMLLINT) {
              const signed = signEnveloped(nfse, {
                element: "infNFSe",
                privateKeyPem: simulatorSigner.privateKeyPem,
                certificatePem: simulatorSigner.certificatePem
              })
              expectSchemaValid(signed, "NFSe_v1.01.xsd")
            }
          }
        }))
    }
  )
}
