/**
 * Small pieces the national NFS-e XML modules (Dps, CancellationEvent, Nfse) share: writing text
 * the schemas accept, dates in Brazilian local time, money in reais, and reading namespaced
 * elements back with @xmldom/xmldom.
 *
 * The XML is written as strings, not through a DOM serializer, so its bytes are exactly what we
 * chose (no insignificant whitespace, one namespace declaration on the root): that is what gets
 * signed, gzipped and stored.
 */
import { type Document, DOMParser, type Element, MIME_TYPE } from "@xmldom/xmldom"
import * as Result from "effect/Result"

export const NFSE_NAMESPACE = "http://www.sped.fazenda.gov.br/nfse"

export const XML_DECLARATION = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"

// XML 1.0 cannot carry C0 controls other than tab/newline/carriage return, lone surrogates or
// U+FFFE/U+FFFF, not even as character references: a text with them would make the whole document
// malformed. They carry no meaning in an invoice, so they are dropped.
// With the `u` flag a well-formed surrogate pair is one code point, so the range only meets lone ones.
// eslint-disable-next-line no-control-regex -- the control characters XML 1.0 forbids are what it finds
const NOT_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/gu

const prepare = (s: string): string => s.normalize("NFC").replace(NOT_XML_CHARS, "").replace(/\r\n?/g, "\n")

/**
 * Text for a single-line field. Most fields are `TSString` in the schema: no tab, no newline, no
 * leading or trailing space; runs of whitespace become one space. NFC, because the schema's
 * character range is Latin-1 and a decomposed "é" (e + U+0301) would fall outside it.
 */
export const singleLine = (s: string): string => prepare(s).replace(/\s+/g, " ").trim()

/** Text for a field that may span lines (`xDescServ`): line breaks kept, the ends trimmed. */
export const multiLine = (s: string): string => prepare(s).trim()

export const escapeText = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

export const escapeAttribute = (s: string): string => escapeText(s).replace(/"/g, "&quot;")

/** `<name>text</name>`, the text escaped. */
export const leaf = (name: string, text: string): string => `<${name}>${escapeText(text)}</${name}>`

/** `<name>` around already-written children. */
export const node = (name: string, ...children: ReadonlyArray<string>): string =>
  `<${name}>${children.join("")}</${name}>`

/** Integer centavos as reais with two decimals, as `TSDec15V2` wants: 150000 → "1500.00". */
export const formatCentavos = (centavos: number): string => {
  if (!Number.isSafeInteger(centavos) || centavos < 0) {
    // Amounts are validated where documents are accepted; reaching here is a programming error.
    throw new Error(`amount of ${centavos} centavos is not a non-negative integer`)
  }
  return `${Math.trunc(centavos / 100)}.${String(centavos % 100).padStart(2, "0")}`
}

const saoPaulo = new Intl.DateTimeFormat("en-US", {
  timeZone: "America/Sao_Paulo",
  hourCycle: "h23",
  year: "numeric",
  month: "2-digit",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit"
})

const pad2 = (n: number) => String(n).padStart(2, "0")

/**
 * An instant as Brasília local time with its real offset and no fraction,
 * "YYYY-MM-DDThh:mm:ss-03:00": what `TSDateTimeUTC` accepts (no "Z", no milliseconds, so never
 * `toISOString()`). The offset comes from the time-zone database, so a date from the years Brazil
 * still had daylight saving time gets its -02:00.
 */
export const brasiliaDateTime = (at: Date): string => {
  const wholeSeconds = Math.floor(at.getTime() / 1000) * 1000
  const parts: Record<string, number> = {}
  for (const part of saoPaulo.formatToParts(new Date(wholeSeconds))) {
    if (part.type !== "literal") parts[part.type] = Number(part.value)
  }
  const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = parts
  const offsetMinutes = Math.round((Date.UTC(year, month - 1, day, hour, minute, second) - wholeSeconds) / 60_000)
  const sign = offsetMinutes < 0 ? "-" : "+"
  const absolute = Math.abs(offsetMinutes)
  return `${year}-${pad2(month)}-${pad2(day)}T${pad2(hour)}:${pad2(minute)}:${pad2(second)}` +
    `${sign}${pad2(Math.trunc(absolute / 60))}:${pad2(absolute % 60)}`
}

/**
 * Parses XML strictly: every parser error or warning fails (xmldom would otherwise log it and go on),
 * and a DOCTYPE is refused, since none of the protocol's documents has one and entity declarations
 * are how XML bombs arrive.
 */
export const parseXml = (xml: string): Result.Result<Document, string> => {
  let problem: string | undefined
  const parser = new DOMParser({
    onError: (level, message) => {
      problem ??= `${level}: ${message}`
      throw new Error(message)
    }
  })
  try {
    const doc = parser.parseFromString(xml, MIME_TYPE.XML_APPLICATION)
    if (doc.doctype !== null) return Result.fail("a DOCTYPE is not allowed")
    if (doc.documentElement === null) return Result.fail("the document has no root element")
    return Result.succeed(doc)
  } catch (error) {
    return Result.fail(problem ?? (error instanceof Error ? error.message : "not well-formed XML"))
  }
}

const ELEMENT_NODE = 1

/** The direct child elements of `parent` in `namespace`. */
export const childElementsIn = (namespace: string, parent: Element): ReadonlyArray<Element> => {
  const found: Array<Element> = []
  for (let n = parent.firstChild; n !== null; n = n.nextSibling) {
    if (n.nodeType === ELEMENT_NODE) {
      const element = n as Element // nodeType checked on the line above
      if (element.namespaceURI === namespace) found.push(element)
    }
  }
  return found
}

/** The direct child elements of `parent` in `namespace` named `localName`. */
export const childrenIn = (namespace: string, parent: Element, localName: string): ReadonlyArray<Element> =>
  childElementsIn(namespace, parent).filter((element) => element.localName === localName)

/** The first element along `path` of direct children in `namespace`, or undefined. */
export const elementIn = (
  namespace: string,
  from: Element | undefined,
  ...path: ReadonlyArray<string>
): Element | undefined => {
  let current = from
  for (const name of path) {
    if (current === undefined) return undefined
    current = childrenIn(namespace, current, name)[0]
  }
  return current
}

/** The text of the element along `path` in `namespace`, or undefined when absent. */
export const textIn = (
  namespace: string,
  from: Element | undefined,
  ...path: ReadonlyArray<string>
): string | undefined => {
  const element = elementIn(namespace, from, ...path)
  return element === undefined ? undefined : (element.textContent ?? "")
}

/** The direct child elements of `parent` in the NFS-e namespace. */
export const nfseChildElements = (parent: Element): ReadonlyArray<Element> => childElementsIn(NFSE_NAMESPACE, parent)

/** The direct child elements of `parent` in the NFS-e namespace named `localName`. */
export const nfseChildren = (parent: Element, localName: string): ReadonlyArray<Element> =>
  childrenIn(NFSE_NAMESPACE, parent, localName)

/** The first element along `path` of direct NFS-e children, or undefined. */
export const nfseElement = (from: Element | undefined, ...path: ReadonlyArray<string>): Element | undefined =>
  elementIn(NFSE_NAMESPACE, from, ...path)

/** The text of the element along `path`, or undefined when absent. */
export const nfseText = (from: Element | undefined, ...path: ReadonlyArray<string>): string | undefined =>
  textIn(NFSE_NAMESPACE, from, ...path)

/**
 * `{ [key]: value }` when the value is there, `{}` otherwise, to spread into an object whose
 * optional properties must be absent rather than undefined.
 */
export const optionalField = <K extends string>(key: K, value: string | undefined): { [P in K]?: string } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: string } // a computed key widens to string

/**
 * A document's root element alone, to embed it in another (the signed DPS in an NFS-e, the signed
 * pedRegEvento in an evento): the XML declaration and a byte-order mark go, the rest stays byte for
 * byte, so its signature still verifies.
 */
export const withoutXmlDeclaration = (xml: string): string => xml.replace(/^\uFEFF?\s*<\?xml[^?]*\?>\s*/, "")
