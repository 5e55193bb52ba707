/**
 * The amounts an authorized NFS-e states itself (its `valores`, and the values of the DPS it
 * embeds), kept with the document's authority data: once a note is authorized the document shows
 * these, not the service's computation, and a difference between the two is reported
 * (IssuanceWorker logs it as a warning).
 */
import * as Schema from "effect/Schema"
import { type Amounts, Centavos, Rate } from "./Money.js"

// Notes recorded before these figures were read lack them: optional, and the document then shows
// the computed figure.
const since = (description: string) => Schema.optionalKey(Centavos.annotate({ description }))

export const NoteAmounts = Schema.Struct({
  unconditional_discount: since("The note's `vDescIncond` (0 when absent)."),
  conditional_discount: since("The note's `vDescCond` (0 when absent)."),
  deductions: Centavos.annotate({ description: "The note's `vCalcDR` (0 when absent)." }),
  benefit_reduction: since("The note's `vCalcBM` (0 when absent)."),
  base: Schema.NullOr(Centavos).annotate({ description: "The note's `vBC`; null when it has none." }),
  iss_rate: Schema.NullOr(Rate).annotate({ description: "The note's `pAliqAplic`; null when it has none." }),
  iss_amount: Schema.NullOr(Centavos).annotate({ description: "The note's `vISSQN`; null when it has none." }),
  iss_withheld: since("The note's `vISSQN` when its `tpRetISSQN` is 2 or 3, else 0."),
  federal_withheld: since("The note's `vRetCP` + `vRetIRRF` + `vRetCSLL`."),
  total_withheld: Centavos.annotate({ description: "The note's `vTotalRet` (0 when absent)." }),
  net: Centavos.annotate({ description: "The note's `vLiq`." })
}).annotate({
  identifier: "NoteAmounts",
  description: "The authorized NFS-e's own figures, read from its XML at authorization."
})
export type NoteAmounts = typeof NoteAmounts.Type

/**
 * The document's amounts as shown: the computation before authorization, the note's figures after.
 * A figure the note does not state (a base on a Simples note) stays the computed one, but ISS rate
 * and amount follow the note: a note without them charges no ISS on it.
 */
export const shownAmounts = (computed: Amounts, note: NoteAmounts | undefined): Amounts =>
  note === undefined ? computed : {
    ...computed,
    source: "note",
    unconditional_discount: note.unconditional_discount ?? computed.unconditional_discount,
    conditional_discount: note.conditional_discount ?? computed.conditional_discount,
    deductions: note.deductions,
    benefit_reduction: note.benefit_reduction ?? computed.benefit_reduction,
    base: note.base ?? computed.base,
    iss_rate: note.iss_rate,
    iss_amount: note.iss_amount,
    iss_withheld: note.iss_withheld ?? computed.iss_withheld,
    federal_withheld: note.federal_withheld ?? computed.federal_withheld,
    total_withheld: note.total_withheld,
    net: note.net
  }

export interface AmountDifference {
  readonly field: string
  readonly computed: number | string | null
  readonly note: number | string | null
}

/** Where the note disagrees with the service's computation, figure by figure (those it states). */
export const amountDifferences = (computed: Amounts, note: NoteAmounts): ReadonlyArray<AmountDifference> => {
  const stated = (field: keyof NoteAmounts & keyof Amounts) =>
    note[field] === undefined
      ? []
      : [[field, computed[field], note[field]] as [string, number | string | null, number | string | null]]
  const pairs: ReadonlyArray<readonly [string, number | string | null, number | string | null]> = [
    ...stated("unconditional_discount"),
    ...stated("conditional_discount"),
    ["deductions", computed.deductions, note.deductions],
    ...stated("benefit_reduction"),
    ["base", note.base === null ? null : computed.base, note.base],
    [
      "iss_rate",
      computed.iss_rate === null ? null : Number(computed.iss_rate),
      note.iss_rate === null ? null : Number(note.iss_rate)
    ],
    ["iss_amount", computed.iss_amount, note.iss_amount],
    ...stated("iss_withheld"),
    ...stated("federal_withheld"),
    ["total_withheld", computed.total_withheld, note.total_withheld],
    ["net", computed.net, note.net]
  ]
  return pairs.filter(([, ours, theirs]) => ours !== theirs).map(([field, ours, theirs]) => ({
    field,
    computed: ours,
    note: theirs
  }))
}
