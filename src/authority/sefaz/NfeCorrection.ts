/**
 * The correction letter (CC-e, event 110110) of an authorized NF-e: the `evento` (signed over its
 * `infEvento`) with the correction's text and the fixed conditions of use, sent in the same batch
 * (`envEvento`) as every event is. It is checked against the official generic envelope of the events
 * (schemas/nfe-evento-v1.00/, NT 2026.004: the alphanumeric CNPJ too), whose detail is open; the
 * detail is written as the MOC 7.0 describes it, and the API bounds the text before it is built.
 *
 * An NF-e takes up to 20 letters, numbered 1 to 20 (`nSeqEvento`); each replaces the ones before
 * (the last holds every correction still wanted). A letter sent again with its own number is the
 * authority's duplicity (573), which a retry after a lost answer reads as registered.
 */
import type * as Result from "effect/Result"
import type { Environment } from "../../domain/Principal.js"
import { normalizeTaxId } from "../../domain/TaxId.js"
import { environmentCode } from "../TaxAuthority.js"
import { schemaSet, type SchemaViolation } from "../xml/SchemaSet.js"
import { brasiliaDateTime, escapeAttribute, leaf, singleLine } from "../xml/XmlText.js"
import { NFE_NAMESPACE } from "./NfeXml.js"

export const CORRECTION_EVENT = "110110"
const EVENT_VERSION = "1.00"

/** The most letters an NF-e takes (`nSeqEvento` 1 to 20). */
export const MAX_CORRECTIONS = 20

/**
 * The conditions of use every letter carries, word for word as the layout fixes them (the variant
 * without accents, which every authority takes).
 */
export const CORRECTION_CONDITIONS = "A Carta de Correcao e disciplinada pelo paragrafo 1o-A do art. 7o do Convenio " +
  "S/N, de 15 de dezembro de 1970 e pode ser utilizada para regularizacao de erro ocorrido na emissao de documento " +
  "fiscal, desde que o erro nao esteja relacionado com: I - as variaveis que determinam o valor do imposto tais " +
  "como: base de calculo, aliquota, diferenca de preco, quantidade, valor da operacao ou da prestacao; II - a " +
  "correcao de dados cadastrais que implique mudanca do remetente ou do destinatario; III - a data de emissao ou " +
  "de saida."

export interface CorrectionEventInput {
  readonly environment: Environment
  readonly accessKey: string
  /** The emitter's CNPJ or CPF: the event's author. */
  readonly issuerTaxId: string
  /** 1 to 20. */
  readonly sequence: number
  /** What the letter corrects (xCorrecao), 15 to 1 000 characters. */
  readonly text: string
  /** When the tenant asked: dhEvento, the same at every attempt. */
  readonly requestedAt: Date
}

/** The event's id: "ID", its type, the note's key and its sequence number (two digits). */
export const correctionEventId = (accessKey: string, sequence: number): string =>
  `ID${CORRECTION_EVENT}${accessKey}${String(sequence).padStart(2, "0")}`

/** The unsigned `evento`; sign its `infEvento` (XmlSignature's `nfeEvent`). */
export const correctionEvent = (input: CorrectionEventInput): string => {
  const taxId = normalizeTaxId(input.issuerTaxId)
  return `<evento xmlns="${NFE_NAMESPACE}" versao="${EVENT_VERSION}">` +
    `<infEvento Id="${escapeAttribute(correctionEventId(input.accessKey, input.sequence))}">` +
    leaf("cOrgao", input.accessKey.slice(0, 2)) +
    leaf("tpAmb", String(environmentCode(input.environment))) +
    leaf(taxId.length === 11 ? "CPF" : "CNPJ", taxId) +
    leaf("chNFe", input.accessKey) +
    leaf("dhEvento", brasiliaDateTime(input.requestedAt)) +
    leaf("tpEvento", CORRECTION_EVENT) +
    leaf("nSeqEvento", String(input.sequence)) +
    leaf("verEvento", EVENT_VERSION) +
    `<detEvento versao="${EVENT_VERSION}">` +
    leaf("descEvento", "Carta de Correcao") +
    leaf("xCorrecao", singleLine(input.text)) +
    leaf("xCondUso", CORRECTION_CONDITIONS) +
    "</detEvento></infEvento></evento>"
}

export type EventSchema = "envEvento" | "retEnvEvento" | "procEventoNFe"

const eventSchemas = schemaSet<EventSchema>({
  folder: "nfe-evento-v1.00",
  directoryVariable: "NFE_EVENT_XSD_DIR",
  virtualBase: "nfe-evento-xsd:///v1.00/",
  entries: {
    envEvento: "envEvento_v1.00.xsd",
    retEnvEvento: "retEnvEvento_v1.00.xsd",
    procEventoNFe: "procEventoNFe_v1.00.xsd"
  },
  namespace: NFE_NAMESPACE
})

/** Loads libxml2 and compiles the events' envelope schemas, once. */
export const loadEventSchemas = (): Promise<void> => eventSchemas.load()

export const validateEvent = (schema: EventSchema, xml: string): Result.Result<void, SchemaViolation> =>
  eventSchemas.validate(schema, xml)

/** Writes the schemas into `dir`, for `xmllint --schema`. */
export const writeEventSchemas = (dir: string): string => eventSchemas.writeTo(dir)
