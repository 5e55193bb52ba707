/**
 * A document's IBS/CBS figures (`amounts.ibs_cbs`): the service's estimate until the note is
 * authorized, then the authorized NFS-e's own `IBSCBS` figures, which the document shows; a
 * difference between the two is reported (IssuanceWorker logs it as a warning), as for the ISS.
 */
import type { IbsCbsComputation } from "./IbsCbsAmounts.js"
import type { Amounts, IbsCbsFigures } from "./Money.js"

/** Hundredths of a percent as the NFS-e writes a rate: 90 → "0.90". */
const percent = (hundredths: number): string =>
  `${Math.trunc(hundredths / 100)}.${String(hundredths % 100).padStart(2, "0")}`

/** The figures of a computation (ours, or the one read back from a note). */
export const ibsCbsFiguresOf = (c: IbsCbsComputation): IbsCbsFigures => ({
  base: c.base,
  cbs_rate: percent(c.cbs.effectiveRate),
  state_ibs_rate: percent(c.stateIbs.effectiveRate),
  municipal_ibs_rate: percent(c.municipalIbs.effectiveRate),
  cbs: c.cbs.amount,
  state_ibs: c.stateIbs.amount,
  municipal_ibs: c.municipalIbs.amount,
  ibs_total: c.ibsTotal,
  note_total: c.noteTotal
})

/** The document's amounts as shown: the note's IBS/CBS figures once it has them, else as they were. */
export const withNoteIbsCbs = (shown: Amounts, note: IbsCbsFigures | undefined): Amounts =>
  note === undefined ? shown : { ...shown, ibs_cbs: note }

export interface IbsCbsDifference {
  readonly field: string
  readonly computed: number | string | null
  readonly note: number | string
}

const FIELDS = [
  "base",
  "cbs_rate",
  "state_ibs_rate",
  "municipal_ibs_rate",
  "cbs",
  "state_ibs",
  "municipal_ibs",
  "ibs_total",
  "note_total"
] as const satisfies ReadonlyArray<keyof IbsCbsFigures>

/**
 * Where the note's IBS/CBS disagrees with the service's estimate, figure by figure. Without an
 * estimate (a year whose rates are not all published) there is nothing to compare: the note's
 * figures are the only ones.
 */
export const ibsCbsDifferences = (
  computed: IbsCbsFigures | null | undefined,
  note: IbsCbsFigures | undefined
): ReadonlyArray<IbsCbsDifference> =>
  computed == null || note === undefined ? [] : FIELDS.filter((field) => computed[field] !== note[field]).map((
    field
  ) => ({ field: `ibs_cbs.${field}`, computed: computed[field], note: note[field] }))
