/**
 * What an authorized NFS-e says about its IBS/CBS (`infNFSe/IBSCBS`, the authority's computation),
 * read from its XML as the document's figures; apart from NoteValues.ts, which reads `valores`.
 */
import type { Element } from "@xmldom/xmldom"
import * as Result from "effect/Result"
import { ibsCbsFiguresOf } from "../domain/IbsCbsFigures.js"
import type { IbsCbsFigures } from "../domain/Money.js"
import { readNfseIbsCbs } from "./sefin/IbsCbs.js"
import { NFSE_NAMESPACE, nfseElement, parseXml } from "./xml/XmlText.js"

/**
 * The note's IBS/CBS figures; undefined when it has no `IBSCBS` group (no group was declared) or
 * the XML cannot be read (the group is then missing from the document, never made up).
 */
export const noteIbsCbsOf = (nfseXml: string): IbsCbsFigures | undefined => {
  // Most notes carry no group: no parse for them.
  if (!nfseXml.includes("IBSCBS")) return undefined
  const parsed = parseXml(nfseXml)
  if (Result.isFailure(parsed)) return undefined
  const root = parsed.success.documentElement
  if (root === null || root.localName !== "NFSe" || root.namespaceURI !== NFSE_NAMESPACE) return undefined
  const inf = nfseElement(root, "infNFSe")
  return inf === undefined ? undefined : noteIbsCbsOfInf(inf) ?? undefined
}

/** The same, from a note's parsed `infNFSe` (an adapter that parsed the note to check it): null without a readable group. */
export const noteIbsCbsOfInf = (inf: Element): IbsCbsFigures | null => {
  const read = readNfseIbsCbs(inf)
  return Result.isFailure(read) || read.success === undefined ? null : ibsCbsFiguresOf(read.success.computation)
}
