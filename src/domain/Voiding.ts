/**
 * Number voiding (inutilização) as the API takes and shows it: a range of an NF-e or NFC-e series
 * whose numbers no note used (drawn for documents the authority rejected, or that failed), voided
 * at the authority so the series has no unexplained gap.
 */
import { Schema } from "effect"
import { described } from "./Described.js"
import { Rejection } from "./Document.js"
import { Environment } from "./Principal.js"
import { ReasonText } from "./Text.js"
import { DateTime } from "./Time.js"

/** The widest range one request voids: a slip of the keyboard should not void a year's numbers. */
export const MAX_VOIDED_RANGE = 1000

const NoteNumber = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 999_999_999 }))

export const NewVoiding = Schema.Struct({
  type: Schema.Literals(["product_invoice", "consumer_invoice"]).annotate({
    description:
      "Whose numbers: an NF-e series (`product_invoice`, model 55) or an NFC-e series (`consumer_invoice`, 65)."
  }),
  series: Schema.optionalKey(
    Schema.String.check(Schema.isPattern(/^(?:0|[1-9][0-9]{0,2})$/u)).annotate({
      description: "The series, as the documents name it; default \"1\"."
    })
  ),
  from: NoteNumber.annotate({ description: "The first number of the range (`nNFIni`)." }),
  to: NoteNumber.annotate({ description: "The last number of the range (`nNFFin`), at most 1 000 after `from`." }),
  reason: ReasonText.pipe(described({ description: "Why the numbers were not used (`xJust`), 15 to 255 characters." }))
}).annotate({ identifier: "NewVoiding", description: "A range of unused numbers of a goods series to void." }).check(
  Schema.makeFilter<{ readonly from: number; readonly to: number }>((v) =>
    v.to < v.from
      ? { path: ["to"], issue: "to must not be below from" }
      : v.to - v.from >= MAX_VOIDED_RANGE
      ? { path: ["to"], issue: `a request voids at most ${MAX_VOIDED_RANGE} numbers` }
      : undefined
  )
)
export type NewVoiding = typeof NewVoiding.Type

export const VoidedNumbers = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("voided_numbers"),
  environment: Environment,
  type: Schema.Literals(["product_invoice", "consumer_invoice"]),
  series: Schema.String,
  from: Schema.Int,
  to: Schema.Int,
  reason: Schema.String,
  status: Schema.Literals(["pending", "registered", "refused"]).annotate({
    description: "`registered` by the authority (`protocol` set); `refused` by it (`error` says why); " +
      "`pending` while its answer is not known (send the same request again)."
  }),
  protocol: Schema.NullOr(Schema.String).annotate({
    description: "The authority's protocol; null until registered, and when the voiding was found rather than " +
      "made (a retry after a lost answer)."
  }),
  requested_at: DateTime,
  registered_at: Schema.NullOr(DateTime),
  error: Schema.NullOr(Rejection)
}).annotate({
  identifier: "VoidedNumbers",
  description: "A range of an NF-e or NFC-e series voided (inutilização) and the authority's answer."
})
export type VoidedNumbers = typeof VoidedNumbers.Type
