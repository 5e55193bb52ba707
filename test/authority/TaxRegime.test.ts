/**
 * The tenant's Simples Nacional option reaches the national system (issue 9): set with
 * `PATCH /v1/tenants/{id}`, it decides what every DPS the `sefin` adapter sends declares, checked on
 * what the protocol-faithful local authority received over mutual TLS. ME/EPP: `opSimpNac` 3 with
 * `regApTribSN`, the ISS rate (`pAliq`) only when the ISS is withheld; MEI: `opSimpNac` 2 and
 * `indTotTrib` 0, no rate; outside the Simples (the default): `opSimpNac` 1, no rate, the
 * approximate taxes. A change applies to the next document sent.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { writePatchedSchemas } from "../../src/authority/xml/Xsd.js"
import type { SimplesNacional } from "../../src/domain/Tenant.js"
import { Authority, certifiedTenant, nationalApp, settle } from "../support/NationalApp.js"
import { rawRequest, type TestDatabase, testDatabases } from "../support/TestApp.js"
import { hasTool } from "../support/tools.js"

const hasXmllint = hasTool("xmllint")

const appOn = (database: TestDatabase) => nationalApp(database, { callTimeout: Duration.seconds(5) })

const setRegime = (owner: { session: string; tenantId: string }, option: SimplesNacional) =>
  Effect.gen(function*() {
    const response = yield* rawRequest("PATCH", `/v1/tenants/${owner.tenantId}`, {
      token: owner.session,
      body: { simples_nacional: option }
    })
    expect(response.status, response.text).toBe(200)
    expect(response.json?.["simples_nacional"]).toBe(option)
  })

const invoice = {
  type: "service_invoice",
  taker: { tax_id: "529.982.247-25", name: "Maria José da Conceição" },
  service: {
    code: "010101",
    nbs_code: "115013000",
    description: "Análise e desenvolvimento de sistemas",
    municipality_code: "3550308"
  },
  amounts: { services: 150000, deductions: 0, iss_rate: "2.00" }
}

/** The same note without a rate: what a provider of the Simples sends when nothing is withheld. */
const withoutRate = { ...invoice, amounts: { services: 150000 } }

/** The taker withholds the ISS: the rate is informed. */
const withheld = { ...invoice, iss: { withheld_by: "taker" } }

/** Issues one document with the test key and waits for it to be authorized; its number and the DPS the authority received. */
const issue = (tenant: { taxId: string; token: string }, body: object = invoice) =>
  Effect.gen(function*() {
    const local = yield* Authority
    const accepted = yield* rawRequest("POST", "/v1/documents", { token: tenant.token, body })
    expect(accepted.status, accepted.text).toBe(202)
    const id = String(accepted.json?.["id"])
    const document = yield* settle(tenant.token, id, ["authorized", "rejected", "failed"])
    expect(document.status, JSON.stringify(document.rejection ?? document.last_error)).toBe("authorized")
    // The DPS id ends with the series (5 digits) and the number (15): this document's, from this issuer.
    const suffix = `${tenant.taxId}00001${String(document.number).padStart(15, "0")}"`
    const sent = local.received.filter((r) =>
      r.operation === "submitDps" && r.clientTaxId === tenant.taxId && r.xml?.includes(suffix)
    )
    expect(sent).toHaveLength(1)
    const nfse = yield* rawRequest("GET", `/v1/documents/${id}/xml`, { token: tenant.token })
    expect(nfse.status).toBe(200)
    return { dps: sent[0]!.xml!, nfse: nfse.text }
  })

/** What a DPS declares about the issuer's regime, the ISS rate and the approximate taxes. */
const regimeOf = (dps: string) => ({
  regTrib: /<regTrib>(.*?)<\/regTrib>/.exec(dps)?.[1],
  pAliq: /<pAliq>(.*?)<\/pAliq>/.exec(dps)?.[1],
  totTrib: /<totTrib>(.*?)<\/totTrib>/.exec(dps)?.[1]
})

/** Checks the DPS against the official schema with xmllint, a validator we did not write. */
const expectSchemaValid = (dps: string) => {
  if (!hasXmllint) return
  const dir = mkdtempSync(join(tmpdir(), "etd-regime-"))
  writeFileSync(join(dir, "dps.xml"), dps)
  const schemas = writePatchedSchemas(join(dir, "xsd"))
  execFileSync("xmllint", ["--noout", "--schema", join(schemas, "DPS_v1.01.xsd"), join(dir, "dps.xml")], {
    stdio: "pipe"
  })
}

for (const database of testDatabases) {
  layer(appOn(database), { timeout: 300_000, excludeTestServices: true })(
    `the tenant's Simples Nacional option in the DPS (${database})`,
    (it) => {
      it.effect("ME/EPP: opSimpNac 3, regApTribSN 1, the ISS rate in pAliq when withheld, and the approximate taxes", () =>
        Effect.gen(function*() {
          const tenant = yield* certifiedTenant("meepp")
          yield* setRegime(tenant.owner, "me_epp")
          // Not withheld, the rate is refused on our field: the ISS is paid in the DAS.
          const refused = yield* rawRequest("POST", "/v1/documents", { token: tenant.token, body: invoice })
          expect(refused.status, refused.text).toBe(400)
          expect(refused.text).toContain("amounts.iss_rate")
          const plain = yield* issue(tenant, withoutRate)
          expect(regimeOf(plain.dps).pAliq).toBeUndefined()
          expect(plain.nfse).toContain("<valores><vLiq>1500.00</vLiq></valores>")
          const { dps, nfse } = yield* issue(tenant, withheld)
          expect(regimeOf(dps)).toEqual({
            regTrib: "<opSimpNac>3</opSimpNac><regApTribSN>1</regApTribSN><regEspTrib>0</regEspTrib>",
            pAliq: "2.00",
            totTrib:
              "<vTotTrib><vTotTribFed>0.00</vTotTribFed><vTotTribEst>0.00</vTotTribEst><vTotTribMun>30.00</vTotTribMun></vTotTrib>"
          })
          // The note the authority issued embeds that declaration.
          expect(nfse).toContain("<opSimpNac>3</opSimpNac>")
          expectSchemaValid(dps)
        }))

      it.effect("MEI: opSimpNac 2 and indTotTrib 0, no ISS rate", () =>
        Effect.gen(function*() {
          const tenant = yield* certifiedTenant("mei")
          yield* setRegime(tenant.owner, "mei")
          const { dps, nfse } = yield* issue(tenant, withoutRate)
          expect(regimeOf(dps)).toEqual({
            regTrib: "<opSimpNac>2</opSimpNac><regEspTrib>0</regEspTrib>",
            pAliq: undefined,
            totTrib: "<indTotTrib>0</indTotTrib>"
          })
          expect(nfse).toContain("<opSimpNac>2</opSimpNac>")
          expectSchemaValid(dps)
        }))

      it.effect("outside the Simples by default (opSimpNac 1, no rate); a change applies to the next document", () =>
        Effect.gen(function*() {
          const tenant = yield* certifiedTenant("regime")
          const first = yield* issue(tenant)
          expect(regimeOf(first.dps)).toEqual({
            regTrib: "<opSimpNac>1</opSimpNac><regEspTrib>0</regEspTrib>",
            pAliq: undefined,
            totTrib:
              "<vTotTrib><vTotTribFed>0.00</vTotTribFed><vTotTribEst>0.00</vTotTribEst><vTotTribMun>30.00</vTotTribMun></vTotTrib>"
          })

          yield* setRegime(tenant.owner, "me_epp")
          const second = yield* issue(tenant, withheld)
          expect(regimeOf(second.dps).regTrib).toBe(
            "<opSimpNac>3</opSimpNac><regApTribSN>1</regApTribSN><regEspTrib>0</regEspTrib>"
          )
          expect(regimeOf(second.dps).pAliq).toBe("2.00")

          yield* setRegime(tenant.owner, "not_opted")
          const third = yield* issue(tenant)
          expect(regimeOf(third.dps).regTrib).toBe("<opSimpNac>1</opSimpNac><regEspTrib>0</regEspTrib>")
          expect(regimeOf(third.dps).pAliq).toBeUndefined()
        }))
    }
  )
}
