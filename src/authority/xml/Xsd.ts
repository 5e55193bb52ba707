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
 * starts), as a set of SchemaSet.ts.
 */
import type * as Result from "effect/Result"
import { schemaSet, type SchemaViolation } from "./SchemaSet.js"

export { SchemaViolation } from "./SchemaSet.js"

/** The documents of the protocol we validate, by root element. */
export type NfseSchema = "DPS" | "NFSe" | "pedRegEvento" | "evento"

const SERIE_FILE = "tiposSimples_v1.01.xsd"
const SERIE_OFFICIAL_PATTERN = "value=\"[0-9]{1,4}|[0-8][0-9]{4}\""
const SERIE_PATCHED_PATTERN = "value=\"0{0,4}[1-9][0-9]{0,3}|[1-8][0-9]{4}\""

/** The serie facet narrowed; throws if the file does not hold the published pattern exactly once. */
const patchSerie = (name: string, text: string): string | undefined => {
  if (name !== SERIE_FILE) return undefined
  const occurrences = text.split(SERIE_OFFICIAL_PATTERN).length - 1
  if (occurrences !== 1) {
    // A different schema release: patching blindly could change more than the one facet.
    throw new Error(`${name}: expected the published TSSerieDPS pattern once, found it ${occurrences} times`)
  }
  return text.replace(SERIE_OFFICIAL_PATTERN, SERIE_PATCHED_PATTERN)
}

/**
 * The official v1.01 schemas, shipped with the service in `schemas/nfse-v1.01/` (byte-identical
 * to the national system's package; a test checks them against the SHA-256 sums of its README), so a
 * deployment of this repository alone validates. `NFSE_XSD_DIR` points at another release.
 */
const nfseSchemas = schemaSet<NfseSchema>({
  folder: "nfse-v1.01",
  directoryVariable: "NFSE_XSD_DIR",
  virtualBase: "nfse-xsd:///v1.01/",
  entries: {
    DPS: "DPS_v1.01.xsd",
    NFSe: "NFSe_v1.01.xsd",
    pedRegEvento: "pedRegEvento_v1.01.xsd",
    evento: "evento_v1.01.xsd"
  },
  namespace: "http://www.sped.fazenda.gov.br/nfse",
  patch: patchSerie
})

export const xsdDirectory = (): string => nfseSchemas.directory()

/**
 * Writes the patched schema set into `dir` (created if needed) and returns `dir`, so an
 * independent validator can check our output: `xmllint --noout --schema <dir>/DPS_v1.01.xsd f.xml`.
 */
export const writePatchedSchemas = (dir: string): string => nfseSchemas.writeTo(dir)

/** Loads libxml2 and compiles every schema, once (later calls share the first). */
export const loadSchemas = (): Promise<void> => nfseSchemas.load()

/**
 * Validates `xml` against the schema of its expected root element (once `loadSchemas` has
 * completed). Malformed XML, or a document whose root is another element, is a violation too.
 */
export const validateXml = (schema: NfseSchema, xml: string): Result.Result<void, SchemaViolation> =>
  nfseSchemas.validate(schema, xml)
