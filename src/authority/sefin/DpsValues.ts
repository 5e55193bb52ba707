/**
 * The DPS's `valores` (TCInfoValores) and the foreign-trade group of `serv` (TCComExterior), from a
 * document's amounts and declared tax content, in the schema's order. What each regime may send:
 * - `pAliq` only for a Simples Nacional ME/EPP whose ISS is withheld. Outside the Simples the
 *   municipality's rate applies and an informed one is refused (E0617); an ME/EPP that does not
 *   withhold pays the ISS in the DAS and its notes carry no rate (the real Manaus ME/EPP note);
 *   a MEI never informs one.
 * - `totTrib`: the caller's approximate taxes; by default `indTotTrib` 0 for a MEI and, for the
 *   others (for whom `indTotTrib` is refused, E0712 ME/EPP, E0713 outside the Simples), `vTotTrib`
 *   with the ISS as the municipal amount.
 */
import type { Amounts } from "../../domain/Money.js"
import { declaredRetention, type PisCofinsRetention, retentionCode } from "../../domain/PisCofinsRetention.js"
import type {
  DeductionDocument,
  ForeignTrade,
  IssTaxation,
  IssWithholding,
  TaxDetails
} from "../../domain/TaxContent.js"
import { formatCentavos, leaf, node, singleLine } from "../xml/XmlText.js"

export type SimplesNacionalOption = "not_opted" | "mei" | "me_epp"

/**
 * A rate for `TSDec1V2`/`TSDec2V2`/`TSDec3V2`: two decimals when it has at most two significant
 * ones. A finer rate ("2.125") is written as it is and fails validation rather than being rounded.
 */
export const formatRateForXml = (rate: string): string => {
  const match = /^(\d+)(?:\.(\d*))?$/.exec(rate)
  if (match === null) return rate
  const integer = String(Number(match[1]))
  const fraction = (match[2] ?? "").replace(/0+$/, "")
  return fraction.length <= 2 ? `${integer}.${fraction.padEnd(2, "0")}` : `${integer}.${fraction}`
}

export const taxationCode: Record<IssTaxation, string> = { taxable: "1", immune: "2", export: "3", non_incidence: "4" }
export const withholdingCode: Record<IssWithholding, string> = { none: "1", taker: "2", intermediary: "3" }

const immunityCode = {
  unspecified: "0",
  public_entities: "1",
  temples: "2",
  parties_unions_education_charities: "3",
  books_press: "4",
  brazilian_music_recordings: "5"
} as const

const deductionKindCode: Record<DeductionDocument["kind"], string> = {
  food_and_beverages: "1",
  materials: "2",
  consortium_transfer: "5",
  health_plan_transfer: "6",
  services: "7",
  subcontracted_labour: "8",
  other: "99"
}

const money = (name: string, centavos: number | undefined): string =>
  centavos === undefined ? "" : leaf(name, formatCentavos(centavos))

const percent = (name: string, rate: string | undefined): string =>
  rate === undefined ? "" : leaf(name, formatRateForXml(rate))

/** An optional group: nothing when none of its children is written. */
const group = (name: string, ...children: ReadonlyArray<string>): string =>
  children.every((child) => child === "") ? "" : node(name, ...children)

const deductionDocument = (document: DeductionDocument): string =>
  node(
    "docDedRed",
    document.nfse_key !== undefined
      ? leaf("chNFSe", document.nfse_key)
      : document.nfe_key !== undefined
      ? leaf("chNFe", document.nfe_key)
      : document.fiscal_document_number !== undefined
      ? leaf("nDocFisc", singleLine(document.fiscal_document_number))
      : leaf("nDoc", singleLine(document.document_number ?? "")),
    leaf("tpDedRed", deductionKindCode[document.kind]),
    document.description === undefined ? "" : leaf("xDescOutDed", singleLine(document.description)),
    leaf("dtEmiDoc", document.issued_on),
    money("vDedutivelRedutivel", document.deductible_amount),
    money("vDeducaoReducao", document.amount)
  )

const deductions = (amounts: Amounts, tax: TaxDetails): string => {
  if (tax.deduction_rate !== undefined) return node("vDedRed", percent("pDR", tax.deduction_rate))
  if (tax.deduction_documents !== undefined && tax.deduction_documents.length > 0) {
    return node("vDedRed", node("documentos", ...tax.deduction_documents.map(deductionDocument)))
  }
  return amounts.deductions > 0 ? node("vDedRed", money("vDR", amounts.deductions)) : ""
}

const municipalTaxes = (amounts: Amounts, tax: TaxDetails, option: SimplesNacionalOption): string => {
  const iss = tax.iss ?? {}
  const withheld = (iss.withheld_by ?? "none") !== "none"
  const benefit = iss.municipal_benefit
  return node(
    "tribMun",
    leaf("tribISSQN", taxationCode[iss.taxation ?? "taxable"]),
    iss.result_country === undefined ? "" : leaf("cPaisResult", iss.result_country),
    iss.immunity === undefined ? "" : leaf("tpImunidade", immunityCode[iss.immunity]),
    iss.suspension === undefined ? "" : node(
      "exigSusp",
      leaf("tpSusp", iss.suspension.kind === "judicial" ? "1" : "2"),
      leaf("nProcesso", iss.suspension.process_number)
    ),
    benefit === undefined ? "" : node(
      "BM",
      leaf("nBM", benefit.id),
      money("vRedBCBM", benefit.reduction_amount),
      percent("pRedBCBM", benefit.reduction_rate)
    ),
    leaf("tpRetISSQN", withholdingCode[iss.withheld_by ?? "none"]),
    option === "me_epp" && withheld && amounts.iss_rate !== null ? percent("pAliq", amounts.iss_rate) : ""
  )
}

/** tpRetPisCofins; a combination without a code never gets here (TaxRules refuses it). */
const retentionLeaf = (retention: PisCofinsRetention | undefined): string => {
  const code = retention === undefined ? undefined : retentionCode(retention)
  return code === undefined ? "" : leaf("tpRetPisCofins", code)
}

const federalTaxes = (tax: TaxDetails): string => {
  const federal = tax.federal
  if (federal === undefined) return ""
  const pisCofins = federal.pis_cofins
  return group(
    "tribFed",
    pisCofins === undefined ? "" : node(
      "piscofins",
      leaf("CST", pisCofins.cst),
      money("vBCPisCofins", pisCofins.base),
      percent("pAliqPis", pisCofins.pis_rate),
      percent("pAliqCofins", pisCofins.cofins_rate),
      money("vPis", pisCofins.pis_amount),
      money("vCofins", pisCofins.cofins_amount),
      retentionLeaf(declaredRetention(pisCofins))
    ),
    money("vRetCP", federal.inss_withheld),
    money("vRetIRRF", federal.irrf_withheld),
    money("vRetCSLL", federal.csll_withheld)
  )
}

const totalTaxes = (amounts: Amounts, tax: TaxDetails, option: SimplesNacionalOption): string => {
  const approximate = tax.approximate_taxes
  if (approximate?.amounts !== undefined) {
    return node(
      "totTrib",
      node(
        "vTotTrib",
        money("vTotTribFed", approximate.amounts.federal),
        money("vTotTribEst", approximate.amounts.state),
        money("vTotTribMun", approximate.amounts.municipal)
      )
    )
  }
  if (approximate?.rates !== undefined) {
    return node(
      "totTrib",
      node(
        "pTotTrib",
        percent("pTotTribFed", approximate.rates.federal),
        percent("pTotTribEst", approximate.rates.state),
        percent("pTotTribMun", approximate.rates.municipal)
      )
    )
  }
  if (approximate?.simples_rate !== undefined) {
    return node("totTrib", percent("pTotTribSN", approximate.simples_rate))
  }
  if (option === "mei") return node("totTrib", leaf("indTotTrib", "0"))
  return node(
    "totTrib",
    node(
      "vTotTrib",
      money("vTotTribFed", 0),
      money("vTotTribEst", 0),
      money("vTotTribMun", amounts.iss_amount ?? 0)
    )
  )
}

/** `valores`: the services' value, discounts, deductions and the municipal, federal and total taxes. */
export const valuesElement = (amounts: Amounts, tax: TaxDetails, option: SimplesNacionalOption): string =>
  node(
    "valores",
    node("vServPrest", money("vServ", amounts.services)),
    group(
      "vDescCondIncond",
      amounts.unconditional_discount > 0 ? money("vDescIncond", amounts.unconditional_discount) : "",
      amounts.conditional_discount > 0 ? money("vDescCond", amounts.conditional_discount) : ""
    ),
    deductions(amounts, tax),
    node("trib", municipalTaxes(amounts, tax, option), federalTaxes(tax), totalTaxes(amounts, tax, option))
  )

const modeCode = {
  unknown: "0",
  cross_border: "1",
  consumption_in_brazil: "2",
  commercial_presence_abroad: "3",
  temporary_movement_of_people: "4"
} as const
const relationshipCode = {
  none: "0",
  controlled: "1",
  controlling: "2",
  affiliated: "3",
  head_office: "4",
  branch: "5",
  other: "6",
  unknown: "9"
} as const
const temporaryGoodsCode = { unknown: "0", no: "1", import_declaration: "2", export_declaration: "3" } as const

/** `serv/comExt` for an export; nothing without foreign-trade data. */
export const foreignTradeElement = (trade: ForeignTrade | undefined): string =>
  trade === undefined ? "" : node(
    "comExt",
    leaf("mdPrestacao", modeCode[trade.mode]),
    leaf("vincPrest", relationshipCode[trade.relationship]),
    leaf("tpMoeda", trade.currency),
    money("vServMoeda", trade.foreign_amount),
    leaf("mecAFComexP", trade.provider_support ?? "01"),
    leaf("mecAFComexT", trade.taker_support ?? "01"),
    leaf("movTempBens", temporaryGoodsCode[trade.temporary_goods ?? "no"]),
    trade.import_declaration === undefined ? "" : leaf("nDI", singleLine(trade.import_declaration)),
    trade.export_registration === undefined ? "" : leaf("nRE", singleLine(trade.export_registration)),
    leaf("mdic", trade.share_with_mdic === true ? "1" : "0")
  )
