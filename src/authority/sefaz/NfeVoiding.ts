/**
 * Number voiding (inutilização) of NF-e/NFC-e numbers that were never used: the request
 * (`inutNFe`, signed over its `infInut`) and the authority's answer (`retInutNFe`), under the
 * official layout 4.00 (schemas/nfe-inutilizacao-v4.00/, whose README gives its sources). A range
 * is identified by its state, year, emitter, model, series and first and last numbers: the same
 * request sent again is the authority's duplicity (563), which a retry after a lost answer reads as
 * registered.
 */
import type * as Result from "effect/Result"
import type { Environment } from "../../domain/Principal.js"
import { normalizeTaxId } from "../../domain/TaxId.js"
import type { GoodsVoidingRequest } from "../GoodsAuthority.js"
import { environmentCode } from "../TaxAuthority.js"
import { schemaSet, type SchemaViolation } from "../xml/SchemaSet.js"
import { brasiliaDateTime, escapeAttribute, leaf, singleLine, XML_DECLARATION } from "../xml/XmlText.js"
import type { NfeModel } from "./NfeAccessKey.js"
import { NFE_NAMESPACE, NFE_VERSION } from "./NfeXml.js"

/** 102: the range is voided. */
export const VOIDING_REGISTERED = "102"
/** The same range voided before (the first answer was lost). */
export const VOIDING_DUPLICATE = "563"

export interface VoidingInput {
  readonly environment: Environment
  /** The emitter's state, as its IBGE code (cUF). */
  readonly stateCode: string
  /** The emitter's CNPJ. */
  readonly issuerTaxId: string
  readonly model: NfeModel
  readonly series: number
  readonly from: number
  readonly to: number
  /** Why (xJust), 15 to 255 characters. */
  readonly reason: string
  /** When the tenant asked: its year is the request's, the same at every attempt. */
  readonly requestedAt: Date
}

const yearOf = (at: Date): string => brasiliaDateTime(at).slice(2, 4)

/** "ID", the state, the year, the CNPJ, the model, the series (3) and the first and last numbers (9 each). */
export const voidingId = (input: VoidingInput): string =>
  `ID${input.stateCode}${yearOf(input.requestedAt)}${normalizeTaxId(input.issuerTaxId)}${input.model}` +
  `${String(input.series).padStart(3, "0")}${String(input.from).padStart(9, "0")}${String(input.to).padStart(9, "0")}`

/** The unsigned `inutNFe`; sign its `infInut` (XmlSignature's `infInut`). */
export const voidingRequest = (input: VoidingInput): string =>
  `<inutNFe xmlns="${NFE_NAMESPACE}" versao="${NFE_VERSION}">` +
  `<infInut Id="${escapeAttribute(voidingId(input))}">` +
  leaf("tpAmb", String(environmentCode(input.environment))) +
  leaf("xServ", "INUTILIZAR") +
  leaf("cUF", input.stateCode) +
  leaf("ano", yearOf(input.requestedAt)) +
  leaf("CNPJ", normalizeTaxId(input.issuerTaxId)) +
  leaf("mod", input.model) +
  leaf("serie", String(input.series)) +
  leaf("nNFIni", String(input.from)) +
  leaf("nNFFin", String(input.to)) +
  leaf("xJust", singleLine(input.reason)) +
  "</infInut></inutNFe>"

export interface VoidingOutcome {
  readonly request: VoidingInput
  readonly application: string
  readonly at: Date
  readonly status: string
  readonly reason: string
  /** The protocol, when registered. */
  readonly protocol?: string | undefined
}

/** `retInutNFe`: the authority's answer to a range. */
export const voidingAnswer = (outcome: VoidingOutcome): string => {
  const { request } = outcome
  return `${XML_DECLARATION}<retInutNFe xmlns="${NFE_NAMESPACE}" versao="${NFE_VERSION}"><infInut>` +
    leaf("tpAmb", String(environmentCode(request.environment))) +
    leaf("verAplic", outcome.application) +
    leaf("cStat", outcome.status) +
    leaf("xMotivo", outcome.reason) +
    leaf("cUF", request.stateCode) +
    (outcome.protocol === undefined
      ? ""
      : leaf("ano", yearOf(request.requestedAt)) +
        leaf("CNPJ", normalizeTaxId(request.issuerTaxId)) +
        leaf("mod", request.model) +
        leaf("serie", String(request.series)) +
        leaf("nNFIni", String(request.from)) +
        leaf("nNFFin", String(request.to))) +
    leaf("dhRecbto", brasiliaDateTime(outcome.at)) +
    (outcome.protocol === undefined ? "" : leaf("nProt", outcome.protocol)) +
    "</infInut></retInutNFe>"
}

export type VoidingSchema = "inutNFe" | "retInutNFe" | "procInutNFe"

const voidingSchemas = schemaSet<VoidingSchema>({
  folder: "nfe-inutilizacao-v4.00",
  directoryVariable: "NFE_VOIDING_XSD_DIR",
  virtualBase: "nfe-inut-xsd:///v4.00/",
  entries: {
    inutNFe: "inutNFe_v4.00.xsd",
    retInutNFe: "retInutNFe_v4.00.xsd",
    procInutNFe: "procInutNFe_v4.00.xsd"
  },
  namespace: NFE_NAMESPACE
})

/** Loads libxml2 and compiles the voiding schemas, once. */
export const loadVoidingSchemas = (): Promise<void> => voidingSchemas.load()

export const validateVoiding = (schema: VoidingSchema, xml: string): Result.Result<void, SchemaViolation> =>
  voidingSchemas.validate(schema, xml)

/** Writes the schemas into `dir`, for `xmllint --schema`. */
export const writeVoidingSchemas = (dir: string): string => voidingSchemas.writeTo(dir)

/** The request of the goods port's voiding, as the layout numbers it. */
export const voidingInputOf = (request: GoodsVoidingRequest): VoidingInput => ({
  environment: request.environment,
  stateCode: request.issuer.address.municipality_code.slice(0, 2),
  issuerTaxId: request.issuer.taxId,
  model: request.type === "consumer_invoice" ? "65" : "55",
  series: request.series,
  from: request.from,
  to: request.to,
  reason: request.reason,
  requestedAt: request.requestedAt
})
