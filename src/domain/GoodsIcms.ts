/**
 * The ICMS of a goods invoice's item in our words: by CST (normal regime) or CSOSN (Simples
 * Nacional), with the tax substitution (ICMS-ST) an emitter charges its buyers for the sales down the
 * chain, by the added-value margin (`modBCST` 4). The figures are GoodsAmounts.ts's.
 */
import { Schema } from "effect"

const pattern = (regex: RegExp, message: string) => Schema.String.check(Schema.isPattern(regex, { message }))

/** A percentage the NF-e writes with 2 to 4 decimals (`TDec_0302a04`). */
export const GoodsRate = pattern(
  /^(?:100(?:\.0{1,4})?|[0-9]{1,2}(?:\.[0-9]{1,4})?)$/u,
  "must be a percentage between 0 and 100 as a decimal string with up to 4 decimals, e.g. \"18.00\""
).annotate({
  description: "Percentage as a decimal string, 0 to 100, up to 4 decimals (\"18.00\" = 18 %).",
  examples: ["18.00"]
})

/** A margin the NF-e writes with up to 3 integer digits and 4 decimals (`TDec_0302a04` of `pMVAST`). */
export const MarginRate = pattern(
  /^(?:[0-9]{1,3}(?:\.[0-9]{1,4})?)$/u,
  "must be a percentage between 0 and 999.9999 as a decimal string with up to 4 decimals, e.g. \"40.00\""
)

export const IcmsSt = Schema.Struct({
  margin: MarginRate.annotate({
    description: "The added-value margin (`pMVAST`, MVA), as the agreement (convênio or protocolo) or the state " +
      "sets it for the goods; the ST base is the item's value plus its IPI, raised by it (`modBCST` 4).",
    examples: ["40.00"]
  }),
  rate: GoodsRate.annotate({ description: "The destination state's internal rate for the goods (`pICMSST`)." }),
  base_reduction: Schema.optionalKey(GoodsRate.annotate({
    description: "How much of the ST base is not taxed (`pRedBCST`)."
  })),
  own_rate: Schema.optionalKey(GoodsRate.annotate({
    description: "The rate of the emitter's own operation, whose ICMS the substitution deducts: required with CSOSN " +
      "201, 202 and 203 (the Simples note carries no ICMS of its own); with CST 30 (an exempt or untaxed own " +
      "operation) where the state's rules deduct one, nothing deducted when absent. With CST 10 and 70 the item's " +
      "own `rate` is deducted."
  }))
}).annotate({
  identifier: "IcmsSt",
  description: "The ICMS the emitter charges by substitution (ICMS-ST) with CST 10, 30 and 70 or CSOSN 201, 202 " +
    "and 203: " +
    "`vBCST` = (value + IPI) × (1 + margin) × (1 − base_reduction), `vICMSST` = `vBCST` × rate − the own " +
    "operation's ICMS. Added to the note's total (`vST`)."
})
export type IcmsSt = typeof IcmsSt.Type

export const IcmsOrigin = Schema.Literals([0, 1, 2, 3, 4, 5, 6, 7, 8]).annotate({
  description: "The goods' origin (`orig`): 0 national, 1 imported directly, 2 imported and bought in Brazil, 3–8 " +
    "the other national codes (import content and basic production processes)."
})

export const IcmsCst = Schema.Literals(["00", "10", "20", "30", "40", "41", "50", "60", "70", "90"])
export const IcmsCsosn = Schema.Literals(["101", "102", "103", "201", "202", "203", "300", "400", "500", "900"])

export const Icms = Schema.Struct({
  origin: IcmsOrigin,
  cst: Schema.optionalKey(IcmsCst.annotate({
    description: "The ICMS tax situation of an emitter in the normal regime (`CST`; CRT 2 and 3): 00 taxed, 10 " +
      "taxed and charging the buyers' ICMS by substitution (`st`), 20 with a reduced base, 30 exempt or not taxed " +
      "and charging by substitution, 40 exempt, 41 not taxed, 50 suspended, 60 charged before by substitution, 70 a " +
      "reduced base and substitution, 90 other. Becomes the group `ICMS<cst>` (40, 41 and 50 share `ICMS40`)."
  })),
  csosn: Schema.optionalKey(IcmsCsosn.annotate({
    description: "The ICMS situation of an emitter in the Simples Nacional (`CSOSN`; CRT 1 and 4): 101 with credit " +
      "allowance, 102 without, 103 exempt within its revenue band, 201, 202 and 203 charging the buyers' ICMS by " +
      "substitution (`st`) with credit allowance, without, and exempt within the band, 300 immune, 400 not taxed, " +
      "500 charged before by substitution, 900 other. Becomes `ICMSSN101`, `ICMSSN102` (102, 103, 300, 400), " +
      "`ICMSSN201`, `ICMSSN202` (202, 203), `ICMSSN500` or `ICMSSN900`."
  })),
  rate: Schema.optionalKey(GoodsRate.annotate({
    description: "The ICMS rate (`pICMS`): required with CST 00, 10, 20 and 70; with CST 90 and CSOSN 900 it adds " +
      "the taxed group (`vBC`, `pICMS`, `vICMS`)."
  })),
  base_reduction: Schema.optionalKey(GoodsRate.annotate({
    description: "How much of the base is not taxed (`pRedBC`): required with CST 20 and 70, optional with CST 90 " +
      "and CSOSN 900."
  })),
  credit_rate: Schema.optionalKey(GoodsRate.annotate({
    description: "The rate of the ICMS credit a Simples emitter passes on (`pCredSN`): required with CSOSN 101 " +
      "and 201, optional with 900. The credit (`vCredICMSSN`) is computed."
  })),
  st: Schema.optionalKey(IcmsSt)
}).annotate({
  identifier: "Icms",
  description: "The item's ICMS: exactly one of `cst` (normal regime) or `csosn` (Simples Nacional), as the " +
    "tenant's `registration.crt` requires. The base and the tax are computed."
})
export type Icms = typeof Icms.Type
