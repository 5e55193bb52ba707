/**
 * The lines of an NF-e/NFC-e (`det`): the product (`prod`) and its taxes (`imposto`: ICMS by CST or
 * CSOSN, IPI, PIS, COFINS, the tax reform's IBS/CBS), in the order of the NF-e 4.00 schema (leiauteNFe_v4.00.xsd). Figures
 * come computed (src/domain/GoodsAmounts.ts); this module only writes them.
 */
import * as Result from "effect/Result"
import {
  decimalUnits,
  icmsIsTaxed,
  isTaxedIpi,
  isUntaxedPisCofins,
  type ItemFigures,
  quantityUnits,
  unitPriceUnits
} from "../../domain/GoodsAmounts.js"
import type { ItemIbsCbs } from "../../domain/GoodsIbsCbs.js"
import type { GoodsItem, PisCofinsTax } from "../../domain/GoodsInvoice.js"
import { formatRate, parseRate } from "../../domain/Money.js"
import { formatCentavos, leaf, node, singleLine } from "../xml/XmlText.js"

/** What a homologation NFC-e's first item must be called (the authorities refuse any other, rule 373). */
export const HOMOLOGATION_ITEM = "NOTA FISCAL EMITIDA EM AMBIENTE DE HOMOLOGACAO - SEM VALOR FISCAL"

const WITHOUT_GTIN = "SEM GTIN"

/** A rate as the schema writes it (`TDec_0302a04`: 2 to 4 decimals): "18" → "18.00". */
export const rateText = (rate: string | undefined): string =>
  formatRate(rate === undefined ? 0 : Result.getOrThrow(parseRate(rate)))

/** Ten-thousandths as a decimal with 4 places ("2.0000"), as `TDec_1104v` allows. */
const quantityText = (quantity: string): string => {
  const units = quantityUnits(quantity)
  return `${units / 10_000n}.${String(units % 10_000n).padStart(4, "0")}`
}

/** A unit price in reais with 10 decimals (`TDec_1110v`). */
const unitPriceText = (item: GoodsItem): string => {
  const units = unitPriceUnits(item)
  return `${units / 10_000_000_000n}.${String(units % 10_000_000_000n).padStart(10, "0")}`
}

const optionalAmount = (name: string, centavos: number | undefined): string =>
  centavos === undefined || centavos === 0 ? "" : leaf(name, formatCentavos(centavos))

const product = (item: GoodsItem, figures: ItemFigures, description: string): string => {
  const gtin = item.gtin ?? WITHOUT_GTIN
  const quantity = quantityText(item.quantity)
  const unitPrice = unitPriceText(item)
  return node(
    "prod",
    leaf("cProd", singleLine(item.code)),
    leaf("cEAN", gtin),
    leaf("xProd", description),
    leaf("NCM", item.ncm),
    item.cest === undefined ? "" : leaf("CEST", item.cest),
    leaf("CFOP", item.cfop),
    leaf("uCom", singleLine(item.unit)),
    leaf("qCom", quantity),
    leaf("vUnCom", unitPrice),
    leaf("vProd", formatCentavos(figures.value)),
    leaf("cEANTrib", gtin),
    leaf("uTrib", singleLine(item.unit)),
    leaf("qTrib", quantity),
    leaf("vUnTrib", unitPrice),
    optionalAmount("vFrete", item.freight),
    optionalAmount("vSeg", item.insurance),
    optionalAmount("vDesc", item.discount),
    optionalAmount("vOutro", item.other_expenses),
    // 1: the item's value makes up the note's total (vProd of ICMSTot).
    leaf("indTot", "1")
  )
}

/**
 * modBC 3 (the base is the operation's value), the base, the rate and the tax. A base reduction
 * (pRedBC) sits before the base in ICMS20 and after it in ICMS90 and ICMSSN900.
 */
const taxedIcms = (item: GoodsItem, figures: ItemFigures): Array<string> => {
  const reduction = item.icms.base_reduction === undefined ? "" : leaf("pRedBC", rateText(item.icms.base_reduction))
  const base = leaf("vBC", formatCentavos(figures.icms!.base))
  return [
    leaf("modBC", "3"),
    ...(item.icms.cst === "20" || item.icms.cst === "70" ? [reduction, base] : [base, reduction]),
    leaf("pICMS", rateText(item.icms.rate)),
    leaf("vICMS", formatCentavos(figures.icms!.amount))
  ]
}

/** The substitution by the added-value margin (modBCST 4): the margin, its reduction, the base, the rate and the tax. */
const substitution = (item: GoodsItem, figures: ItemFigures): Array<string> => {
  const st = item.icms.st!
  return [
    leaf("modBCST", "4"),
    leaf("pMVAST", formatRate(Number(decimalUnits(st.margin, 4)))),
    st.base_reduction === undefined ? "" : leaf("pRedBCST", rateText(st.base_reduction)),
    leaf("vBCST", formatCentavos(figures.st!.base)),
    leaf("pICMSST", rateText(st.rate)),
    leaf("vICMSST", formatCentavos(figures.st!.amount))
  ]
}

const icmsGroup = (item: GoodsItem, figures: ItemFigures): string => {
  const { icms } = item
  const origin = leaf("orig", String(icms.origin))
  if (icms.cst !== undefined) {
    const cst = leaf("CST", icms.cst)
    switch (icms.cst) {
      case "00":
        return node("ICMS00", origin, cst, ...taxedIcms(item, figures))
      case "10":
        return node("ICMS10", origin, cst, ...taxedIcms(item, figures), ...substitution(item, figures))
      case "30":
        return node("ICMS30", origin, cst, ...substitution(item, figures))
      case "70":
        return node("ICMS70", origin, cst, ...taxedIcms(item, figures), ...substitution(item, figures))
      case "20":
        return node("ICMS20", origin, cst, ...taxedIcms(item, figures))
      case "40":
      case "41":
      case "50":
        return node("ICMS40", origin, cst)
      case "60":
        return node("ICMS60", origin, cst)
      case "90":
        return node("ICMS90", origin, cst, ...(icmsIsTaxed(icms) ? taxedIcms(item, figures) : []))
    }
  }
  const csosn = leaf("CSOSN", icms.csosn ?? "")
  const credit = figures.icmsCredit === null
    ? []
    : [leaf("pCredSN", rateText(icms.credit_rate)), leaf("vCredICMSSN", formatCentavos(figures.icmsCredit))]
  switch (icms.csosn) {
    case "101":
      return node("ICMSSN101", origin, csosn, ...credit)
    case "201":
      return node("ICMSSN201", origin, csosn, ...substitution(item, figures), ...credit)
    case "202":
    case "203":
      return node("ICMSSN202", origin, csosn, ...substitution(item, figures))
    case "500":
      return node("ICMSSN500", origin, csosn)
    case "900":
      return node("ICMSSN900", origin, csosn, ...(icmsIsTaxed(icms) ? taxedIcms(item, figures) : []), ...credit)
    default:
      return node("ICMSSN102", origin, csosn)
  }
}

const ipiGroup = (item: GoodsItem, figures: ItemFigures): string => {
  const ipi = item.ipi
  if (ipi === undefined) return ""
  const cst = leaf("CST", ipi.cst)
  return node(
    "IPI",
    leaf("cEnq", ipi.framing_code ?? "999"),
    isTaxedIpi(ipi.cst) && figures.ipi !== null
      ? node(
        "IPITrib",
        cst,
        leaf("vBC", formatCentavos(figures.ipi.base)),
        leaf("pIPI", rateText(ipi.rate)),
        leaf("vIPI", formatCentavos(figures.ipi.amount))
      )
      : node("IPINT", cst)
  )
}

const pisCofinsGroup = (tax: "PIS" | "COFINS", declared: PisCofinsTax, figures: ItemFigures["pis"]): string => {
  const cst = leaf("CST", declared.cst)
  if (isUntaxedPisCofins(declared.cst) || figures === null) return node(tax, node(`${tax}NT`, cst))
  const values = [
    leaf("vBC", formatCentavos(figures.base)),
    leaf(`p${tax}`, rateText(declared.rate)),
    leaf(`v${tax}`, formatCentavos(figures.amount))
  ]
  const group = declared.cst === "01" || declared.cst === "02" ? `${tax}Aliq` : `${tax}Outr`
  return node(tax, node(group, cst, ...values))
}

/** A rate in hundredths of a percent as `TDec_0302_04RTC` writes it: 10 → "0.10". */
const reformRate = (hundredths: number): string =>
  `${Math.floor(hundredths / 100)}.${String(hundredths % 100).padStart(2, "0")}`

/** The item's IBS/CBS (`IBSCBS`) with its computed `gIBSCBS`, when it declares the group. */
const reformGroup = (item: GoodsItem, reform: ItemIbsCbs | undefined): string => {
  if (item.ibs_cbs === undefined || reform === undefined) return ""
  const amount = (name: string, centavos: number) => leaf(name, formatCentavos(centavos))
  return node(
    "IBSCBS",
    leaf("CST", item.ibs_cbs.cst),
    leaf("cClassTrib", item.ibs_cbs.class_code),
    node(
      "gIBSCBS",
      amount("vBC", reform.base),
      node("gIBSUF", leaf("pIBSUF", reformRate(reform.rates.stateIbs)), amount("vIBSUF", reform.stateIbs)),
      node("gIBSMun", leaf("pIBSMun", reformRate(reform.rates.municipalIbs)), amount("vIBSMun", reform.municipalIbs)),
      amount("vIBS", reform.ibs),
      node("gCBS", leaf("pCBS", reformRate(reform.rates.cbs)), amount("vCBS", reform.cbs))
    )
  )
}

/** One `det` element; `description` is the item's as the note prints it (see HOMOLOGATION_ITEM). */
export const itemElement = (
  position: number,
  item: GoodsItem,
  figures: ItemFigures,
  description: string,
  reform?: ItemIbsCbs | undefined
): string =>
  `<det nItem="${position}">` +
  product(item, figures, description) +
  node(
    "imposto",
    node("ICMS", icmsGroup(item, figures)),
    ipiGroup(item, figures),
    pisCofinsGroup("PIS", item.pis, figures.pis),
    pisCofinsGroup("COFINS", item.cofins, figures.cofins),
    reformGroup(item, reform)
  ) +
  (item.additional_information === undefined ? "" : leaf("infAdProd", singleLine(item.additional_information))) +
  "</det>"
