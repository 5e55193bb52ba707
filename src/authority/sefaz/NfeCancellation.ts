/**
 * The cancellation of an authorized NF-e or NFC-e: the event 110111 (`evento`, signed over its
 * `infEvento`), its batch (`envEvento`) and the authority's answer (`retEnvEvento`), under the
 * official layout of the event (schemas/nfe-evento-cancelamento-v1.00/, whose README gives its
 * source). An event is identified by its type, the note's key and its sequence number: the first
 * cancellation is sequence 1, and the same event sent again is the authority's duplicity (573),
 * which a retry after a lost answer reads as done.
 */
import type * as Result from "effect/Result"
import type { Environment } from "../../domain/Principal.js"
import { normalizeTaxId } from "../../domain/TaxId.js"
import { environmentCode } from "../TaxAuthority.js"
import { schemaSet, type SchemaViolation } from "../xml/SchemaSet.js"
import {
  brasiliaDateTime,
  escapeAttribute,
  leaf,
  singleLine,
  withoutXmlDeclaration,
  XML_DECLARATION
} from "../xml/XmlText.js"
import { NFE_NAMESPACE } from "./NfeXml.js"

export const CANCELLATION_EVENT = "110111"
const EVENT_VERSION = "1.00"

/** 135: registered and linked to the note; 155: registered past its deadline, accepted all the same. */
export const EVENT_REGISTERED: ReadonlySet<string> = new Set(["135", "136", "155"])
/** The same event registered before (its first answer was lost). */
export const EVENT_DUPLICATE = "573"

export interface CancellationEventInput {
  readonly environment: Environment
  readonly accessKey: string
  /** The emitter's CNPJ or CPF: the event's author. */
  readonly issuerTaxId: string
  /** The note's authorization protocol. */
  readonly protocol: string
  /** Why (xJust), 15 to 255 characters. */
  readonly reason: string
  /** When the tenant asked: dhEvento, the same at every attempt. */
  readonly requestedAt: Date
}

/** The event's id: "ID", its type, the note's key and its sequence number (two digits). */
export const cancellationEventId = (accessKey: string): string => `ID${CANCELLATION_EVENT}${accessKey}01`

/** The unsigned `evento`; sign its `infEvento` (XmlSignature's `nfeEvent`). */
export const cancellationEvent = (input: CancellationEventInput): string => {
  const taxId = normalizeTaxId(input.issuerTaxId)
  return `<evento xmlns="${NFE_NAMESPACE}" versao="${EVENT_VERSION}">` +
    `<infEvento Id="${escapeAttribute(cancellationEventId(input.accessKey))}">` +
    leaf("cOrgao", input.accessKey.slice(0, 2)) +
    leaf("tpAmb", String(environmentCode(input.environment))) +
    leaf(taxId.length === 11 ? "CPF" : "CNPJ", taxId) +
    leaf("chNFe", input.accessKey) +
    leaf("dhEvento", brasiliaDateTime(input.requestedAt)) +
    leaf("tpEvento", CANCELLATION_EVENT) +
    leaf("nSeqEvento", "1") +
    leaf("verEvento", EVENT_VERSION) +
    `<detEvento versao="${EVENT_VERSION}">` +
    leaf("descEvento", "Cancelamento") +
    leaf("nProt", input.protocol) +
    leaf("xJust", singleLine(input.reason)) +
    "</detEvento></infEvento></evento>"
}

/** `envEvento`: a batch of one signed event. */
export const eventBatch = (batchId: string, signedEvent: string): string =>
  `<envEvento xmlns="${NFE_NAMESPACE}" versao="${EVENT_VERSION}">` +
  leaf("idLote", batchId) +
  withoutXmlDeclaration(signedEvent) +
  "</envEvento>"

export interface EventOutcome {
  readonly environment: Environment
  readonly application: string
  readonly accessKey: string
  readonly at: Date
  readonly status: string
  readonly reason: string
  /** The event's protocol, when registered. */
  readonly protocol?: string | undefined
  /** The event answered: the cancellation unless said. */
  readonly event?: { readonly type: string; readonly sequence: number; readonly registered: string } | undefined
}

/** `retEnvEvento`: the batch processed (128) with the event's outcome (a cancellation's unless `event` says). */
export const eventAnswer = (batchId: string, outcome: EventOutcome): string => {
  const environment = String(environmentCode(outcome.environment))
  const stateCode = outcome.accessKey.slice(0, 2)
  return `${XML_DECLARATION}<retEnvEvento xmlns="${NFE_NAMESPACE}" versao="${EVENT_VERSION}">` +
    leaf("idLote", batchId) +
    leaf("tpAmb", environment) +
    leaf("verAplic", outcome.application) +
    leaf("cOrgao", stateCode) +
    leaf("cStat", "128") +
    leaf("xMotivo", "Lote de Evento Processado") +
    `<retEvento versao="${EVENT_VERSION}"><infEvento>` +
    leaf("tpAmb", environment) +
    leaf("verAplic", outcome.application) +
    leaf("cOrgao", stateCode) +
    leaf("cStat", outcome.status) +
    leaf("xMotivo", outcome.reason) +
    leaf("chNFe", outcome.accessKey) +
    leaf("tpEvento", outcome.event?.type ?? CANCELLATION_EVENT) +
    leaf("xEvento", outcome.event?.registered ?? "Cancelamento registrado") +
    leaf("nSeqEvento", String(outcome.event?.sequence ?? 1)) +
    leaf("dhRegEvento", brasiliaDateTime(outcome.at)) +
    (outcome.protocol === undefined ? "" : leaf("nProt", outcome.protocol)) +
    "</infEvento></retEvento></retEnvEvento>"
}

/** `retEnvEvento` of a batch refused as a whole (its schema, say): no event's outcome. */
export const eventBatchRefusal = (
  environment: Environment,
  application: string,
  stateCode: string,
  status: string,
  reason: string
): string =>
  `${XML_DECLARATION}<retEnvEvento xmlns="${NFE_NAMESPACE}" versao="${EVENT_VERSION}">` +
  leaf("idLote", "0") +
  leaf("tpAmb", String(environmentCode(environment))) +
  leaf("verAplic", application) +
  leaf("cOrgao", stateCode) +
  leaf("cStat", status) +
  leaf("xMotivo", reason) +
  "</retEnvEvento>"

export type CancellationSchema = "envEvento" | "retEnvEvento" | "procEventoNFe"

const cancellationSchemas = schemaSet<CancellationSchema>({
  folder: "nfe-evento-cancelamento-v1.00",
  directoryVariable: "NFE_CANCELLATION_XSD_DIR",
  virtualBase: "nfe-evento-xsd:///canc-v1.00/",
  entries: {
    envEvento: "envEventoCancNFe_v1.00.xsd",
    retEnvEvento: "retEnvEventoCancNFe_v1.00.xsd",
    procEventoNFe: "procEventoCancNFe_v1.00.xsd"
  },
  namespace: NFE_NAMESPACE
})

/** Loads libxml2 and compiles the cancellation event's schemas, once. */
export const loadCancellationSchemas = (): Promise<void> => cancellationSchemas.load()

export const validateCancellation = (
  schema: CancellationSchema,
  xml: string
): Result.Result<void, SchemaViolation> => cancellationSchemas.validate(schema, xml)

/** Writes the schemas into `dir`, for `xmllint --schema`. */
export const writeCancellationSchemas = (dir: string): string => cancellationSchemas.writeTo(dir)
