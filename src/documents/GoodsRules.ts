/**
 * The rules a goods invoice must follow before anything is taken, beyond what the payload's schema
 * says: which fields go together (an ICMS rate with the CSTs that tax, CSOSN for a Simples emitter),
 * what the NF-e and the NFC-e each allow, the CFOP against where the goods go, the payments against
 * the total, and text the NF-e can carry (its schema takes Latin-1 only). Each refusal names the
 * request's own field; every refusal found is reported at once. Where the authorities' rejection
 * code for a rule is known it is cited. The emitter's side is GoodsEmitter.ts's.
 */
import * as Result from "effect/Result"
import { InvalidRequest } from "../domain/Errors.js"
import { goodsFigures, isTaxedIpi, isUntaxedPisCofins, itemFigures, itemValue } from "../domain/GoodsAmounts.js"
import type { GoodsInvoiceRequest, GoodsIssuer, GoodsItem, PisCofinsTax } from "../domain/GoodsInvoice.js"
import { ibsCbsRatesFor } from "../domain/IbsCbsRates.js"
import { MAX_CENTAVOS } from "../domain/Money.js"
import { municipalityOf } from "../domain/Municipalities.js"
import { ufOfMunicipality } from "../domain/Registration.js"
import { brazilianDate } from "../domain/Time.js"

export interface Refusal {
  readonly path: ReadonlyArray<string | number>
  readonly message: string
}

export const MAX_ISSUES = 20

// The NF-e's `TString`: printable Latin-1 ([ -ÿ]); tabs and line breaks are written as spaces.
const NOT_LATIN1 = /[^\t\n\r\u0020-\u00FF]/u
const LATIN1_MESSAGE = "must be written in Latin characters (ISO 8859-1): the NF-e takes no others"

/** Every string of a value that the NF-e could not carry, with its path. */
export const latin1Refusals = (value: unknown, path: ReadonlyArray<string | number>): Array<Refusal> => {
  if (typeof value === "string") return NOT_LATIN1.test(value) ? [{ path, message: LATIN1_MESSAGE }] : []
  if (Array.isArray(value)) return value.flatMap((item, i) => latin1Refusals(item, [...path, i]))
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([key, item]) => latin1Refusals(item, [...path, key]))
  }
  return []
}

/** The GS1 check digit: weights 3 and 1 from the right of the body. */
export const isValidGtin = (gtin: string): boolean => {
  let sum = 0
  for (let i = gtin.length - 2, weight = 3; i >= 0; i--, weight = 4 - weight) sum += Number(gtin[i]) * weight
  return (10 - (sum % 10)) % 10 === Number(gtin[gtin.length - 1])
}

// ---------------------------------------------------------------------------------------------
// The sale

const usesCsosn = (issuer: GoodsIssuer) => issuer.crt === "simples_nacional" || issuer.crt === "mei"

const icmsRefusals = (item: GoodsItem, issuer: GoodsIssuer, at: ReadonlyArray<string | number>): Array<Refusal> => {
  const { icms } = item
  const path = (field: string) => [...at, "icms", field]
  if ((icms.cst === undefined) === (icms.csosn === undefined)) {
    return [{ path: path(usesCsosn(issuer) ? "csosn" : "cst"), message: "give exactly one of cst and csosn" }]
  }
  if (usesCsosn(issuer) && icms.cst !== undefined) {
    return [{ path: path("cst"), message: "a Simples Nacional emitter (CRT 1 or 4) states the ICMS by csosn" }]
  }
  if (!usesCsosn(issuer) && icms.csosn !== undefined) {
    return [{ path: path("csosn"), message: "an emitter in the normal regime (CRT 2 or 3) states the ICMS by cst" }]
  }
  const refusals: Array<Refusal> = []
  const code = icms.cst ?? icms.csosn!
  const taxesAlways = code === "00" || code === "10" || code === "20" || code === "70"
  const taxesOptionally = code === "90" || code === "900"
  if (taxesAlways && icms.rate === undefined) refusals.push({ path: path("rate"), message: `CST ${code} needs rate` })
  if (!taxesAlways && !taxesOptionally && icms.rate !== undefined) {
    refusals.push({ path: path("rate"), message: `is not used with ${icms.cst ? "CST" : "CSOSN"} ${code}` })
  }
  const reduced = code === "20" || code === "70"
  if (reduced && icms.base_reduction === undefined) {
    refusals.push({ path: path("base_reduction"), message: `CST ${code} (a reduced base) needs base_reduction` })
  }
  if (icms.base_reduction !== undefined) {
    if (!reduced && !taxesOptionally) {
      refusals.push({ path: path("base_reduction"), message: `is not used with ${icms.cst ? "CST" : "CSOSN"} ${code}` })
    } else if (taxesOptionally && icms.rate === undefined) {
      refusals.push({ path: path("base_reduction"), message: "needs rate: it reduces the base the rate taxes" })
    }
  }
  if ((code === "101" || code === "201") && icms.credit_rate === undefined) {
    refusals.push({ path: path("credit_rate"), message: `CSOSN ${code} (with credit allowance) needs credit_rate` })
  }
  if (icms.credit_rate !== undefined && code !== "101" && code !== "201" && code !== "900") {
    refusals.push({ path: path("credit_rate"), message: "is used only with CSOSN 101, 201 and 900" })
  }
  return [...refusals, ...substitutionRefusals(icms, code, path)]
}

/** The ICMS-ST: with CST 10, 30 and 70 and CSOSN 201 to 203 only, the Simples naming its own operation's rate. */
const substitutionRefusals = (
  icms: GoodsItem["icms"],
  code: string,
  path: (field: string) => Array<string | number>
): Array<Refusal> => {
  const substitutes = ["10", "30", "70", "201", "202", "203"].includes(code)
  const simples = code === "201" || code === "202" || code === "203"
  if (icms.st === undefined) {
    return substitutes ? [{ path: path("st"), message: `${code} charges the ICMS by substitution: it needs st` }] : []
  }
  if (!substitutes) return [{ path: path("st"), message: "is used only with CST 10, 30 and 70 and CSOSN 201 to 203" }]
  if (simples && icms.st.own_rate === undefined) {
    return [{ path: [...path("st"), "own_rate"], message: `CSOSN ${code} needs the own operation's rate it deducts` }]
  }
  if ((code === "10" || code === "70") && icms.st.own_rate !== undefined) {
    return [{ path: [...path("st"), "own_rate"], message: `CST ${code} deducts the item's own rate: not used` }]
  }
  return []
}

const pisCofinsRefusals = (tax: PisCofinsTax, path: ReadonlyArray<string | number>): Array<Refusal> => {
  if ((tax.cst === "01" || tax.cst === "02") && tax.rate === undefined) {
    return [{ path: [...path, "rate"], message: `CST ${tax.cst} needs rate` }]
  }
  if (isUntaxedPisCofins(tax.cst) && (tax.rate !== undefined || tax.base !== undefined)) {
    return [{ path: [...path, tax.rate === undefined ? "base" : "rate"], message: `CST ${tax.cst} is not taxed` }]
  }
  return []
}

const itemRefusals = (
  request: GoodsInvoiceRequest,
  item: GoodsItem,
  index: number,
  issuer: GoodsIssuer
): Array<Refusal> => {
  const at = ["items", index]
  const refusals: Array<Refusal> = []
  if ((item.unit_amount === undefined) === (item.unit_amount_decimal === undefined)) {
    refusals.push({ path: [...at, "unit_amount"], message: "give exactly one of unit_amount and unit_amount_decimal" })
    return refusals
  }
  if (item.gtin !== undefined && !isValidGtin(item.gtin)) {
    refusals.push({ path: [...at, "gtin"], message: "has a wrong check digit (rejection 611)" })
  }
  refusals.push(...icmsRefusals(item, issuer, at))
  if (item.ipi !== undefined) {
    if (request.type === "consumer_invoice") {
      refusals.push({ path: [...at, "ipi"], message: "an NFC-e carries no IPI (its sales are not industrial)" })
    } else if (isTaxedIpi(item.ipi.cst) && item.ipi.rate === undefined) {
      refusals.push({ path: [...at, "ipi", "rate"], message: `CST ${item.ipi.cst} needs rate` })
    } else if (!isTaxedIpi(item.ipi.cst) && item.ipi.rate !== undefined) {
      refusals.push({ path: [...at, "ipi", "rate"], message: `CST ${item.ipi.cst} is not taxed` })
    }
  }
  refusals.push(...pisCofinsRefusals(item.pis, [...at, "pis"]), ...pisCofinsRefusals(item.cofins, [...at, "cofins"]))
  // Beyond what the API takes (and the note's 13 digits of reais), the figures below mean nothing.
  const tooLarge = { path: [...at, "quantity"], message: `quantity × unit price exceeds ${MAX_CENTAVOS} centavos` }
  if (itemValue(item) > MAX_CENTAVOS) return [...refusals, tooLarge]
  if (itemFigures(item, false).operation < 0) {
    refusals.push({
      path: [...at, "discount"],
      message: "is larger than the item's value with its freight, insurance and other expenses"
    })
  }
  return refusals
}

/** The CFOPs an NFC-e takes (rule 725), but 5933, a service taxed by ISSQN, which the API does not issue. */
const NFCE_CFOPS: ReadonlySet<string> = new Set(["5101", "5102", "5103", "5104", "5115", "5405", "5656", "5667"])

/** Where the goods go: 5xxx within the emitter's state (or at the counter), 6xxx to another state. */
const cfopRefusals = (request: GoodsInvoiceRequest, issuer: GoodsIssuer): Array<Refusal> => {
  if (request.type === "consumer_invoice") {
    return request.items.flatMap((item, i) =>
      NFCE_CFOPS.has(item.cfop) ? [] : [{
        path: ["items", i, "cfop"],
        message: `an NFC-e takes the CFOPs ${[...NFCE_CFOPS].join(", ")} (rejection 725)`
      }]
    )
  }
  // An NF-e without its recipient is refused for that; where its goods go is not known.
  if (request.type === "product_invoice" && request.recipient === undefined) return []
  const recipientState = request.recipient?.address?.state
  const interstate = recipientState !== undefined && recipientState !== issuer.address.state
  const expected = interstate ? "6" : "5"
  return request.items.flatMap((item, i) =>
    item.cfop[0] === expected ? [] : [{
      path: ["items", i, "cfop"],
      message: item.cfop[0] === "7"
        ? "a CFOP 7xxx is an export, which needs a recipient abroad: the API does not issue exports yet"
        : interstate
        ? `the goods go to ${recipientState}, another state than the emitter's (${issuer.address.state}): the CFOP starts with 6`
        : "the goods stay in the emitter's state: the CFOP starts with 5"
    }]
  )
}

const recipientRefusals = (request: GoodsInvoiceRequest, issuer: GoodsIssuer): Array<Refusal> => {
  const { recipient } = request
  const nfe = request.type === "product_invoice"
  if (recipient === undefined) {
    return nfe ? [{ path: ["recipient"], message: "an NF-e needs its recipient (dest)" }] : []
  }
  const refusals: Array<Refusal> = []
  const at = (...path: ReadonlyArray<string>) => ["recipient", ...path]
  if ((recipient.tax_id === undefined) === (recipient.foreign_id === undefined)) {
    refusals.push({ path: at("tax_id"), message: "give exactly one of tax_id and foreign_id" })
  }
  if (nfe && recipient.foreign_id !== undefined) {
    refusals.push({
      path: at("foreign_id"),
      message: "an NF-e to a buyer abroad needs an address abroad: the API does not issue exports yet"
    })
  }
  if (nfe && recipient.name === undefined) refusals.push({ path: at("name"), message: "an NF-e needs the name" })
  if (recipient.name !== undefined && recipient.name.length < 2) {
    refusals.push({ path: at("name"), message: "must have at least 2 characters" })
  }
  if (nfe && recipient.address === undefined) {
    refusals.push({ path: at("address"), message: "an NF-e needs the address" })
  }
  const address = recipient.address
  if (address !== undefined) {
    if (municipalityOf(address.municipality_code) === undefined) {
      refusals.push({ path: at("address", "municipality_code"), message: "is not an IBGE municipality code" })
    } else if (ufOfMunicipality(address.municipality_code) !== address.state) {
      refusals.push({ path: at("address", "state"), message: `is not the state of ${address.municipality_code}` })
    }
  }
  const indicator = recipient.state_registration_indicator ?? "non_contributor"
  if (!nfe && indicator !== "non_contributor") {
    refusals.push({
      path: at("state_registration_indicator"),
      message: "an NFC-e's buyer is a consumer: non_contributor"
    })
  }
  if (indicator === "contributor" && recipient.state_registration === undefined) {
    refusals.push({ path: at("state_registration"), message: "a contributor's state registration is needed" })
  }
  if (indicator !== "contributor" && recipient.state_registration !== undefined) {
    refusals.push({ path: at("state_registration"), message: "is given only for a contributor (rejection 791)" })
  }
  if (nfe && indicator === "non_contributor" && request.final_consumer !== true) {
    refusals.push({
      path: ["final_consumer"],
      message: "a sale to a non-contributor is a sale to the final consumer: true (rejection 696)"
    })
  }
  if (
    nfe && indicator === "non_contributor" && address !== undefined && address.state !== issuer.address.state
  ) {
    refusals.push({
      path: at("address", "state"),
      message: "an interstate sale to a consumer needs the destination state's ICMS share (DIFAL, ICMSUFDest, " +
        "rejection 694), which the API does not compute yet"
    })
  }
  return refusals
}

const modelRefusals = (request: GoodsInvoiceRequest): Array<Refusal> => {
  if (request.type === "product_invoice") {
    return [
      ...(request.presence === "home_delivery"
        ? [{ path: ["presence"], message: "home_delivery is an NFC-e's presence; an NF-e says in_person or other" }]
        : []),
      ...(request.offline_contingency === true
        ? [{ path: ["offline_contingency"], message: "offline contingency (tpEmis 9) is an NFC-e's only" }]
        : [])
    ]
  }
  const refusals: Array<Refusal> = []
  if (request.final_consumer === false) {
    refusals.push({ path: ["final_consumer"], message: "an NFC-e is always to the final consumer" })
  }
  request.items.forEach((item, i) => {
    if (item.icms.st !== undefined) {
      refusals.push({
        path: ["items", i, "icms", "st"],
        message: "an NFC-e sells to the final consumer: no one to charge ICMS-ST"
      })
    }
  })
  if (request.presence !== undefined && request.presence !== "in_person" && request.presence !== "home_delivery") {
    refusals.push({ path: ["presence"], message: "an NFC-e is in_person or home_delivery (rejection 717)" })
  }
  if (request.freight_mode !== undefined && request.freight_mode !== "none" && request.presence !== "home_delivery") {
    refusals.push({
      path: ["freight_mode"],
      message: "an NFC-e carries freight only when delivered home: none, or presence home_delivery (rejection 753)"
    })
  }
  return refusals
}

const paymentRefusals = (request: GoodsInvoiceRequest): Array<Refusal> => {
  const refusals: Array<Refusal> = []
  const { payments } = request
  for (const [i, payment] of payments.entries()) {
    if (payment.method === "other" && payment.description === undefined) {
      refusals.push({ path: ["payments", i, "description"], message: "say what the other method is" })
    }
    if (payment.method !== "other" && payment.description !== undefined) {
      refusals.push({ path: ["payments", i, "description"], message: "is given only for the method other" })
    }
    if (payment.method === "none") {
      if (request.type === "consumer_invoice") {
        refusals.push({ path: ["payments", i, "method"], message: "an NFC-e is a sale paid: none is an NF-e's" })
      } else if (payments.length > 1 || payment.amount !== 0) {
        refusals.push({ path: ["payments", i, "method"], message: "none is the only payment, of amount 0" })
      }
    }
  }
  const total = goodsFigures(request).totals.total
  if (total > MAX_CENTAVOS) {
    return [...refusals, { path: ["items"], message: `the total exceeds ${MAX_CENTAVOS} centavos` }]
  }
  if (payments.some((payment) => payment.method === "none")) return refusals
  const paid = payments.reduce((sum, payment) => sum + payment.amount, 0)
  const change = request.change ?? 0
  if (paid - change !== total) {
    refusals.push({
      path: ["payments"],
      message: `the payments less the change come to ${paid - change} centavos, the note's total is ${total} ` +
        "(rejections 865 and 866)"
    })
  }
  return refusals
}

/**
 * Every rule the sale breaks, as one 400 naming each field (at most 20 issues); success when none.
 * The emitter is `goodsIssuerOf`'s.
 */
/**
 * The tax reform's group: offered to normal-regime emitters (NT 2025.002 leaves CRT 1, 2 and 4 to a
 * later note), for a day of emission whose rates are all published.
 */
const reformRefusals = (request: GoodsInvoiceRequest, issuer: GoodsIssuer, issuedAt: Date): Array<Refusal> => {
  const declaring = request.items.flatMap((item, i) => item.ibs_cbs === undefined ? [] : [i])
  if (declaring.length === 0) return []
  const problem = issuer.crt !== "normal"
    ? "is for normal-regime emitters (CRT 3): the technical note that sets it for the Simples Nacional is not " +
      "published"
    : Result.match(ibsCbsRatesFor(brazilianDate(issuedAt)), { onSuccess: () => undefined, onFailure: (e) => e.message })
  return problem === undefined ? [] : declaring.map((i) => ({ path: ["items", i, "ibs_cbs"], message: problem }))
}

/** `issuedAt`: when the document is accepted, its note's day of emission. */
export const checkGoodsInvoice = (
  request: GoodsInvoiceRequest,
  issuer: GoodsIssuer,
  issuedAt: Date
): Result.Result<void, InvalidRequest> => {
  const itemProblems = request.items.flatMap((item, i) => itemRefusals(request, item, i, issuer))
  const refusals = [
    ...latin1Refusals(request, []),
    ...modelRefusals(request),
    ...recipientRefusals(request, issuer),
    ...cfopRefusals(request, issuer),
    ...itemProblems,
    ...reformRefusals(request, issuer, issuedAt),
    // The total is only meaningful once every item can be valued.
    ...(itemProblems.some((refusal) =>
        refusal.path[2] === "unit_amount" || refusal.path[2] === "discount" || refusal.path[2] === "quantity"
      )
      ? []
      : paymentRefusals(request))
  ]
  if (refusals.length === 0) return Result.void
  return Result.fail(
    new InvalidRequest({
      message: `The document breaks the NF-e rules. ${refusals[0]!.path.join(".")}: ${refusals[0]!.message}.`,
      issues: refusals.slice(0, MAX_ISSUES).map(({ message, path }) => ({ path: [...path], message }))
    })
  )
}
