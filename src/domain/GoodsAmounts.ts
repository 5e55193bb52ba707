/**
 * What a goods invoice's lines and totals come to, in integer centavos: each item's value, ICMS,
 * IPI, PIS and COFINS, and the note's `ICMSTot`. The formulas are the NF-e layout's (the MOC's
 * field rules, the XSD's documentation):
 *
 *   vProd       = qCom × vUnCom, to the centavo
 *   operation   = vProd + vFrete + vSeg + vOutro − vDesc
 *   IPI vBC     = operation;                vIPI  = vBC × pIPI
 *   ICMS vBC    = (operation [+ vIPI when the buyer is the final consumer]) × (1 − pRedBC)
 *   vICMS       = vBC × pICMS;              vCredICMSSN = operation × pCredSN (Simples, CSOSN 101/900)
 *   PIS/COFINS  = (the given base, or operation) × rate
 *   vNF         = ΣvProd − ΣvDesc + ΣvFrete + ΣvSeg + ΣvOutro + ΣvIPI
 *
 * ICMS is inside the price; IPI is added to it (vNF), which is why the IPI enters the ICMS base
 * only of a sale for consumption. Every product and percentage rounds once, half up, to the
 * centavo (the authorities accept the centavo of the rounding: "tolerância de R$ 0,01"); every
 * intermediate value is an exact BigInt.
 */
import * as Result from "effect/Result"
import type { GoodsInvoiceRequest, GoodsItem, PisCofinsTax } from "./GoodsInvoice.js"
import { parseRate } from "./Money.js"

/** Units of a quantity per 1 (4 decimals). */
const QUANTITY_SCALE = 10_000n
/** Units of a unit price per centavo (8 decimals: reais with 10). */
const UNIT_SCALE = 100_000_000n

/** A decimal string as an integer of `decimals` places ("40.5", 4 → 405000). */
export const decimalUnits = (s: string, decimals: number): bigint => {
  const [int = "0", frac = ""] = s.split(".")
  return BigInt(int) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, "0").slice(0, decimals) || "0")
}

/** a / b rounded half up, for non-negative a and positive b. */
const divideHalfUp = (a: bigint, b: bigint): bigint => (a * 2n + b) / (b * 2n)

/** The quantity in ten-thousandths. */
export const quantityUnits = (quantity: string): bigint => decimalUnits(quantity, 4)

/** The unit price in hundred-millionths of a centavo (ten-billionths of a real). */
export const unitPriceUnits = (item: Pick<GoodsItem, "unit_amount" | "unit_amount_decimal">): bigint =>
  item.unit_amount_decimal !== undefined
    ? decimalUnits(item.unit_amount_decimal, 8)
    : BigInt(item.unit_amount ?? 0) * UNIT_SCALE

/** The rate in ten-thousandths of a percent (1 % = 10 000); an absent rate is 0. */
const rateUnits = (rate: string | undefined): bigint =>
  rate === undefined ? 0n : BigInt(Result.getOrThrow(parseRate(rate)))

/** base × rate %, to the centavo. */
const percentOf = (base: number, rate: string | undefined): number =>
  Number(divideHalfUp(BigInt(base) * rateUnits(rate), 1_000_000n))

export interface TaxFigures {
  readonly base: number
  readonly amount: number
}

export interface ItemFigures {
  /** vProd. */
  readonly value: number
  /** vProd + vFrete + vSeg + vOutro − vDesc: may be negative for a discount larger than the rest (refused by the rules). */
  readonly operation: number
  /** null where the item's ICMS group has no base and tax (exempt, not taxed, charged before). */
  readonly icms: TaxFigures | null
  /** The ICMS charged by substitution (vBCST, vICMSST); null without `st`. */
  readonly st: TaxFigures | null
  /** The Simples emitter's ICMS credit passed on (vCredICMSSN); null without a credit rate. */
  readonly icmsCredit: number | null
  /** null without IPI, or with an untaxed CST. */
  readonly ipi: TaxFigures | null
  /** null for the untaxed CSTs (`…NT`). */
  readonly pis: TaxFigures | null
  readonly cofins: TaxFigures | null
}

export interface GoodsTotals {
  readonly icmsBase: number
  readonly icms: number
  /** vBCST and vST: the substitution's bases and tax, part of the total. */
  readonly stBase: number
  readonly st: number
  readonly products: number
  readonly freight: number
  readonly insurance: number
  readonly discount: number
  readonly ipi: number
  readonly pis: number
  readonly cofins: number
  readonly otherExpenses: number
  /** vNF: what the buyer pays. */
  readonly total: number
}

export interface GoodsFigures {
  readonly items: ReadonlyArray<ItemFigures>
  readonly totals: GoodsTotals
}

/** The ICMS groups that carry a base and a tax: CST 00, 10, 20 and 70 always, CST 90 and CSOSN 900 with a rate. */
export const icmsIsTaxed = (icms: GoodsItem["icms"]): boolean =>
  icms.cst === "00" || icms.cst === "10" || icms.cst === "20" || icms.cst === "70" ||
  ((icms.cst === "90" || icms.csosn === "900") && icms.rate !== undefined)

/** PIS/COFINS CSTs of the `…NT` groups (no base, no tax). */
export const isUntaxedPisCofins = (cst: string): boolean => ["04", "05", "06", "07", "08", "09"].includes(cst)

/** The IPI CSTs of `IPITrib`. */
export const isTaxedIpi = (cst: string): boolean => ["00", "49", "50", "99"].includes(cst)

const pisCofinsFigures = (tax: PisCofinsTax, operation: number): TaxFigures | null => {
  if (isUntaxedPisCofins(tax.cst)) return null
  const base = tax.base ?? Math.max(operation, 0)
  return { base, amount: percentOf(base, tax.rate) }
}

/** vProd: quantity × unit price, to the centavo. */
export const itemValue = (item: Pick<GoodsItem, "quantity" | "unit_amount" | "unit_amount_decimal">): number =>
  Number(divideHalfUp(quantityUnits(item.quantity) * unitPriceUnits(item), QUANTITY_SCALE * UNIT_SCALE))

/**
 * The ICMS-ST by the added-value margin (modBCST 4): the base is the goods' value with the IPI, raised
 * by the margin and reduced by pRedBCST, to the centavo; the tax is that base at the destination's
 * rate less the own operation's ICMS (`own`), never below zero.
 */
const substitutionFigures = (icms: GoodsItem["icms"], gross: number, own: number): TaxFigures | null => {
  if (icms.st === undefined) return null
  const margin = decimalUnits(icms.st.margin, 4)
  const base = Number(
    divideHalfUp(BigInt(gross) * (1_000_000n + margin) * (1_000_000n - rateUnits(icms.st.base_reduction)), 10n ** 12n)
  )
  return { base, amount: Math.max(percentOf(base, icms.st.rate) - own, 0) }
}

export const itemFigures = (item: GoodsItem, finalConsumer: boolean): ItemFigures => {
  const value = itemValue(item)
  const operation = value + (item.freight ?? 0) + (item.insurance ?? 0) + (item.other_expenses ?? 0) -
    (item.discount ?? 0)
  const taxable = Math.max(operation, 0)
  const ipi = item.ipi !== undefined && isTaxedIpi(item.ipi.cst)
    ? { base: taxable, amount: percentOf(taxable, item.ipi.rate) }
    : null
  const icms = item.icms
  let icmsFigures: TaxFigures | null = null
  if (icmsIsTaxed(icms)) {
    const gross = taxable + (finalConsumer && ipi !== null ? ipi.amount : 0)
    const reduction = rateUnits(icms.base_reduction)
    const base = Number(divideHalfUp(BigInt(gross) * (1_000_000n - reduction), 1_000_000n))
    icmsFigures = { base, amount: percentOf(base, icms.rate) }
  }
  return {
    value,
    operation,
    icms: icmsFigures,
    st: substitutionFigures(
      icms,
      taxable + (ipi?.amount ?? 0),
      icmsFigures?.amount ?? percentOf(taxable, icms.st?.own_rate)
    ),
    icmsCredit: icms.credit_rate !== undefined && (icms.csosn === "101" || icms.csosn === "201" || icms.csosn === "900")
      ? percentOf(taxable, icms.credit_rate)
      : null,
    ipi,
    pis: pisCofinsFigures(item.pis, operation),
    cofins: pisCofinsFigures(item.cofins, operation)
  }
}

/** Whether the buyer is the final consumer: always on an NFC-e. */
export const isFinalConsumer = (request: Pick<GoodsInvoiceRequest, "type" | "final_consumer">): boolean =>
  request.type === "consumer_invoice" || request.final_consumer === true

export const goodsFigures = (request: GoodsInvoiceRequest): GoodsFigures => {
  const finalConsumer = isFinalConsumer(request)
  const items = request.items.map((item) => itemFigures(item, finalConsumer))
  const sum = (of: (item: GoodsItem, figures: ItemFigures) => number) =>
    request.items.reduce((total, item, i) => total + of(item, items[i]!), 0)
  const products = sum((_, f) => f.value)
  const freight = sum((item) => item.freight ?? 0)
  const insurance = sum((item) => item.insurance ?? 0)
  const discount = sum((item) => item.discount ?? 0)
  const otherExpenses = sum((item) => item.other_expenses ?? 0)
  const ipi = sum((_, f) => f.ipi?.amount ?? 0)
  return {
    items,
    totals: {
      icmsBase: sum((_, f) => f.icms?.base ?? 0),
      icms: sum((_, f) => f.icms?.amount ?? 0),
      stBase: sum((_, f) => f.st?.base ?? 0),
      st: sum((_, f) => f.st?.amount ?? 0),
      products,
      freight,
      insurance,
      discount,
      ipi,
      pis: sum((_, f) => f.pis?.amount ?? 0),
      cofins: sum((_, f) => f.cofins?.amount ?? 0),
      otherExpenses,
      total: products - discount + freight + insurance + otherExpenses + ipi + sum((_, f) => f.st?.amount ?? 0)
    }
  }
}
