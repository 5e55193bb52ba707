/**
 * The IBS and CBS rates of the transition, year by year, as far as the law has published them
 * (docs/tax-reform.md lists the sources). Rates are in hundredths of a percent (90 = 0.90 %).
 *
 * - 2026, the test year: CBS 0.9 % (LC 214/2025 art. 346), state IBS 0.1 % (art. 343), municipal
 *   IBS 0 % (Informe Técnico 2025.002 §5).
 * - 2027 and 2028: state IBS 0.05 % and municipal IBS 0.05 % (art. 344). The CBS is charged at its
 *   reference rate, which a Senate resolution fixes for 2027 to 2033 (arts. 349 and 353): not
 *   published, so unknown here.
 * - 2029 on: the IBS reference rates are the Senate's too (arts. 361 to 365): nothing is known.
 *
 * A year whose rates are not all known is not an error of the note: the national system knows its
 * rates and computes the amounts into the NFS-e. Only a competence before 2026 is refused: the
 * national system takes the group from the 01/01/2026 competence on (rule E0850).
 */
import * as Data from "effect/Data"
import * as Result from "effect/Result"

/** Rates in hundredths of a percent (90 = 0.90 %). */
export interface IbsCbsRates {
  readonly stateIbs: number
  readonly municipalIbs: number
  readonly cbs: number
}

/** The first year of the reform's taxes: the earliest competence a note may declare them for. */
export const FIRST_REFORM_YEAR = 2026

/** What the law fixes per year; a part left out awaits a Senate resolution. */
export const PUBLISHED_RATES: ReadonlyMap<number, Partial<IbsCbsRates>> = new Map([
  [2026, { stateIbs: 10, municipalIbs: 0, cbs: 90 }],
  [2027, { stateIbs: 5, municipalIbs: 5 }],
  [2028, { stateIbs: 5, municipalIbs: 5 }]
])

export type IbsCbsRatesProblemReason =
  /** Before 2026: the national system refuses the group (E0850). */
  | "before_reform"
  /** A rate of the year is not published: the authority computes it, we cannot. */
  | "unpublished"

export class IbsCbsRatesProblem extends Data.TaggedError("IbsCbsRatesProblem")<{
  readonly reason: IbsCbsRatesProblemReason
  readonly message: string
}> {}

export const yearOf = (competence: string): number => Number(competence.slice(0, 4))

const complete = (rates: Partial<IbsCbsRates> | undefined): IbsCbsRates | undefined =>
  rates?.stateIbs === undefined || rates.municipalIbs === undefined || rates.cbs === undefined
    ? undefined
    : { stateIbs: rates.stateIbs, municipalIbs: rates.municipalIbs, cbs: rates.cbs }

/** Whether the competence date (YYYY-MM-DD) may carry an IBS/CBS group at all (E0850). */
export const reformCompetenceProblem = (competence: string): IbsCbsRatesProblem | undefined =>
  yearOf(competence) < FIRST_REFORM_YEAR
    ? new IbsCbsRatesProblem({
      reason: "before_reform",
      message: `IBS/CBS can be declared from the ${FIRST_REFORM_YEAR} competence on (E0850), not ${competence}`
    })
    : undefined

/** The rates of the competence's year, when every one of them is published. */
export const ibsCbsRatesFor = (competence: string): Result.Result<IbsCbsRates, IbsCbsRatesProblem> => {
  const early = reformCompetenceProblem(competence)
  if (early !== undefined) return Result.fail(early)
  const year = yearOf(competence)
  const rates = complete(PUBLISHED_RATES.get(year))
  return rates === undefined
    ? Result.fail(
      new IbsCbsRatesProblem({ reason: "unpublished", message: `The IBS/CBS rates of ${year} are not all published` })
    )
    : Result.succeed(rates)
}

/**
 * What a stand-in for the national system (the simulator, the local authority) charges for a year
 * whose rates are not all published: each part at its latest published rate. Not the law: the real
 * NFS-e carries the authority's rates, and the document shows those.
 */
export const standInRatesFor = (competence: string): Result.Result<IbsCbsRates, IbsCbsRatesProblem> => {
  const early = reformCompetenceProblem(competence)
  if (early !== undefined) return Result.fail(early)
  const latest = (part: keyof IbsCbsRates): number => {
    for (let year = yearOf(competence); year >= FIRST_REFORM_YEAR; year--) {
      const rate = PUBLISHED_RATES.get(year)?.[part]
      if (rate !== undefined) return rate
    }
    return 0
  }
  return Result.succeed({ stateIbs: latest("stateIbs"), municipalIbs: latest("municipalIbs"), cbs: latest("cbs") })
}
