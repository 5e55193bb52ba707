/**
 * XSD validation against the official NF-e 4.00 schemas (package 010e v1.02 of 10/07/2026, with the
 * IBS/CBS groups of the tax reform and the alphanumeric CNPJ), shipped byte for byte in
 * `schemas/nfe-v4.00/` (its README gives the source and checksums). A note is validated before it
 * leaves (a failure is our bug: the document goes to `failed`, never sent), and the local SEFAZ
 * refuses what the real one would. `NFE_XSD_DIR` points at another release.
 */
import type * as Result from "effect/Result"
import { schemaSet, type SchemaViolation } from "../xml/SchemaSet.js"
import { NFE_NAMESPACE } from "./NfeXml.js"

/** The documents validated, by root element. */
export type NfeSchema =
  | "NFe"
  | "nfeProc"
  | "enviNFe"
  | "retEnviNFe"
  | "consSitNFe"
  | "retConsSitNFe"
  | "consStatServ"
  | "retConsStatServ"

const nfeSchemas = schemaSet<NfeSchema>({
  folder: "nfe-v4.00",
  directoryVariable: "NFE_XSD_DIR",
  virtualBase: "nfe-xsd:///v4.00/",
  entries: {
    NFe: "nfe_v4.00.xsd",
    nfeProc: "procNFe_v4.00.xsd",
    enviNFe: "enviNFe_v4.00.xsd",
    retEnviNFe: "retEnviNFe_v4.00.xsd",
    consSitNFe: "consSitNFe_v4.00.xsd",
    retConsSitNFe: "retConsSitNFe_v4.00.xsd",
    consStatServ: "consStatServ_v4.00.xsd",
    retConsStatServ: "retConsStatServ_v4.00.xsd"
  },
  namespace: NFE_NAMESPACE
})

export const nfeXsdDirectory = (): string => nfeSchemas.directory()

/** Loads libxml2 and compiles the NF-e schemas, once. */
export const loadNfeSchemas = (): Promise<void> => nfeSchemas.load()

/** Validates `xml` against the schema of its root element (after `loadNfeSchemas`). */
export const validateNfe = (schema: NfeSchema, xml: string): Result.Result<void, SchemaViolation> =>
  nfeSchemas.validate(schema, xml)

/** Writes the schemas into `dir`, for `xmllint --schema`. */
export const writeNfeSchemas = (dir: string): string => nfeSchemas.writeTo(dir)
