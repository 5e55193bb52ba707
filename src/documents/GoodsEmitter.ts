/**
 * The emitter's side of a goods invoice: the tenant's registration must give the legal name, the
 * state registration (IE), the tax regime (CRT) and the address, each within the NF-e's lengths and
 * in Latin-1; what is missing or unwritable is `422 registration_incomplete`, naming the field.
 */
import * as Result from "effect/Result"
import { RegistrationIncomplete } from "../domain/Errors.js"
import type { GoodsIssuer } from "../domain/GoodsInvoice.js"
import { addressProblem, type Registration } from "../domain/Registration.js"
import { latin1Refusals, MAX_ISSUES, type Refusal } from "./GoodsRules.js"

const REQUIRED_ADDRESS = ["street", "number", "district", "municipality_code", "state", "postal_code"] as const

/**
 * The emitter of a goods invoice, from the tenant's registration, or the 422 naming what it lacks
 * or what the NF-e cannot carry.
 */
export const goodsIssuerOf = (
  taxId: string,
  registration: Registration
): Result.Result<GoodsIssuer, RegistrationIncomplete> => {
  const refusals: Array<Refusal> = []
  const lacks = (field: string) =>
    refusals.push({ path: ["registration", field], message: `a goods invoice needs registration.${field}` })
  const { address, crt, legal_name, phone, state_registration, trade_name } = registration
  if (legal_name === null) lacks("legal_name")
  else if (legal_name.length < 2 || legal_name.length > 60) {
    refusals.push({ path: ["registration", "legal_name"], message: "must have 2 to 60 characters on an NF-e (xNome)" })
  }
  if (trade_name !== null && trade_name.length > 60) {
    refusals.push({ path: ["registration", "trade_name"], message: "must have at most 60 characters on an NF-e" })
  }
  if (state_registration === null) lacks("state_registration")
  else if (!/^(?:[0-9]{2,14}|ISENTO)$/u.test(state_registration)) {
    refusals.push({
      path: ["registration", "state_registration"],
      message: "must be the state registration's 2 to 14 digits (no punctuation), or ISENTO"
    })
  }
  if (crt === null) lacks("crt")
  if (address === null) {
    for (const field of REQUIRED_ADDRESS) {
      refusals.push({
        path: ["registration", "address", field],
        message: `a goods invoice needs the address's ${field}`
      })
    }
  } else {
    for (const field of ["street", "number", "complement"] as const) {
      if ((address[field]?.length ?? 0) > 60) {
        refusals.push({
          path: ["registration", "address", field],
          message: "must have at most 60 characters on an NF-e"
        })
      }
    }
    const problem = addressProblem(address)
    if (problem !== undefined) {
      refusals.push({ path: ["registration", "address", problem.field], message: problem.message })
    }
  }
  if (phone !== null && phone.length > 14) {
    refusals.push({ path: ["registration", "phone"], message: "must have at most 14 digits on an NF-e" })
  }
  refusals.push(...latin1Refusals(registration, ["registration"]))
  if (refusals.length > 0 || legal_name === null || state_registration === null || crt === null || address === null) {
    return Result.fail(
      new RegistrationIncomplete({
        message: `The tenant's registration cannot issue a goods invoice: ${refusals[0]!.path.join(".")} ${
          refusals[0]!.message
        }.`,
        issues: refusals.slice(0, MAX_ISSUES).map(({ message, path }) => ({ path: [...path], message }))
      })
    )
  }
  return Result.succeed({
    taxId,
    legalName: legal_name,
    tradeName: trade_name,
    stateRegistration: state_registration,
    crt,
    address,
    phone
  })
}
