/**
 * An official XSD package shipped with the service (a folder of `schemas/`), compiled once and
 * validated against with libxml2 (as WebAssembly, libxml2-wasm: no native build, and the same
 * engine as `xmllint` decides). The NFS-e package (Xsd.ts) and the NF-e package
 * (../sefaz/NfeXsd.ts) are two sets of this kind.
 *
 * Each set reads its schemas through an input provider of its own URL scheme, answering only for
 * its files, so no schema load ever touches the disk or the network after the first read.
 * Compiling a package takes ~100 ms; validating a document afterwards, under a millisecond.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { ErrorDetail, XmlDocument, XsdValidator } from "libxml2-wasm"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

// libxml2 is WebAssembly whose memory costs ~160 MiB of RSS from the moment it is imported: it is
// loaded only where XML is validated (the sefin adapter, the local authority), by `load`.
type Libxml2 = typeof import("libxml2-wasm")

export class SchemaViolation extends Schema.TaggedError<SchemaViolation>()("SchemaViolation", {
  schema: Schema.String,
  messages: Schema.Array(Schema.String)
}) {}

/** More would only repeat the first cause; the authorities' own refusals list a handful too. */
const MAX_MESSAGES = 20

export interface SchemaSetOptions<K extends string> {
  /** The folder under `schemas/` of the repository. */
  readonly folder: string
  /** An environment variable that points at another copy of the package. */
  readonly directoryVariable: string
  /** The URL scheme and path the set's files are read under, e.g. "nfse-xsd:///v1.01/". */
  readonly virtualBase: string
  /** The entry file of each document the set validates, by the name callers use. */
  readonly entries: Readonly<Record<K, string>>
  /** The package's namespace, left out of messages (every element is in it). */
  readonly namespace: string
  /** A change made in memory to a file's text (the files on disk stay the published ones); undefined: unchanged. */
  readonly patch?: ((name: string, text: string) => string | undefined) | undefined
}

export interface SchemaSet<K extends string> {
  /** The folder the schemas are read from. */
  readonly directory: () => string
  /** Loads libxml2 and compiles every entry, once; whatever validates awaits it when it starts. */
  readonly load: () => Promise<void>
  /** Validates `xml` against the schema of its expected root (after `load`); malformed XML is a violation too. */
  readonly validate: (schema: K, xml: string) => Result.Result<void, SchemaViolation>
  /** Writes the set (patched as validated) into `dir`, for an independent validator such as `xmllint`. */
  readonly writeTo: (dir: string) => string
}

/** `schemas/<folder>/` of the package this module is in: up from src/authority/xml/ or from dist/. */
const shippedSchemas = (folder: string, from: URL, variable: string): string => {
  for (let dir = from;; dir = new URL("..", dir)) {
    const candidate = fileURLToPath(new URL(`schemas/${folder}/`, dir))
    if (fs.existsSync(candidate)) return candidate
    if (dir.pathname === "/") throw new Error(`no schemas/${folder}/ above ${fileURLToPath(from)}; set ${variable}`)
  }
}

// External entities are never loaded (no document of the protocols has a DTD); NONET is belt and braces.
const parseOptions = (libxml2: Libxml2) => libxml2.ParseOption.XML_PARSE_NO_XXE | libxml2.ParseOption.XML_PARSE_NONET

export const schemaSet = <K extends string>(options: SchemaSetOptions<K>): SchemaSet<K> => {
  const directory = () =>
    process.env[options.directoryVariable] ??
      shippedSchemas(options.folder, new URL(".", import.meta.url), options.directoryVariable)

  const readFiles = (dir: string): ReadonlyMap<string, Uint8Array> => {
    const files = new Map<string, Uint8Array>()
    for (const name of fs.readdirSync(dir).filter((f) => f.endsWith(".xsd")).sort()) {
      const bytes = fs.readFileSync(path.join(dir, name))
      const patched = options.patch?.(name, bytes.toString("utf8"))
      files.set(name, new Uint8Array(patched === undefined ? bytes : Buffer.from(patched, "utf8")))
    }
    for (const entry of Object.values<string>(options.entries)) {
      if (!files.has(entry)) throw new Error(`${entry} is missing from ${dir}`)
    }
    return files
  }

  let loaded: { readonly libxml2: Libxml2; readonly validators: Map<K, XsdValidator> } | undefined
  let loading: Promise<void> | undefined

  const load = () =>
    loading ??= import("libxml2-wasm").then((libxml2) => {
      const files = readFiles(directory())
      const buffers: Record<string, Uint8Array> = {}
      for (const [name, bytes] of files) buffers[options.virtualBase + name] = bytes
      libxml2.xmlRegisterInputProvider(new libxml2.XmlBufferInputProvider(buffers))
      const validators = new Map<K, XsdValidator>()
      for (const schema of Object.keys(options.entries) as Array<K>) {
        const entry = options.entries[schema]
        // The schema document lives as long as its validator, for the life of the process: the
        // compiled schema may point into it, and there are only a few.
        const schemaDoc = libxml2.XmlDocument.fromBuffer(files.get(entry)!, { url: options.virtualBase + entry })
        validators.set(schema, libxml2.XsdValidator.fromDoc(schemaDoc))
      }
      loaded = { libxml2, validators }
    })

  const namespaceInMessages = `{${options.namespace}}`
  /** libxml2's message without the long namespace, and its line. */
  const describe = (detail: ErrorDetail): string =>
    `line ${detail.line}: ${detail.message.trim().split(namespaceInMessages).join("")}`

  const violation = (schema: K, details: ReadonlyArray<ErrorDetail>, fallback: string): SchemaViolation => {
    const messages = details.filter((d) => d.level >= 2).slice(0, MAX_MESSAGES).map(describe)
    return new SchemaViolation({ schema, messages: messages.length > 0 ? messages : [fallback] })
  }

  const validate = (schema: K, xml: string): Result.Result<void, SchemaViolation> => {
    if (loaded === undefined) throw new Error(`validating ${schema} before its schemas have loaded`)
    const { libxml2, validators } = loaded
    let doc: XmlDocument
    try {
      doc = libxml2.XmlDocument.fromString(xml, { option: parseOptions(libxml2) })
    } catch (error) {
      const details = error instanceof libxml2.XmlLibError ? error.details : []
      return Result.fail(violation(schema, details, "The document is not well-formed XML"))
    }
    try {
      validators.get(schema)!.validate(doc)
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

  const writeTo = (dir: string) => {
    fs.mkdirSync(dir, { recursive: true })
    for (const [name, bytes] of readFiles(directory())) fs.writeFileSync(path.join(dir, name), bytes)
    return dir
  }

  return { directory, load, validate, writeTo }
}
