/**
 * Checks of the national XML by tools we did not write: xmllint against the shipped schemas
 * (schemas/nfse-v1.01, package of 27/07/2026) and xmlsec1 on one enveloped signature of a document.
 * Both throw with the tool's own message when the check fails; callers skip them where the tool is
 * missing (`XMLLINT`, `XMLSEC1`).
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { writePatchedSchemas } from "../../src/authority/xml/Xsd.js"
import { hasTool } from "./tools.js"

export const XMLLINT = hasTool("xmllint")
export const XMLSEC1 = hasTool("xmlsec1")

let schemaDir: string | undefined
const schemas = () => schemaDir ??= writePatchedSchemas(mkdtempSync(join(tmpdir(), "etd-official-xsd-")))

const written = (name: string, content: string) => {
  const file = join(mkdtempSync(join(tmpdir(), "etd-official-")), name)
  writeFileSync(file, content)
  return file
}

export type OfficialSchema = "DPS_v1.01.xsd" | "NFSe_v1.01.xsd" | "evento_v1.01.xsd" | "pedRegEvento_v1.01.xsd"

/** `xmllint --schema`: the document is valid against the official schema. */
export const expectSchemaValid = (xml: string, schema: OfficialSchema): void => {
  execFileSync("xmllint", ["--noout", "--schema", join(schemas(), schema), written("doc.xml", xml)], { stdio: "pipe" })
}

export interface SignatureCheck {
  /** The element the signature covers, whose `Id` attribute its Reference names: infDPS, infNFSe… */
  readonly signed: string
  /** The element whose child is the Signature, by local names from the root: ["NFSe", "infNFSe", "DPS"]. */
  readonly parent: ReadonlyArray<string>
  /**
   * What is trusted: the signer's own certificate (PEM), or a CA whose chain must lead to the
   * certificate the signature carries.
   */
  readonly trust: { readonly certificatePem: string } | { readonly caPem: string }
}

/** `xmlsec1 --verify` of the one signature named, trusting only what `check.trust` names. */
export const expectSignatureValid = (xml: string, check: SignatureCheck): void => {
  const xpath = [...check.parent, "Signature"].map((name) => `/*[local-name()='${name}']`).join("")
  const trust = "caPem" in check.trust
    ? ["--trusted-pem", written("ca.pem", check.trust.caPem)]
    : ["--pubkey-cert-pem", written("signer.pem", check.trust.certificatePem)]
  execFileSync("xmlsec1", [
    "--verify",
    "--id-attr:Id",
    check.signed,
    "--node-xpath",
    xpath,
    ...trust,
    written("doc.xml", xml)
  ], { stdio: "pipe" })
}
