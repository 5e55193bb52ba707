/**
 * Money and tax rates for service invoices (NFS-e).
 *
 * Amounts are integer centavos and rates are decimal strings; binary floating point never touches
 * either, because one centavo of drift is enough for the authority to reject an invoice.
 *
 * Rates are held as integer ten-thousandths of a percent (RATE_SCALE units = 1 %), so "2.5" is
 * 25_000 and the 4 decimals a municipal ISS rate can carry are represented exactly.
 *
 * What a note's amounts come to (base, ISS, retentions, net value) is TaxComputation.ts.
 */
import * as Data from "effect/Data"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"

/** R$ 100 billion: far above any invoice, and well inside Number.MAX_SAFE_INTEGER. */
export const MAX_CENTAVOS = 10_000_000_000_000

// Schema.Number + int() rather than Schema.Int keeps the JSON Schema inline ("type": "integer")
// instead of a $ref to a shared "Int" definition.
export const Centavos = Schema.Number.check(
  Schema.isInt({ message: "amount must be an integer number of centavos" }),
  Schema.isGreaterThanOrEqualTo(0, { message: "amount must be a non-negative integer number of centavos" }),
  Schema.isLessThanOrEqualTo(MAX_CENTAVOS, { message: `amount must not exceed ${MAX_CENTAVOS} centavos` })
).annotate({
  title: "Centavos",
  description: "Amount in centavos (integer minor units of BRL), e.g. 150000 = R$ 1.500,00",
  examples: [150000]
})
export type Centavos = typeof Centavos.Type

/** Units of the exact rate representation per 1 %. */
export const RATE_SCALE = 10_000
const RATE_DECIMALS = 4

// Two integer digits cap the rate below 100, so 100 itself is spelled out.
const RATE_PATTERN = /^(?:100(?:\.0{1,4})?|[0-9]{1,2}(?:\.[0-9]{1,4})?)$/u
const RATE_MESSAGE =
  "iss_rate must be a percentage between 0 and 100 as a decimal string with up to 4 decimals, e.g. \"2.00\""

/**
 * Percentage as a decimal string ("2.00" = 2 %). Validation only bounds it to 0..100; which rate a
 * service actually carries (ISS is 2 %..5 % by law) is the municipality's rule, not ours.
 */
export const Rate = Schema.String.check(Schema.isPattern(RATE_PATTERN, { message: RATE_MESSAGE })).annotate({
  description: "Percentage as a decimal string, 0 to 100, up to 4 decimals (\"2.00\" = 2 %)",
  examples: ["2.00", "5", "3.5"]
})
export type Rate = typeof Rate.Type

export class InvalidAmounts extends Data.TaggedError("InvalidAmounts")<{
  readonly message: string
  /** Path of the offending field in the document, for 400 `issues`. */
  readonly path: ReadonlyArray<string>
}> {}

/** "2.5" -> 25_000 (ten-thousandths of a percent), by string arithmetic only. */
export const parseRate = (s: string): Result.Result<number, InvalidAmounts> => {
  if (!RATE_PATTERN.test(s)) {
    return Result.fail(new InvalidAmounts({ message: RATE_MESSAGE, path: ["amounts", "iss_rate"] }))
  }
  const [int, frac = ""] = s.split(".")
  return Result.succeed(Number(int) * RATE_SCALE + Number(frac.padEnd(RATE_DECIMALS, "0")))
}

/** 25_000 -> "2.50": at least 2 decimals, further ones only when significant. */
export const formatRate = (tenThousandths: number): string => {
  const int = Math.trunc(tenThousandths / RATE_SCALE)
  // Dropping at most two trailing zeros of the 4-digit fraction leaves at least 2 decimals.
  const frac = String(tenThousandths % RATE_SCALE).padStart(RATE_DECIMALS, "0").replace(/0{1,2}$/, "")
  return `${int}.${frac}`
}

/** Canonical spelling of a rate: "2" / "2.0" / "02.00" -> "2.00", "2.1250" -> "2.125". */
export const normalizeRate = (s: string): Result.Result<string, InvalidAmounts> => Result.map(parseRate(s), formatRate)

/** Rate string decoded to its exact integer ten-thousandths; encodes back to canonical form. */
export const RateTenThousandths = Rate.pipe(
  Schema.decodeTo(
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100 * RATE_SCALE })),
    SchemaTransformation.transform({ decode: (s) => Result.getOrThrow(parseRate(s)), encode: formatRate })
  )
)

const nullable = <S extends Schema.Top>(schema: S, description: string) =>
  Schema.NullOr(schema).annotate({ description })

const IbsCbsRate = Schema.String.check(Schema.isPattern(/^[0-9]{1,3}\.[0-9]{2}$/u)).annotate({
  description: "Percentage with two decimals, as the NFS-e writes it (\"0.90\")."
})

/**
 * The IBS/CBS of a note (the NFS-e's `IBSCBS`): the service's estimate before authorization, the
 * note's own figures after (IbsCbsFigures.ts).
 */
export const IbsCbsFigures = Schema.Struct({
  base: Centavos.annotate({ description: "The IBS/CBS base: `IBSCBS/valores/vBC`." }),
  cbs_rate: IbsCbsRate.annotate({ description: "Effective CBS rate: `valores/fed/pAliqEfetCBS`." }),
  state_ibs_rate: IbsCbsRate.annotate({ description: "Effective state IBS rate: `valores/uf/pAliqEfetUF`." }),
  municipal_ibs_rate: IbsCbsRate.annotate({
    description: "Effective municipal IBS rate: `valores/mun/pAliqEfetMun`."
  }),
  cbs: Centavos.annotate({ description: "CBS: `totCIBS/gCBS/vCBS`." }),
  state_ibs: Centavos.annotate({ description: "State IBS: `totCIBS/gIBS/gIBSUFTot/vIBSUF`." }),
  municipal_ibs: Centavos.annotate({ description: "Municipal IBS: `totCIBS/gIBS/gIBSMunTot/vIBSMun`." }),
  ibs_total: Centavos.annotate({ description: "State plus municipal IBS: `totCIBS/gIBS/vIBSTot`." }),
  note_total: Centavos.annotate({
    description: "The note's total with IBS/CBS: `totCIBS/vTotNF` (the net value in 2026, plus CBS and IBS from 2027)."
  })
}).annotate({
  identifier: "IbsCbsFigures",
  description: "The IBS/CBS amounts of the NFS-e's `IBSCBS` group, in centavos."
})
export type IbsCbsFigures = typeof IbsCbsFigures.Type

/**
 * A document's amounts (TaxComputation.ts): what the caller declared and what it comes to. Before
 * authorization every figure is the service's computation (`source` "computed"); once the note is
 * authorized, base, rate, ISS, retentions and net value are the note's own (`source` "note").
 */
export const Amounts = Schema.Struct({
  source: Schema.Literals(["computed", "note"]).annotate({
    description: "`computed`: the service's computation (before authorization). `note`: every figure the " +
      "authorized NFS-e states is its own: `base`, `iss_rate`, `iss_amount`, `total_withheld`, `net` are its " +
      "`vBC`, `pAliqAplic`, `vISSQN`, `vTotalRet`, `vLiq`; `deductions`, `benefit_reduction` its `vCalcDR`, " +
      "`vCalcBM`; the discounts, `iss_withheld` and `federal_withheld` come from its DPS's values as the note " +
      "carries them."
  }),
  services: Centavos.annotate({ description: "Becomes `vServ`." }),
  unconditional_discount: Centavos.annotate({ description: "Becomes `vDescIncond`; lowers the ISS base." }),
  conditional_discount: Centavos.annotate({ description: "Becomes `vDescCond`; lowers the net value only." }),
  deductions: Centavos.annotate({ description: "Deductions/reductions in reais: the note's `vCalcDR`." }),
  benefit_reduction: Centavos.annotate({ description: "Base reduction by a municipal benefit: the note's `vCalcBM`." }),
  base: Centavos.annotate({ description: "ISS base, the note's `vBC`." }),
  iss_rate: nullable(
    Rate,
    "ISS rate (`pAliq`, the note's `pAliqAplic`); null when not known (not sent, not computed)."
  ),
  iss_amount: nullable(
    Centavos,
    "ISS (`vISSQN`); null when the ISS is not computed on the note (Simples " +
      "Nacional without withholding, immunity, export, non-incidence, unknown rate)."
  ),
  iss_withheld: Centavos.annotate({
    description: "ISS withheld by the taker or intermediary: the ISS (`vISSQN`) when `tpRetISSQN` is 2 or 3, else 0."
  }),
  federal_withheld: Centavos.annotate({
    description: "`vRetCP` + `vRetIRRF` + `vRetCSLL`. PIS/COFINS (`vPis`, `vCofins`) are the contributions due, " +
      "never counted as withheld."
  }),
  total_withheld: Centavos.annotate({ description: "All retentions: the note's `vTotalRet`." }),
  net: Centavos.annotate({ description: "What the taker pays the provider: the note's `vLiq`." }),
  total: Centavos.annotate({ description: "The invoice total: the services' value." }),
  ibs_cbs: Schema.optionalKey(
    Schema.NullOr(IbsCbsFigures).annotate({
      description: "The IBS/CBS, for a document with `ibs_cbs`: with `source` \"note\", the authorized NFS-e's own " +
        "`IBSCBS` figures; before, the service's estimate, null when the competence year's rates are not all " +
        "published (the authority computes them). Absent without the group."
    })
  )
}).annotate({ identifier: "Amounts", description: "The document's amounts in centavos, with the rates used." })
export type Amounts = typeof Amounts.Type
