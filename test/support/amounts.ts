/** A document's amounts as the service computes them, for tests that need a plain note's. */
import * as Result from "effect/Result"
import type { Amounts } from "../../src/domain/Money.js"
import { computeTaxes } from "../../src/domain/TaxComputation.js"

/** A taxable note outside the Simples Nacional, nothing withheld: the plain note. */
export const plainAmounts = (services: number, issRate = "2.00", deductions = 0): Amounts =>
  Result.getOrThrow(computeTaxes({ services, deductions, issRate, issComputed: true, issWithheld: false }))
