/**
 * The tax content of a service invoice beyond its amounts, in the API's words: how ISS is taxed and
 * who withholds it, the federal group, the approximate taxes, the foreign-trade data of an export
 * and the parties other than the provider (taker, intermediary). Each field's description names
 * the DPS v1.01 element it becomes (DpsValues.ts, DpsParties.ts write them); the national codes
 * stay in the builder, the API speaks in words.
 *
 * The tax reform group (IBSCBS) has its own module (IbsCbs.ts) and joins `TaxDetails` as
 * `ibs_cbs`, next to `federal`.
 */
import * as Schema from "effect/Schema"
import { described, omittedFromJsonSchema } from "./Described.js"
import { emailAddress } from "./Email.js"
import { IbsCbs } from "./IbsCbs.js"
import { Centavos, Rate } from "./Money.js"
import { PisCofinsRetention } from "./PisCofinsRetention.js"
import { MunicipalityCode, TaxId } from "./TaxId.js"
import { boundedText } from "./Text.js"

const digits = (count: number, field: string) =>
  Schema.String.check(Schema.isPattern(new RegExp(`^[0-9]{${count}}$`, "u"), {
    message: `${field} must have ${count} digits`
  }))

/** ISO 3166-1 alpha-2, as the national schema's `TSCodPaisISO`. */
export const CountryCode = Schema.String.check(
  Schema.isPattern(/^[A-Z]{2}$/u, { message: "must be an ISO 3166-1 alpha-2 country code, e.g. \"US\"" })
).annotate({ description: "ISO 3166-1 alpha-2 country code (\"US\", \"PT\")." })

/**
 * A percentage the schema writes with two decimals and up to three integer digits (`TSDec3V2`):
 * deduction and benefit reductions, approximate taxes.
 */
export const Percentage = Schema.String.check(
  Schema.isPattern(/^(?:0|[1-9][0-9]{0,2})(?:\.[0-9]{1,2})?$/u, {
    message: "must be a percentage with at most 2 decimals, e.g. \"12.50\""
  }),
  Schema.makeFilter((s) => Number(s) <= 100, { message: "must not exceed 100", ...omittedFromJsonSchema })
)

export const NationalAddress = Schema.Struct({
  street: boundedText(125).pipe(described({ description: "Street (logradouro): becomes `xLgr`." })),
  number: boundedText(10).pipe(described({ description: "Number, or \"S/N\": becomes `nro`." })),
  complement: Schema.optionalKey(boundedText(60).pipe(described({ description: "Becomes `xCpl`." }))),
  district: boundedText(60).pipe(described({ description: "District (bairro): becomes `xBairro`." })),
  municipality_code: MunicipalityCode.annotate({ description: "The 7-digit IBGE code: becomes `endNac/cMun`." }),
  state: Schema.String.check(Schema.isPattern(/^[A-Z]{2}$/u, { message: "state must be a 2-letter UF code" }))
    .annotate({
      description: "The state (UF), two capital letters. Not sent: the national system derives it from " +
        "`municipality_code`."
    }),
  postal_code: Schema.String.check(Schema.isPattern(/^[0-9]{8}$/u, { message: "postal_code must have 8 digits" }))
    .annotate({ description: "CEP, 8 digits: becomes `endNac/CEP`." })
}).annotate({ identifier: "Address", description: "An address in Brazil: becomes `end/endNac`." })

export const ForeignAddress = Schema.Struct({
  country: CountryCode.annotate({ description: "Becomes `endExt/cPais`." }),
  postal_code: boundedText(11).pipe(described({ description: "Postal code: becomes `endExt/cEndPost`." })),
  city: boundedText(60).pipe(described({ description: "Becomes `endExt/xCidade`." })),
  region: boundedText(60).pipe(described({ description: "State, province or region: becomes `endExt/xEstProvReg`." })),
  street: boundedText(125).pipe(described({ description: "Becomes `xLgr`." })),
  number: boundedText(10).pipe(described({ description: "Becomes `nro`." })),
  complement: Schema.optionalKey(boundedText(60).pipe(described({ description: "Becomes `xCpl`." }))),
  district: boundedText(60).pipe(described({ description: "Becomes `xBairro`." }))
}).annotate({ identifier: "ForeignAddress", description: "An address abroad: becomes `end/endExt`." })

export const NoNifReason = Schema.Literals(["not_informed", "waived", "not_required"]).annotate({
  description: "Why a foreign party has no NIF: becomes `cNaoNIF` (0 not informed, 1 waived, 2 not required)."
})

/**
 * A taker or an intermediary (`TCInfoPessoa`): identified by exactly one of a Brazilian tax id, a
 * foreign tax id (NIF) or the reason it has none. Which one is present is checked with the rest of
 * the document's rules (TaxRules.ts), so each refusal names its field.
 */
export const Party = Schema.Struct({
  tax_id: Schema.optionalKey(TaxId.pipe(described({
    description: "CPF (11 digits) or CNPJ (14 characters), punctuation optional, checked with its check digits: " +
      "becomes `CPF` or `CNPJ`."
  }))),
  nif: Schema.optionalKey(
    boundedText(40).pipe(described({ description: "Foreign tax id: becomes `NIF`. Needs `foreign_address`." }))
  ),
  no_nif_reason: Schema.optionalKey(NoNifReason),
  municipal_registration: Schema.optionalKey(
    Schema.String.check(Schema.isPattern(/^[0-9A-Za-z]{1,15}$/u, {
      message: "municipal_registration must have 1 to 15 letters or digits"
    })).annotate({ description: "Municipal registration (inscrição municipal): becomes `IM`." })
  ),
  name: boundedText(150).pipe(described({ description: "Name (razão social): becomes `xNome`." })),
  phone: Schema.optionalKey(
    Schema.String.check(Schema.isPattern(/^[0-9]{6,20}$/u, { message: "phone must have 6 to 20 digits" }))
      .annotate({ description: "Digits only: becomes `fone`." })
  ),
  email: Schema.optionalKey(emailAddress(Schema.String).annotate({ description: "Becomes `email`." })),
  address: Schema.optionalKey(NationalAddress),
  foreign_address: Schema.optionalKey(ForeignAddress)
})
export type Party = typeof Party.Type

export const IssTaxation = Schema.Literals(["taxable", "immune", "export", "non_incidence"]).annotate({
  description: "Becomes `tribISSQN`: taxable 1, immune 2, export 3, non_incidence 4. Default taxable."
})
export type IssTaxation = typeof IssTaxation.Type

export const ImmunityKind = Schema.Literals([
  "unspecified",
  "public_entities",
  "temples",
  "parties_unions_education_charities",
  "books_press",
  "brazilian_music_recordings"
]).annotate({
  description: "Becomes `tpImunidade` (CF/88 art. 150 VI): unspecified 0, public_entities 1 (a), temples 2 (b), " +
    "parties_unions_education_charities 3 (c), books_press 4 (d), brazilian_music_recordings 5 (e)."
})

export const IssWithholding = Schema.Literals(["none", "taker", "intermediary"]).annotate({
  description: "Who withholds the ISS: becomes `tpRetISSQN` (none 1, taker 2, intermediary 3). Default none; " +
    "always none for a MEI."
})
export type IssWithholding = typeof IssWithholding.Type

export const IssDetails = Schema.Struct({
  taxation: Schema.optionalKey(IssTaxation),
  immunity: Schema.optionalKey(ImmunityKind),
  withheld_by: Schema.optionalKey(IssWithholding),
  result_country: Schema.optionalKey(
    CountryCode.annotate({
      description: "Export: the country where the service's result is seen: becomes `cPaisResult`."
    })
  ),
  suspension: Schema.optionalKey(
    Schema.Struct({
      kind: Schema.Literals(["judicial", "administrative"]).annotate({
        description: "Becomes `exigSusp/tpSusp` (judicial 1, administrative 2)."
      }),
      process_number: digits(30, "process_number").annotate({ description: "Becomes `exigSusp/nProcesso`." })
    }).annotate({ description: "ISS collection suspended by a decision: becomes `exigSusp`." })
  ),
  municipal_benefit: Schema.optionalKey(
    Schema.Struct({
      id: digits(14, "municipal_benefit.id").annotate({
        description: "The benefit's id in the national system (municipality 7 + kind 2 + sequence 5): becomes `BM/nBM`."
      }),
      reduction_rate: Schema.optionalKey(
        Percentage.annotate({ description: "Base reduction in percent: becomes `BM/pRedBCBM`." })
      ),
      reduction_amount: Schema.optionalKey(Centavos.annotate({ description: "Base reduction: becomes `BM/vRedBCBM`." }))
    }).annotate({ description: "A municipal tax benefit: becomes `BM`." })
  )
}).annotate({ identifier: "IssDetails", description: "How the ISS is taxed: becomes `valores/trib/tribMun`." })
export type IssDetails = typeof IssDetails.Type

/** TSTipoCST of the schema package of 27/07/2026: exactly the codes it enumerates. */
export const PIS_COFINS_CSTS = [
  "00",
  "01",
  "02",
  "03",
  "04",
  "05",
  "06",
  "07",
  "08",
  "09",
  "49",
  "50",
  "51",
  "52",
  "53",
  "54",
  "55",
  "56",
  "60",
  "61",
  "62",
  "63",
  "64",
  "65",
  "66",
  "67",
  "70",
  "71",
  "72",
  "73",
  "74",
  "75",
  "98",
  "99"
] as const

export const PisCofins = Schema.Struct({
  cst: Schema.Literals(PIS_COFINS_CSTS).annotate({
    description: "Tax situation code of PIS/COFINS (the schema's `TSTipoCST`: 00–09, 49–56, 60–67, 70–75, 98, 99): " +
      "becomes `CST`."
  }),
  base: Schema.optionalKey(
    Centavos.annotate({ description: "The provider's own PIS/COFINS base; becomes `vBCPisCofins`." })
  ),
  pis_rate: Schema.optionalKey(Rate.annotate({ description: "Becomes `pAliqPis` (at most 99.99, 2 decimals)." })),
  cofins_rate: Schema.optionalKey(Rate.annotate({ description: "Becomes `pAliqCofins` (at most 99.99, 2 decimals)." })),
  pis_amount: Schema.optionalKey(
    Centavos.annotate({ description: "The PIS due by the provider (not what is withheld): becomes `vPis`." })
  ),
  cofins_amount: Schema.optionalKey(
    Centavos.annotate({ description: "The COFINS due by the provider (not what is withheld): becomes `vCofins`." })
  ),
  retention: Schema.optionalKey(PisCofinsRetention),
  withheld: Schema.optionalKey(Schema.Boolean.annotate({
    description:
      "Deprecated: use `retention`. Becomes `tpRetPisCofins`: true is `{pis: true, cofins: true}` (1), false " +
      "`{pis: false, cofins: false}` (2). Not together with `retention`."
  }))
}).annotate({ identifier: "PisCofins", description: "Becomes `tribFed/piscofins`." })

export const FederalTaxes = Schema.Struct({
  pis_cofins: Schema.optionalKey(PisCofins),
  inss_withheld: Schema.optionalKey(
    Centavos.annotate({ description: "Social security (CP/INSS) withheld: becomes `vRetCP`." })
  ),
  irrf_withheld: Schema.optionalKey(Centavos.annotate({ description: "Income tax withheld: becomes `vRetIRRF`." })),
  csll_withheld: Schema.optionalKey(Centavos.annotate({ description: "CSLL withheld: becomes `vRetCSLL`." }))
}).annotate({ identifier: "FederalTaxes", description: "The federal group: becomes `valores/trib/tribFed`." })
export type FederalTaxes = typeof FederalTaxes.Type

/** Federal, state and municipal parts, each named after the element it becomes (`…Fed`, `…Est`, `…Mun`). */
const TaxSplit = <S extends Schema.Top>(value: S, element: string, what: string) =>
  Schema.Struct({
    federal: value.annotate({ description: `Federal ${what}: becomes \`${element}Fed\`.` }),
    state: value.annotate({ description: `State ${what}: becomes \`${element}Est\`.` }),
    municipal: value.annotate({ description: `Municipal ${what}: becomes \`${element}Mun\`.` })
  })

export const ApproximateTaxes = Schema.Struct({
  amounts: Schema.optionalKey(
    TaxSplit(Centavos, "vTotTrib", "taxes, in centavos").annotate({
      description:
        "Approximate tax amounts (Lei 12.741/2012): become `totTrib/vTotTrib` (vTotTribFed, vTotTribEst, vTotTribMun)."
    })
  ),
  rates: Schema.optionalKey(
    TaxSplit(Percentage, "pTotTrib", "taxes, in percent").annotate({
      description: "Approximate tax percentages: become `totTrib/pTotTrib` (pTotTribFed, pTotTribEst, pTotTribMun)."
    })
  ),
  simples_rate: Schema.optionalKey(
    Percentage.annotate({
      description: "The Simples Nacional approximate rate: becomes `totTrib/pTotTribSN` (at most 99.99)."
    })
  )
}).annotate({
  identifier: "ApproximateTaxes",
  description:
    "The approximate taxes (Lei 12.741/2012): becomes `totTrib`. At most one of `amounts`, `rates`, `simples_rate`. Absent: a MEI declares `indTotTrib` 0; others " +
    "declare `vTotTrib` with the ISS as the municipal amount."
})
export type ApproximateTaxes = typeof ApproximateTaxes.Type

export const ForeignTrade = Schema.Struct({
  mode: Schema.Literals([
    "unknown",
    "cross_border",
    "consumption_in_brazil",
    "commercial_presence_abroad",
    "temporary_movement_of_people"
  ]).annotate({ description: "Becomes `mdPrestacao` (0 to 4, in this order)." }),
  relationship: Schema.Literals([
    "none",
    "controlled",
    "controlling",
    "affiliated",
    "head_office",
    "branch",
    "other",
    "unknown"
  ]).annotate({ description: "Link between the parties: becomes `vincPrest` (0 to 6, unknown 9)." }),
  currency: digits(3, "currency").annotate({
    description: "BACEN currency code (\"220\" US dollar): becomes `tpMoeda`."
  }),
  foreign_amount: Centavos.annotate({
    description: "The service's value in that currency, in hundredths: becomes `vServMoeda`."
  }),
  provider_support: Schema.optionalKey(
    digits(2, "provider_support").annotate({
      description:
        "Export support mechanism used by the provider, national code 00 to 08: becomes `mecAFComexP`. Default 01 (none)."
    })
  ),
  taker_support: Schema.optionalKey(
    digits(2, "taker_support").annotate({
      description: "Support mechanism used by the taker, national code: becomes `mecAFComexT`. Default 01 (none)."
    })
  ),
  temporary_goods: Schema.optionalKey(
    Schema.Literals(["unknown", "no", "import_declaration", "export_declaration"]).annotate({
      description: "Link to a temporary movement of goods: becomes `movTempBens` (0 to 3). Default no."
    })
  ),
  import_declaration: Schema.optionalKey(
    boundedText(12).pipe(described({ description: "Import declaration number: becomes `nDI`." }))
  ),
  export_registration: Schema.optionalKey(
    boundedText(12).pipe(described({ description: "Export registration number: becomes `nRE`." }))
  ),
  share_with_mdic: Schema.optionalKey(
    Schema.Boolean.annotate({
      description: "Share the note with the foreign-trade secretariat: becomes `mdic`. Default false."
    })
  )
}).annotate({ identifier: "ForeignTrade", description: "Foreign-trade data of an export: becomes `serv/comExt`." })
export type ForeignTrade = typeof ForeignTrade.Type

export const DeductionKind = Schema.Literals([
  "food_and_beverages",
  "materials",
  "consortium_transfer",
  "health_plan_transfer",
  "services",
  "subcontracted_labour",
  "other"
]).annotate({ description: "Becomes `tpDedRed`: 1, 2, 5, 6, 7, 8, other 99." })

export const DeductionDocument = Schema.Struct({
  nfse_key: Schema.optionalKey(
    digits(50, "nfse_key").annotate({ description: "A national NFS-e's access key: becomes `chNFSe`." })
  ),
  nfe_key: Schema.optionalKey(digits(44, "nfe_key").annotate({ description: "An NF-e: becomes `chNFe`." })),
  fiscal_document_number: Schema.optionalKey(
    boundedText(255).pipe(described({ description: "Another fiscal document's number: becomes `nDocFisc`." }))
  ),
  document_number: Schema.optionalKey(
    boundedText(255).pipe(described({ description: "A non-fiscal document's number: becomes `nDoc`." }))
  ),
  kind: DeductionKind,
  description: Schema.optionalKey(
    boundedText(150).pipe(described({ description: "Required for `other`: becomes `xDescOutDed`." }))
  ),
  issued_on: Schema.String.check(Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/u, { message: "issued_on must be YYYY-MM-DD" }))
    .annotate({ description: "Becomes `dtEmiDoc`." }),
  deductible_amount: Centavos.annotate({
    description: "The document's deductible total: becomes `vDedutivelRedutivel`."
  }),
  amount: Centavos.annotate({ description: "What this note deducts from it: becomes `vDeducaoReducao`." })
}).annotate({ identifier: "DeductionDocument", description: "Becomes `vDedRed/documentos/docDedRed`." })
export type DeductionDocument = typeof DeductionDocument.Type

/** What a document declares beyond amounts and parties; stored with it, empty for the plain note. */
export const TaxDetails = Schema.Struct({
  iss: Schema.optionalKey(IssDetails),
  federal: Schema.optionalKey(FederalTaxes),
  approximate_taxes: Schema.optionalKey(ApproximateTaxes),
  foreign_trade: Schema.optionalKey(ForeignTrade),
  deduction_rate: Schema.optionalKey(Percentage.annotate({ description: "Becomes `vDedRed/pDR`." })),
  deduction_documents: Schema.optionalKey(Schema.Array(DeductionDocument)),
  ibs_cbs: Schema.optionalKey(IbsCbs)
}).annotate({
  identifier: "TaxDetails",
  description: "The tax content declared with the document (the payload's `iss`, `federal`, `approximate_taxes`, " +
    "`foreign_trade`, `ibs_cbs`, `amounts.deduction_rate` and `amounts.deduction_documents`)."
})
export type TaxDetails = typeof TaxDetails.Type

/** The payload's `amounts`: what the caller declares; the rest is computed (TaxComputation.ts). */
export const AmountsInput = Schema.Struct({
  // `>= 1` rather than `> 0`: the same for whole centavos, and documented as one `minimum`.
  services: Centavos.check(Schema.isGreaterThanOrEqualTo(1, { message: "services must be more than zero centavos" }))
    .annotate({ description: "The services' value in centavos: becomes `vServPrest/vServ`." }),
  unconditional_discount: Schema.optionalKey(
    Centavos.annotate({
      description: "Becomes `vDescCondIncond/vDescIncond`; lowers the ISS base and the net value."
    })
  ),
  conditional_discount: Schema.optionalKey(
    Centavos.annotate({ description: "Becomes `vDescCondIncond/vDescCond`; lowers the net value only." })
  ),
  deductions: Schema.optionalKey(Centavos.annotate({
    description: "Deductions/reductions of the base in centavos: becomes `vDedRed/vDR`. At most one of " +
      "`deductions`, `deduction_rate`, `deduction_documents`."
  })),
  deduction_rate: Schema.optionalKey(
    Percentage.annotate({ description: "Deductions as a percentage of the services' value: becomes `vDedRed/pDR`." })
  ),
  deduction_documents: Schema.optionalKey(
    Schema.Array(DeductionDocument).check(Schema.isMinLength(1), Schema.isMaxLength(1000)).annotate({
      description: "The documents behind the deductions: become `vDedRed/documentos/docDedRed`."
    })
  ),
  iss_rate: Schema.optionalKey(Rate.annotate({
    description: "The ISS rate. Outside the Simples Nacional: optional, the municipality's rate the service " +
      "expects (used for `iss_amount`, never sent: the national system applies its own, E0617); required when the " +
      "ISS is withheld. ME/EPP: required and becomes `pAliq` when the ISS is withheld, refused otherwise (the ISS " +
      "is paid in the DAS). MEI: refused. Refused when `iss.taxation` is not `taxable`. At most 9.99 with 2 decimals, as " +
      "`pAliq`/`pAliqAplic` hold it."
  }))
}).annotate({
  identifier: "AmountsInput",
  description: "The service's amounts in centavos and the tax details the note needs: becomes `valores`."
})
