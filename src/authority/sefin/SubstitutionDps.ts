/**
 * The `subst` group of a DPS (TCSubstituicao, v1.01): the note a substitute replaces (`chSubstda`,
 * its access key), the reason code (`cMotivo`, TSCodJustSubst: 01, 02, 03, 04, 05 or 99) and the
 * optional text (`xMotivo`, 15 to 255 characters). It sits right after `cLocEmi` in `infDPS`.
 */
import type { Element } from "@xmldom/xmldom"
import { leaf, nfseText, node, singleLine } from "../xml/XmlText.js"

export interface DpsSubstitution {
  /** chSubstda: the replaced note's 50-digit access key. */
  readonly accessKey: string
  /** cMotivo as written ("01".."05", "99"). */
  readonly reasonCode: string
  /** xMotivo. */
  readonly reason?: string | undefined
}

/** The group, or "" for a DPS that replaces nothing. */
export const substitutionGroup = (substitution: DpsSubstitution | undefined): string =>
  substitution === undefined ? "" : node(
    "subst",
    leaf("chSubstda", substitution.accessKey),
    leaf("cMotivo", substitution.reasonCode),
    substitution.reason === undefined || singleLine(substitution.reason) === ""
      ? ""
      : leaf("xMotivo", singleLine(substitution.reason))
  )

/** Reads the group of a DPS (the local authority's side); undefined without one. */
export const readSubstitution = (subst: Element | undefined): DpsSubstitution | undefined => {
  if (subst === undefined) return undefined
  const reason = nfseText(subst, "xMotivo")
  return {
    accessKey: nfseText(subst, "chSubstda") ?? "",
    reasonCode: nfseText(subst, "cMotivo") ?? "",
    ...(reason === undefined ? {} : { reason })
  }
}
