/**
 * Which of PIS, COFINS and CSLL the taker withholds: the DPS's `tribFed/piscofins/tpRetPisCofins`.
 *
 * The schema package of 27/07/2026 (NT 007, `TSTipoRetPISCofins`) has ten codes, each naming the
 * three contributions or only PIS and COFINS:
 *
 *   0 none withheld · 1 PIS, COFINS withheld · 2 PIS, COFINS not withheld · 3 all three withheld ·
 *   4 PIS, COFINS withheld, CSLL not · 5 PIS only · 6 COFINS only · 7 COFINS and CSLL ·
 *   8 CSLL only · 9 PIS and CSLL
 *
 * Our JSON says it in words: `{ pis, cofins, csll? }`, where leaving `csll` out is codes 1 and 2
 * (which say nothing of the CSLL) and only those. The earlier boolean `withheld` (true 1, false 2)
 * is still read, as the same codes.
 *
 * The code is declarative: under the same schema `vTotalRet` and `vLiq` count `vRetCP`, `vRetIRRF`,
 * `vRetCSLL` and the ISS withheld, never `vPis`/`vCofins`, which are the contributions due
 * (TaxComputation.ts).
 */
import * as Schema from "effect/Schema"

export const PisCofinsRetention = Schema.Struct({
  pis: Schema.Boolean.annotate({
    description: "Whether the taker withholds PIS; with `cofins` and `csll` it becomes `tpRetPisCofins`."
  }),
  cofins: Schema.Boolean.annotate({
    description: "Whether the taker withholds COFINS; with `pis` and `csll` it becomes `tpRetPisCofins`."
  }),
  csll: Schema.optionalKey(Schema.Boolean.annotate({
    description:
      "Whether the taker withholds CSLL; with `pis` and `cofins` it becomes `tpRetPisCofins`. Leave it out only " +
      "when PIS and COFINS are both withheld or " +
      "both not (codes 1 and 2, which do not speak of the CSLL)."
  }))
}).annotate({
  identifier: "PisCofinsRetention",
  description: "Which contributions the taker withholds: becomes `tpRetPisCofins` (0–9). {pis, cofins} both true " +
    "1, both false 2; with csll: none 0, all 3, PIS+COFINS 4, PIS 5, COFINS 6, COFINS+CSLL 7, CSLL 8, PIS+CSLL 9. " +
    "Declarative: PIS and COFINS do not count in the retentions (`vTotalRet`)."
})
export type PisCofinsRetention = typeof PisCofinsRetention.Type

const key = (pis: boolean, cofins: boolean, csll: boolean | undefined) =>
  `${pis ? "P" : "-"}${cofins ? "C" : "-"}${csll === undefined ? "?" : csll ? "S" : "-"}`

/** tpRetPisCofins by the three answers, exactly the schema's ten codes. */
const CODES: Readonly<Record<string, string>> = {
  "---": "0",
  "PC?": "1",
  "--?": "2",
  "PCS": "3",
  "PC-": "4",
  "P--": "5",
  "-C-": "6",
  "-CS": "7",
  "--S": "8",
  "P-S": "9"
}

/** The code of a retention, or undefined for the combinations the schema has no code for. */
export const retentionCode = (retention: PisCofinsRetention): string | undefined =>
  CODES[key(retention.pis, retention.cofins, retention.csll)]

/** What a code says, the inverse of `retentionCode`; undefined for a code outside 0–9. */
export const retentionOfCode = (code: string): PisCofinsRetention | undefined => {
  const found = Object.entries(CODES).find(([, value]) => value === code)?.[0]
  if (found === undefined) return undefined
  const csll = found[2] === "?" ? {} : { csll: found[2] === "S" }
  return { pis: found[0] === "P", cofins: found[1] === "C", ...csll }
}

/** The declared retention of a `pis_cofins` group: `retention`, or the deprecated boolean `withheld`. */
export const declaredRetention = (pisCofins: {
  readonly retention?: PisCofinsRetention | undefined
  readonly withheld?: boolean | undefined
}): PisCofinsRetention | undefined =>
  pisCofins.retention ??
    (pisCofins.withheld === undefined ? undefined : { pis: pisCofins.withheld, cofins: pisCofins.withheld })

/** Whether the declaration makes the taker withhold anything (a withholder must be identified). */
export const withholdsAny = (retention: PisCofinsRetention | undefined): boolean =>
  retention !== undefined && (retention.pis || retention.cofins || retention.csll === true)
