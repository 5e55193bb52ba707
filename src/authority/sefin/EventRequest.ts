/**
 * The taxpayer's event request (`pedRegEvento`) in the two forms the national system has taken,
 * for every event type we send (e101101 cancellation, e101103 analysis request) and the system
 * generates (e105102 cancellation by substitution).
 *
 * - `without_sequence` (what production takes, docs/architecture.md "Event requests as production
 *   takes them"): no `nPedRegEvento`, and the Id is "PRE" + access key (50) + event type (6), 59
 *   characters. SefinNacional 1.6.0 refuses the other form with E1235.
 * - `with_sequence` (the first v1.01 schema package, and municipalities reported to demand it in
 *   2026): `nPedRegEvento` (3 digits) after `chNFSe`, and the Id ends with it, 62 characters.
 *
 * The adapter sends the first and falls back to the second, once, when the system names the
 * element or the Id in an E1235 (SefinAdapter.ts); the local authority takes either, as configured.
 */
import * as Result from "effect/Result"
import { normalizeTaxId } from "../../domain/TaxId.js"
import { brasiliaDateTime, escapeAttribute, leaf, NFSE_NAMESPACE, XML_DECLARATION } from "../xml/XmlText.js"
import { type SchemaViolation, validateXml } from "../xml/Xsd.js"
import { DPS_APPLICATION_VERSION } from "./Dps.js"

export type EventForm = "without_sequence" | "with_sequence"

/** The form production takes (dated evidence in docs/architecture.md). */
export const PRODUCTION_EVENT_FORM: EventForm = "without_sequence"

export const otherEventForm = (form: EventForm): EventForm =>
  form === "without_sequence" ? "with_sequence" : "without_sequence"

const threeDigits = (n: number) => String(n).padStart(3, "0")

/** "PRE" + access key + event type (59 characters), with nPedRegEvento's 3 digits at the end in the older form (62). */
export const eventRequestId = (accessKey: string, eventType: string, form: EventForm, sequence = 1): string =>
  form === "with_sequence" ? `PRE${accessKey}${eventType}${threeDigits(sequence)}` : `PRE${accessKey}${eventType}`

export interface EventRequestInput {
  readonly tpAmb: 1 | 2
  /** dhEvento, written as Brasília local time. */
  readonly requestedAt: Date
  /** The author: a CNPJ (14) or CPF (11), normalized or not. */
  readonly authorTaxId: string
  readonly accessKey: string
  readonly form: EventForm
  /** nPedRegEvento in the `with_sequence` form; 1 for an event that happens once. */
  readonly sequence?: number | undefined
  /** "101101", "101103", "105102"… */
  readonly eventType: string
  /** The children of the `e<type>` element, already written. */
  readonly detail: string
}

/** The unsigned request: `<pedRegEvento versao="1.01" xmlns=…><infPedReg Id="PRE…">…`. */
export const buildEventRequest = (input: EventRequestInput): { readonly id: string; readonly xml: string } => {
  const sequence = input.sequence ?? 1
  const id = eventRequestId(input.accessKey, input.eventType, input.form, sequence)
  const author = normalizeTaxId(input.authorTaxId)
  const infPedReg = `<infPedReg Id="${escapeAttribute(id)}">` +
    leaf("tpAmb", String(input.tpAmb)) +
    leaf("verAplic", DPS_APPLICATION_VERSION) +
    leaf("dhEvento", brasiliaDateTime(input.requestedAt)) +
    leaf(author.length === 11 ? "CPFAutor" : "CNPJAutor", author) +
    leaf("chNFSe", input.accessKey) +
    (input.form === "with_sequence" ? leaf("nPedRegEvento", threeDigits(sequence)) : "") +
    `<e${input.eventType}>${input.detail}</e${input.eventType}>` +
    "</infPedReg>"
  return {
    id,
    xml: `${XML_DECLARATION}<pedRegEvento versao="1.01" xmlns="${NFSE_NAMESPACE}">${infPedReg}</pedRegEvento>`
  }
}

const FIFTY_NINE_CHARACTER_ID = /(<infPedReg Id="PRE[0-9A-Z]{56})(")/
const SIXTY_TWO_CHARACTER_ID = /(<infPedReg Id="PRE[0-9A-Z]{56})[0-9]{3}(")/

/** The same request in the other form: what tells the two apart is the element and the Id's end. */
const inOtherForm = (xml: string): string =>
  eventFormOf(xml) === "with_sequence"
    ? xml.replace(SIXTY_TWO_CHARACTER_ID, "$1$2").replace(/<nPedRegEvento>[0-9]+<\/nPedRegEvento>/, "")
    : xml.replace(FIFTY_NINE_CHARACTER_ID, "$1001$2").replace(/(<\/chNFSe>)/, "$1<nPedRegEvento>001</nPedRegEvento>")

/**
 * Checks a request against the schema we ship, in either form. The shipped package (27/07/2026)
 * knows only the `without_sequence` form, so a request in the other one, which some authorities
 * still demand, is checked as its equivalent in the shipped form. A failure that is not the form's
 * is reported as the request's own. The same for a registered event (`evento`) that embeds one.
 */
export const validateEventRequest = (
  xml: string,
  schema: "pedRegEvento" | "evento" = "pedRegEvento"
): Result.Result<void, SchemaViolation> => {
  const asIs = validateXml(schema, xml)
  if (Result.isSuccess(asIs)) return asIs
  const equivalent = validateXml(schema, inOtherForm(xml))
  if (Result.isSuccess(equivalent)) return equivalent
  // Both fail: the failures of the form the schema knows say what is wrong with the request itself.
  return asIs.failure.messages.some(refusalBlamesEventForm) ? equivalent : asIs
}

/** Which form a request is in: by the element, as the national system tells them apart. */
export const eventFormOf = (xml: string): EventForm =>
  xml.includes("nPedRegEvento>") ? "with_sequence" : "without_sequence"

/**
 * Whether a refusal's text blames the request's form: the `nPedRegEvento` element (present or
 * missing) or the Id's pattern (`TSIdPedRegEvt`, `TSIdPedRefEvt`). Another schema failure is not
 * the form's, and retrying it in the other form would only be refused again.
 */
export const refusalBlamesEventForm = (message: string): boolean => /nPedRegEvento|TSIdPedRe[gf]Evt/i.test(message)
