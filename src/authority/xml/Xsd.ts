/**
 * XSD validation against the official SEFIN Nacional schemas (v1.01), shared by the sefin adapter
 * (a DPS is validated before it leaves: a failure is our bug and the document goes to `failed`),
 * the local authority (which refuses what the real one refuses) and the tests.
 *
 * The official files stay untouched (schemas/nfse-v1.01/, the national package of 27/07/2026; its
 * README gives the source and checksums). One facet is narrowed in memory: the package's `TSSerieDPS`
 * pattern `[0-9]{1,4}|[0-8][0-9]{4}` accepts a serie of zeros only ("0", "00000"), which the previous
 * release refused with a look-ahead libxml2 cannot compile (`^(?!0{1,5}$)\d{1,5}$`) and the national
 * rules never assign. The patched `0{0,4}[1-9][0-9]{0,3}|[1-8][0-9]{4}` is, under the type's
 * maxLength 5, exactly the published set without the all-zero series.
 *
 * Schemas are read and compiled once, by `loadSchemas` (which whatever validates awaits when it
 * starts); compiling them takes ~100 ms, validating a DPS afterwards under a millisecond. libxml2 runs as WebAssembly (libxml2-wasm), so
 * there is no native build and the same engine as `xmllint` decides.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { ErrorDetail, XmlDocument, XsdValidator } from "libxml2-wasm"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

// libxml2 is WebAssembly whose memory costs ~160 MiB of RSS from the moment it is imported: it is
// loaded only where XML is validated (the sefin adapter, the local authority), by `loadSchemas`.
type Libxml2 = typeof import("libxml2-wasm")

/** The documents of the protocol we validate, by root element. */
export type NfseSchema = "DPS" | "NFSe" | "pedRegEvento" | "evento"

export class SchemaViolation extends Schema.TaggedError<SchemaViolation>()("SchemaViolation", {
  schema: Schema.String,
  messages: Schema.Array(Schema.String)
}) {}

/** The entry file of each schema; the rest comes in through xs:include / xs:import. */
const entryFiles: Record<NfseSchema, string> = {
  DPS: "DPS_v1.01.xsd",
  NFSe: "NFSe_v1.01.xsd",
  pedRegEvento: "pedRegEvento_v1.01.xsd",
  evento: "evento_v1.01.xsd"
}

const SERIE_FILE = "tiposSimples_v1.01.xsd"
const SERIE_OFFICIAL_PATTERN = "value=\"[0-9]{1,4}|[0-8][0-9]{4}\""
const SERIE_PATCHED_PATTERN = "value=\"0{0,4}[1-9][0-9]{0,3}|[1-8][0-9]{4}\""

/** More would only repeat the first cause; the authority's own E1235 lists a handful too. */
const MAX_MESSAGES = 20

const NFSE_NAMESPACE_IN_MESSAGES = "{http://www.sped.fazenda.gov.br/nfse}"

// A URL scheme of our own: libxml2 resolves schemaLocation against the entry file's URL, and the
// buffer provider below answers only for these names, so no schema load ever touches the disk or
// the network after the first read.
const VIRTUAL_BASE = "nfse-xsd:///v1.01/"

/**
 * The official v1.01 schemas, shipped with the service in `schemas/nfse-v1.01/` (byte-identical
 * to the national system's package; a test checks them against the SHA-256 sums of its README), so a
 * deployment of this repository alone validates. `NFSE_XSD_DIR` points at another release.
 */
export const xsdDirectory = (): string => process.env["NFSE_XSD_DIR"] ?? shippedSchemas(new URL(".", import.meta.url))

/**
 * `schemas/nfse-v1.01/` of the package this module is in: two folders up from src/authority/, one
 * up from the bundle in dist/ (scripts/build.mjs).
 */
const shippedSchemas = (from: URL): string => {
  for (let dir = from;; dir = new URL("..", dir)) {
    const candidate = fileURLToPath(new URL("schemas/nfse-v1.01/", dir))
    if (fs.existsSync(candidate)) return candidate
    if (dir.pathname === "/") throw new Error(`no schemas/nfse-v1.01/ above ${fileURLToPath(from)}; set NFSE_XSD_DIR`)
  }
}

/** Every .xsd of the folder, with the serie facet patched; throws if the facet is not found. */
const readPatchedSchemas = (dir: string): ReadonlyMap<string, Uint8Array> => {
  const files = new Map<string, Uint8Array>()
  for (const name of fs.readdirSync(dir).filter((f) => f.endsWith(".xsd")).sort()) {
    const bytes = fs.readFileSync(path.join(dir, name))
    if (name !== SERIE_FILE) {
      files.set(name, new Uint8Array(bytes))
      continue
    }
    const text = bytes.toString("utf8")
    const occurrences = text.split(SERIE_OFFICIAL_PATTERN).length - 1
    if (occurrences !== 1) {
      // A different schema release: patching blindly could change more than the one facet.
      throw new Error(`${name}: expected the published TSSerieDPS pattern once, found it ${occurrences} times`)
    }
    files.set(name, new Uint8Array(Buffer.from(text.replace(SERIE_OFFICIAL_PATTERN, SERIE_PATCHED_PATTERN), "utf8")))
  }
  for (const entry of Object.values(entryFiles)) {
    if (!files.has(entry)) throw new Error(`${entry} is missing from ${dir}`)
  }
  return files
}

/**
 * Writes the patched schema set into `dir` (created if needed) and returns `dir`, so an
 * independent validator can check our output: `xmllint --noout --schema <dir>/DPS_v1.01.xsd f.xml`.
 */
export const writePatchedSchemas = (dir: string): string => {
  fs.mkdirSync(dir, { recursive: true })
  for (const [name, bytes] of readPatchedSchemas(xsdDirectory())) {
    fs.writeFileSync(path.join(dir, name), bytes)
  }
  return dir
}

interface Loaded {
  readonly libxml2: Libxml2
  readonly files: ReadonlyMap<string, Uint8Array>
  readonly validators: Map<NfseSchema, XsdValidator>
}

let loaded: Loaded | undefined
let loading: Promise<void> | undefined

/**
 * Loads libxml2 and compiles every schema, once (later calls share the first). Whatever validates
 * waits for it when it starts, so a missing or unreadable schema set stops that start-up instead
 * of failing the first document.
 */
export const loadSchemas = (): Promise<void> =>
  loading ??= import("libxml2-wasm").then((libxml2) => {
    const files = readPatchedSchemas(xsdDirectory())
    const buffers: Record<string, Uint8Array> = {}
    for (const [name, bytes] of files) buffers[VIRTUAL_BASE + name] = bytes
    libxml2.xmlRegisterInputProvider(new libxml2.XmlBufferInputProvider(buffers))
    const state: Loaded = { libxml2, files, validators: new Map() }
    for (const schema of Object.keys(entryFiles) as Array<NfseSchema>) {
      const entry = entryFiles[schema]
      // The schema document is kept alive with its validator for the life of the process: the
      // compiled schema may point into it, and there are only four.
      const schemaDoc = libxml2.XmlDocument.fromBuffer(files.get(entry)!, { url: VIRTUAL_BASE + entry })
      state.validators.set(schema, libxml2.XsdValidator.fromDoc(schemaDoc))
    }
    loaded = state
  })

const loadedSchemas = (): Loaded => {
  if (loaded === undefined) throw new Error("validateXml before loadSchemas() has completed")
  return loaded
}

/** libxml2's message without the long namespace (every element of ours is in it), and its line. */
const describe = (detail: ErrorDetail): string =>
  `line ${detail.line}: ${detail.message.trim().split(NFSE_NAMESPACE_IN_MESSAGES).join("")}`

const violation = (schema: NfseSchema, details: ReadonlyArray<ErrorDetail>, fallback: string): SchemaViolation => {
  const messages = details.filter((d) => d.level >= 2).slice(0, MAX_MESSAGES).map(describe)
  return new SchemaViolation({ schema, messages: messages.length > 0 ? messages : [fallback] })
}

// External entities are never loaded (our documents never have a DTD); NONET is belt and braces.
const parseOptions = (libxml2: Libxml2) => libxml2.ParseOption.XML_PARSE_NO_XXE | libxml2.ParseOption.XML_PARSE_NONET

/**
 * Validates `xml` against the schema of its expected root element (once `loadSchemas` has
 * completed). Malformed XML, or a document whose root is another element, is a violation too.
 */
export const validateXml = (schema: NfseSchema, xml: string): Result.Result<void, SchemaViolation> => {
  const { libxml2, validators } = loadedSchemas()
  const validator = validators.get(schema)!
  let doc: XmlDocument
  try {
    doc = libxml2.XmlDocument.fromString(xml, { option: parseOptions(libxml2) })
  } catch (error) {
    return Result.fail(
      violation(
        schema,
        error instanceof libxml2.XmlLibError ? error.details : [],
        "The document is not well-formed XML"
      )
    )
  }
  try {
    validator.validate(doc)
    return Result.void
  } catch (error) {
    if (error instanceof libxml2.XmlLibError) {
      return Result.fail(violation(schema, error.details, "The document does not match the schema"))
    }
    throw error
  } finally {
    doc.dispose()
  }
}
