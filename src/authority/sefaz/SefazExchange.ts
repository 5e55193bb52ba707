/**
 * What every exchange with a state authority shares: the batch id drawn from the document, the
 * "paused" answers, an answer read once, and where a call goes.
 */
import { Result } from "effect"
import type { Environment } from "../../domain/Principal.js"
import { parseXml } from "../xml/XmlText.js"
import type { NfeModel } from "./NfeAccessKey.js"
import { NFE_NAMESPACE } from "./NfeXml.js"

/** A batch's id (idLote, up to 15 digits), drawn from the document's id: the same at every attempt. */
export const batchIdOf = (documentId: string): string => documentId.replace(/[^0-9]/g, "").slice(-15) || "1"

// The authorities' "paused" answers (108 short term, 109 without forecast): try again later.
export const PAUSED: ReadonlySet<string> = new Set(["108", "109"])

/** An answer's document, parsed once: the texts and elements of a name, in document order. */
export interface AnswerReader {
  readonly texts: (name: string) => Array<string>
  readonly element: (name: string) => string | undefined
}

export const readerOf = (xml: string): AnswerReader => {
  const parsed = parseXml(xml)
  const all = (name: string) =>
    Result.isFailure(parsed) ? [] : Array.from(parsed.success.getElementsByTagNameNS(NFE_NAMESPACE, name))
  return {
    texts: (name) => all(name).map((element) => element.textContent ?? ""),
    element: (name) => all(name)[0]?.toString()
  }
}

/** Where a call goes: the authorizer of a state's notes of a model, in an environment. */
export interface Addressee {
  readonly model: NfeModel
  readonly state: string
  readonly environment: Environment
}
