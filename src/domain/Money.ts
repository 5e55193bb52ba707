/**
 * Money and tax rates for service invoices (NFS-e).
 *
 * Amounts are integer centavos and rates are decimal strings; binary floating point never touches
 * either, because one centavo of drift is enough for the authority to reject an invoice.
 *
 * Rates are held as integer ten-thousandths of a percent (RATE_SCALE units = 1 %), so "2.5" is
 * 25_000 and the 4 decimals a municipal ISS rate can carry are represented exactly.
 *
 * Amount rules (NFS-e layout names in brackets):
 *   base       [vBC]    = services [vServ] - deductions; deductions above services are an error
 *   iss_amount [vISSQN] = base x rate / 100, rounded to the centavo HALF UP (x.5 centavo -> up).
 *                         Half-up, not the half-even of ABNT NBR 5891, because that is what
 *                         municipal NFS-e validators and ERP calculators reproduce in practice.
 *   total               = services. The invoice total is the service value: ISS is informational
 *                         while it is not withheld, and tax withholding (which would give the net
 *                         value vLiq = vServ - retained taxes) is not modelled here.
 */
import * as Data from "effect/Data"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"

/** R$ 100 billion: far above any invoice, and well inside Number.MAX_SAFE_INTEGER. */
export const MAX_CENTAVOS = 10_000_000_000_000

// Schema.Number + int() rather than Schema.Int keeps the JSON Schema inline ("type": "integer")
// instead of a $ref to a shared "Int" definition.
export const Centavos = Schema.Number.check(
  Schema.isInt({ message: "amount must be an integer number of centavos" }),
  Schema.isGreaterThanOrEqualTo(0, { message: "amount must be a non-negative integer number of centavos" }),
  Schema.isLessThanOrEqualTo(MAX_CENTAVOS, { message: `amount must not exceed ${MAX_CENTAVOS} centavos` })
).annotate({
  title: "Centavos",
  description: "Amount in centavos (integer minor units of BRL), e.g. 150000 = R$ 1.500,00",
  examples: [150000]
})
export type Centavos = typeof Centavos.Type

/** Units of the exact rate representation per 1 %. */
export const RATE_SCALE = 10_000
const RATE_DECIMALS = 4

// Two integer digits cap the rate below 100, so 100 itself is spelled out.
const RATE_PATTERN = /^(?:100(?:\.0{1,4})?|[0-9]{1,2}(?:\.[0-9]{1,4})?)$/u
const RATE_MESSAGE =
  "iss_rate must be a percentage between 0 and 100 as a decimal string with up to 4 decimals, e.g. \"2.00\""

/**
 * Percentage as a decimal string ("2.00" = 2 %). Validation only bounds it to 0..100; which rate a
 * service actually carries (ISS is 2 %..5 % by law) is the municipality's rule, not ours.
 */
export const Rate = Schema.String.check(Schema.isPattern(RATE_PATTERN, { message: RATE_MESSAGE })).annotate({
  description: "Percentage as a decimal string, 0 to 100, up to 4 decimals (\"2.00\" = 2 %)",
  examples: ["2.00", "5", "3.5"]
})
export type Rate = typeof Rate.Type

export class InvalidAmounts extends Data.TaggedError("InvalidAmounts")<{
  readonly message: string
  /** Path of the offending field relative to the `amounts` object, for 400 `issues`. */
  readonly path: ReadonlyArray<string>
}> {}

/** "2.5" -> 25_000 (ten-thousandths of a percent), by string arithmetic only. */
export const parseRate = (s: string): Result.Result<number, InvalidAmounts> => {
  if (!RATE_PATTERN.test(s)) {
    return Result.fail(new InvalidAmounts({ message: RATE_MESSAGE, path: ["iss_rate"] }))
  }
  const [int, frac = ""] = s.split(".")
  return Result.succeed(Number(int) * RATE_SCALE + Number(frac.padEnd(RATE_DECIMALS, "0")))
}

/** 25_000 -> "2.50": at least 2 decimals, further ones only when significant. */
export const formatRate = (tenThousandths: number): string => {
  const int = Math.trunc(tenThousandths / RATE_SCALE)
  // Dropping at most two trailing zeros of the 4-digit fraction leaves at least 2 decimals.
  const frac = String(tenThousandths % RATE_SCALE).padStart(RATE_DECIMALS, "0").replace(/0{1,2}$/, "")
  return `${int}.${frac}`
}

/** Canonical spelling of a rate: "2" / "2.0" / "02.00" -> "2.00", "2.1250" -> "2.125". */
export const normalizeRate = (s: string): Result.Result<string, InvalidAmounts> => Result.map(parseRate(s), formatRate)

/** Rate string decoded to its exact integer ten-thousandths; encodes back to canonical form. */
export const RateTenThousandths = Rate.pipe(
  Schema.decodeTo(
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100 * RATE_SCALE })),
    SchemaTransformation.transform({ decode: (s) => Result.getOrThrow(parseRate(s)), encode: formatRate })
  )
)

export const AmountsInput = Schema.Struct({
  services: Centavos,
  deductions: Schema.optionalKey(Centavos),
  iss_rate: Rate
})
export type AmountsInput = typeof AmountsInput.Type

export const Amounts = Schema.Struct({
  services: Centavos,
  deductions: Centavos,
  base: Centavos,
  iss_rate: Rate,
  iss_amount: Centavos,
  total: Centavos
})
export type Amounts = typeof Amounts.Type

const checkCentavos = (value: number, field: string): Result.Result<number, InvalidAmounts> =>
  Number.isSafeInteger(value) && value >= 0 && value <= MAX_CENTAVOS
    ? Result.succeed(value)
    : Result.fail(
      new InvalidAmounts({
        message: `${field} must be an integer number of centavos between 0 and ${MAX_CENTAVOS}`,
        path: [field]
      })
    )

const ISS_DIVISOR = 100n * BigInt(RATE_SCALE)

/**
 * Derives base, ISS and total from the client's amounts. Re-checks its inputs so callers that
 * skipped schema decoding still cannot feed it floats or out-of-range values.
 */
export const computeAmounts = (input: {
  readonly services: number
  readonly deductions?: number | undefined
  readonly issRate: string
}): Result.Result<Amounts, InvalidAmounts> =>
  Result.gen(function*() {
    const services = yield* checkCentavos(input.services, "services")
    const deductions = yield* checkCentavos(input.deductions ?? 0, "deductions")
    const rate = yield* parseRate(input.issRate)
    if (deductions > services) {
      return yield* Result.fail(
        new InvalidAmounts({ message: "deductions must not exceed services", path: ["deductions"] })
      )
    }
    const base = services - deductions
    // base x rate reaches 1e13 x 1e6, past 2^53, hence BigInt; the quotient is <= base again.
    const issAmount = Number((BigInt(base) * BigInt(rate) + ISS_DIVISOR / 2n) / ISS_DIVISOR)
    return {
      services,
      deductions,
      base,
      iss_rate: formatRate(rate),
      iss_amount: issAmount,
      total: services
    }
  })
