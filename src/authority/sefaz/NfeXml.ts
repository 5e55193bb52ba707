/**
 * The NF-e 4.00 XML of a goods invoice (`NFe` with its `infNFe`, unsigned), model 55 or 65, in the
 * element order of the official schema (schemas/nfe-v4.00/leiauteNFe_v4.00.xsd). The emitter comes
 * from the tenant's registration, the sale from the request; figures are computed once
 * (src/domain/GoodsAmounts.ts) and written here. The rules the request must follow first are
 * src/documents/GoodsRules.ts: what reaches this module is writable.
 *
 * Two texts are not the request's in homologation, because the authorities refuse any other there:
 * the recipient's name (rule 598) and, on an NFC-e, the first item's description (rule 373).
 */
import * as Result from "effect/Result"
import { type GoodsFigures, goodsFigures, isFinalConsumer } from "../../domain/GoodsAmounts.js"
import { goodsIbsCbs, type IbsCbsTotals } from "../../domain/GoodsIbsCbs.js"
import type {
  GoodsAddress,
  GoodsInvoiceRequest,
  GoodsIssuer,
  PaymentMethod,
  Recipient
} from "../../domain/GoodsInvoice.js"
import { municipalityOf } from "../../domain/Municipalities.js"
import type { Environment } from "../../domain/Principal.js"
import type { Crt } from "../../domain/Registration.js"
import { normalizeTaxId } from "../../domain/TaxId.js"
import type { GoodsNote } from "../GoodsAuthority.js"
import { environmentCode } from "../TaxAuthority.js"
import { brasiliaDateTime, escapeAttribute, formatCentavos, leaf, node, singleLine } from "../xml/XmlText.js"
import { type EmissionType, nfeAccessKey, type NfeModel, numericCodeOf } from "./NfeAccessKey.js"
import { HOMOLOGATION_ITEM, itemElement } from "./NfeItems.js"

export const NFE_NAMESPACE = "http://www.portalfiscal.inf.br/nfe"
export const NFE_VERSION = "4.00"

/** `verProc`: the application that issued the note (1 to 20 characters). */
export const NFE_APPLICATION_VERSION = "etd-service_0.1.0"

/** What a homologation note's recipient must be called (rule 598). */
export const HOMOLOGATION_RECIPIENT = "NF-E EMITIDA EM AMBIENTE DE HOMOLOGACAO - SEM VALOR FISCAL"

/** What a note is built from: the goods port's note (GoodsAuthority.ts). */
export type NfeInput = GoodsNote

export interface BuiltNfe {
  readonly accessKey: string
  readonly model: NfeModel
  /** The unsigned `NFe` document, without an XML declaration. */
  readonly xml: string
  readonly figures: GoodsFigures
}

const CRT_CODE: Record<typeof Crt.Type, string> = {
  simples_nacional: "1",
  simples_nacional_excess: "2",
  normal: "3",
  mei: "4"
}

const PRESENCE_CODE = {
  in_person: "1",
  internet: "2",
  telephone: "3",
  home_delivery: "4",
  in_person_outside: "5",
  other: "9"
} as const

const PAYMENT_CODE: Record<PaymentMethod, string> = {
  cash: "01",
  cheque: "02",
  credit_card: "03",
  debit_card: "04",
  store_credit: "05",
  food_voucher: "10",
  meal_voucher: "11",
  gift_voucher: "12",
  fuel_voucher: "13",
  bank_slip: "15",
  bank_deposit: "16",
  pix: "17",
  transfer: "18",
  loyalty: "19",
  pix_static: "20",
  none: "90",
  other: "99"
}

/** Payments by card or dynamic PIX carry the card group; 2: the payment was not integrated with the till. */
const WITH_CARD_GROUP: ReadonlySet<string> = new Set(["03", "04", "17"])

const FREIGHT_CODE = {
  issuer: "0",
  recipient: "1",
  third_party: "2",
  own_issuer: "3",
  own_recipient: "4",
  none: "9"
} as const

const INDICATOR_CODE = { contributor: "1", exempt: "2", non_contributor: "9" } as const

const BRAZIL = [leaf("cPais", "1058"), leaf("xPais", "Brasil")]

const municipalityName = (code: string): string => {
  const municipality = municipalityOf(code)
  // The rules refuse a code IBGE does not list before a note is built.
  if (municipality === undefined) throw new Error(`municipality ${code} is not in the IBGE table`)
  return municipality.name
}

const taxIdElement = (taxId: string): string => {
  const normalized = normalizeTaxId(taxId)
  return leaf(normalized.length === 11 ? "CPF" : "CNPJ", normalized)
}

const optional = (name: string, value: string | null | undefined): string =>
  value === null || value === undefined ? "" : leaf(name, singleLine(value))

/** 1 within the state (or no recipient's address: a sale at the counter), 2 to another state. */
const destinationCode = (issuerState: string, recipient: Recipient | undefined): string =>
  recipient?.address === undefined || recipient.address.state === issuerState ? "1" : "2"

const ide = (input: NfeInput, model: NfeModel, accessKey: string, numericCode: string): string => {
  const { contingency, issuer, request } = input
  const presence = PRESENCE_CODE[request.presence ?? "in_person"]
  return node(
    "ide",
    leaf("cUF", issuer.address.municipality_code.slice(0, 2)),
    leaf("cNF", numericCode),
    leaf("natOp", singleLine(request.operation_nature ?? "Venda de mercadoria")),
    leaf("mod", model),
    leaf("serie", String(input.series)),
    leaf("nNF", String(input.number)),
    leaf("dhEmi", brasiliaDateTime(input.issuedAt)),
    // 1: an outgoing note (a sale).
    leaf("tpNF", "1"),
    leaf("idDest", destinationCode(issuer.address.state, request.recipient)),
    leaf("cMunFG", issuer.address.municipality_code),
    // The DANFE's layout: 1 A4 portrait, 4 the NFC-e's.
    leaf("tpImp", model === "65" ? "4" : "1"),
    leaf("tpEmis", contingency === undefined ? "1" : "9"),
    leaf("cDV", accessKey.slice(-1)),
    leaf("tpAmb", String(environmentCode(input.environment))),
    // 1: a normal note (not complementary, adjusting or a return).
    leaf("finNFe", "1"),
    leaf("indFinal", isFinalConsumer(request) ? "1" : "0"),
    leaf("indPres", presence),
    // Asked only of sales away from the premises: 0, on the seller's own channel (no marketplace).
    presence === "1" || presence === "5" ? "" : leaf("indIntermed", "0"),
    // 0: issued by the taxpayer's own application.
    leaf("procEmi", "0"),
    leaf("verProc", NFE_APPLICATION_VERSION),
    contingency === undefined
      ? ""
      : leaf("dhCont", brasiliaDateTime(contingency.since)) + leaf("xJust", singleLine(contingency.reason))
  )
}

/** An address in Brazil (`enderEmit`, `enderDest`: the same elements, in the same order). */
const addressElement = (
  name: "enderEmit" | "enderDest",
  address: Omit<GoodsAddress, "complement" | "postal_code" | "phone"> & {
    readonly complement?: string | null | undefined
    readonly postal_code?: string | undefined
    readonly phone?: string | null | undefined
  }
): string =>
  node(
    name,
    leaf("xLgr", singleLine(address.street)),
    leaf("nro", singleLine(address.number)),
    optional("xCpl", address.complement),
    leaf("xBairro", singleLine(address.district)),
    leaf("cMun", address.municipality_code),
    leaf("xMun", municipalityName(address.municipality_code)),
    leaf("UF", address.state),
    optional("CEP", address.postal_code),
    ...BRAZIL,
    optional("fone", address.phone)
  )

const emit = (issuer: GoodsIssuer): string => {
  const { address } = issuer
  return node(
    "emit",
    taxIdElement(issuer.taxId),
    leaf("xNome", singleLine(issuer.legalName)),
    optional("xFant", issuer.tradeName),
    addressElement("enderEmit", { ...address, phone: issuer.phone }),
    leaf("IE", issuer.stateRegistration),
    leaf("CRT", CRT_CODE[issuer.crt])
  )
}

const dest = (recipient: Recipient | undefined, environment: Environment): string => {
  if (recipient === undefined) return ""
  const name = environment === "test" ? HOMOLOGATION_RECIPIENT : recipient.name
  const indicator = recipient.state_registration_indicator ?? "non_contributor"
  return node(
    "dest",
    recipient.tax_id === undefined ? leaf("idEstrangeiro", recipient.foreign_id ?? "") : taxIdElement(recipient.tax_id),
    optional("xNome", name),
    recipient.address === undefined ? "" : addressElement("enderDest", recipient.address),
    leaf("indIEDest", INDICATOR_CODE[indicator]),
    indicator === "contributor" ? optional("IE", recipient.state_registration) : "",
    optional("email", recipient.email)
  )
}

/** The IBS/CBS totals (`IBSCBSTot`), when an item carries the group: no deferral, returns or presumed credit. */
const reformTotal = (totals: IbsCbsTotals | undefined): string => {
  if (totals === undefined) return ""
  const amount = (name: string, centavos: number) => leaf(name, formatCentavos(centavos))
  const none = (...names: ReadonlyArray<string>) => names.map((name) => amount(name, 0)).join("")
  return node(
    "IBSCBSTot",
    amount("vBCIBSCBS", totals.base),
    node(
      "gIBS",
      node("gIBSUF", none("vDif", "vDevTrib"), amount("vIBSUF", totals.stateIbs)),
      node("gIBSMun", none("vDif", "vDevTrib"), amount("vIBSMun", totals.municipalIbs)),
      amount("vIBS", totals.ibs),
      none("vCredPres", "vCredPresCondSus")
    ),
    node("gCBS", none("vDif", "vDevTrib"), amount("vCBS", totals.cbs), none("vCredPres", "vCredPresCondSus"))
  )
}

const total = ({ totals }: GoodsFigures, reform: IbsCbsTotals | undefined): string => {
  const amount = (name: string, centavos: number) => leaf(name, formatCentavos(centavos))
  return node(
    "total",
    node(
      "ICMSTot",
      amount("vBC", totals.icmsBase),
      amount("vICMS", totals.icms),
      amount("vICMSDeson", 0),
      amount("vFCP", 0),
      amount("vBCST", totals.stBase),
      amount("vST", totals.st),
      amount("vFCPST", 0),
      amount("vFCPSTRet", 0),
      amount("vProd", totals.products),
      amount("vFrete", totals.freight),
      amount("vSeg", totals.insurance),
      amount("vDesc", totals.discount),
      amount("vII", 0),
      amount("vIPI", totals.ipi),
      amount("vIPIDevol", 0),
      amount("vPIS", totals.pis),
      amount("vCOFINS", totals.cofins),
      amount("vOutro", totals.otherExpenses),
      amount("vNF", totals.total)
    ),
    reformTotal(reform)
  )
}

const pag = (request: GoodsInvoiceRequest): string =>
  node(
    "pag",
    ...request.payments.map((payment) => {
      const code = PAYMENT_CODE[payment.method]
      return node(
        "detPag",
        payment.deferred === undefined ? "" : leaf("indPag", payment.deferred ? "1" : "0"),
        leaf("tPag", code),
        optional("xPag", payment.description),
        leaf("vPag", formatCentavos(payment.amount)),
        WITH_CARD_GROUP.has(code) ? node("card", leaf("tpIntegra", "2")) : ""
      )
    }),
    request.change === undefined ? "" : leaf("vTroco", formatCentavos(request.change))
  )

/** The note's XML, its access key and its figures. */
export const buildNfe = (input: NfeInput): BuiltNfe => {
  const { environment, issuer, request } = input
  const model: NfeModel = request.type === "consumer_invoice" ? "65" : "55"
  const numericCode = numericCodeOf(input.documentId, input.number)
  const emissionType: EmissionType = input.contingency === undefined ? "1" : "9"
  const accessKey = nfeAccessKey({
    stateCode: issuer.address.municipality_code.slice(0, 2),
    yearMonth: brasiliaDateTime(input.issuedAt).slice(2, 7).replace("-", ""),
    issuerTaxId: issuer.taxId,
    model,
    series: input.series,
    number: input.number,
    emissionType,
    numericCode
  })
  const figures = goodsFigures(request)
  // The acceptance refused a year without published rates: the same day cannot fail here.
  const reform = Result.getOrThrow(
    goodsIbsCbs(request.items, figures.items, brasiliaDateTime(input.issuedAt).slice(0, 10))
  )
  const items = request.items.map((item, i) =>
    itemElement(
      i + 1,
      item,
      figures.items[i]!,
      environment === "test" && model === "65" && i === 0 ? HOMOLOGATION_ITEM : singleLine(item.description),
      reform?.items[i]
    )
  )
  const infNFe = `<infNFe versao="${NFE_VERSION}" Id="NFe${escapeAttribute(accessKey)}">` +
    ide(input, model, accessKey, numericCode) +
    emit(issuer) +
    dest(request.recipient, environment) +
    items.join("") +
    total(figures, reform?.totals) +
    node("transp", leaf("modFrete", FREIGHT_CODE[request.freight_mode ?? "none"])) +
    pag(request) +
    (request.notes === undefined ? "" : node("infAdic", leaf("infCpl", singleLine(request.notes)))) +
    "</infNFe>"
  return { accessKey, model, xml: `<NFe xmlns="${NFE_NAMESPACE}">${infNFe}</NFe>`, figures }
}
