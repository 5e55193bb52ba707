/**
 * The correction letter (CC-e, event 110110) of an NF-e, as the API takes and shows it. A letter
 * corrects what the law lets one correct after authorization (a description, an address, a
 * transport detail), never a value, a party or a date; the authority keeps the last letter as the
 * one that counts, so each letter restates every correction still wanted.
 */
import { Schema } from "effect"
import { Rejection } from "./Document.js"
import { trimmedString } from "./Normalized.js"
import { visibleText } from "./Text.js"
import { DateTime } from "./Time.js"

/** The letter's text as the event carries it: whitespace runs become one space. */
export const correctionTextOf = (text: string): string => text.replace(/\s+/g, " ").trim()

/** The layout's characters (`[ -ÿ]`): printable Latin-1, which every authority takes. */
const LATIN_1 = /^[\u0020-\u007E\u00A0-\u00FF]*$/u

export const CorrectionText = trimmedString(Schema.String.check(
  visibleText,
  Schema.makeFilter((s: string) => {
    const text = correctionTextOf(s)
    return text.length >= 15 && text.length <= 1000
  }, { message: "text must have 15 to 1000 characters (runs of whitespace count as one space)" }),
  Schema.makeFilter((s: string) => LATIN_1.test(correctionTextOf(s)), {
    message: "text must be in the Latin-1 characters the authorities take (letters with accents are fine; " +
      "emoji, dashes and quotes from word processors are not)"
  })
))

export const NewCorrection = Schema.Struct({
  text: CorrectionText.annotate({
    description: "What the letter corrects (`xCorrecao`), 15 to 1 000 characters of Latin-1. It replaces the " +
      "letters before it: restate every correction still wanted."
  })
}).annotate({ identifier: "NewCorrection", description: "A correction letter (CC-e) of an authorized NF-e." })
export type NewCorrection = typeof NewCorrection.Type

export const CorrectionStatus = Schema.Literals(["pending", "registered", "refused"])

export const Correction = Schema.Struct({
  object: Schema.Literal("correction"),
  document_id: Schema.String,
  sequence: Schema.Int.annotate({
    description: "The letter's number for its note (`nSeqEvento`), 1 to 20. A refused letter's number is used " +
      "again by the next one: the authority registered nothing under it."
  }),
  text: Schema.String,
  status: CorrectionStatus.annotate({
    description: "`registered` by the authority (`protocol` set); `refused` by it (`error` says why); " +
      "`pending` while its answer is not known (the authority did not answer: send the same text again)."
  }),
  protocol: Schema.NullOr(Schema.String).annotate({
    description: "The event's protocol; null until registered, and when the registration was found rather " +
      "than made (a retry after a lost answer)."
  }),
  requested_at: DateTime,
  registered_at: Schema.NullOr(DateTime),
  error: Schema.NullOr(Rejection)
}).annotate({
  identifier: "Correction",
  description: "A correction letter (CC-e, event 110110) of an NF-e and the authority's answer."
})
export type Correction = typeof Correction.Type
