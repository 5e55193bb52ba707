/**
 * Number voiding (inutilização) in the goods simulator, as a SEFAZ takes it: the request built and
 * checked as the SEFAZ adapter sends it; `simulate:reject` in the reason has it refused (999). The
 * service checks first that no document of its own holds a number of the range.
 */
import { Effect, type Effect as E, Result } from "effect"
import type { GoodsAuthority } from "../GoodsAuthority.js"
import { loadVoidingSchemas, validateVoiding, voidingInputOf, voidingRequest } from "../sefaz/NfeVoiding.js"
import { AuthorityRejected, type AuthorityUnavailable, MagicValues, RequestNotSent } from "../TaxAuthority.js"
import { signEnveloped } from "../xml/XmlSignature.js"
import { simulatorSigner } from "./SimulatorSigner.js"

/** What the voiding shares with the rest of the goods simulator. */
export interface SimulatedVoidingParts {
  readonly system: GoodsAuthority["system"]
  readonly travel: E.Effect<void>
  readonly randomFailure: E.Effect<boolean>
  readonly unavailable: (message: string) => AuthorityUnavailable
  readonly now: E.Effect<Date>
  readonly protocolFor: (stateCode: string, at: Date) => E.Effect<string>
}

export const simulatedVoiding = (parts: SimulatedVoidingParts): GoodsAuthority["voidNumbers"] =>
  Effect.fn("GoodsSimulator.voidNumbers")(function*(request) {
    yield* Effect.annotateCurrentSpan({ "authority.system": parts.system, "voiding.id": request.voidingId })
    yield* Effect.promise(loadVoidingSchemas)
    yield* parts.travel
    if (yield* parts.randomFailure) return yield* parts.unavailable("The tax authority is temporarily unavailable.")
    if (request.reason.includes(MagicValues.reject)) {
      return yield* new AuthorityRejected({ code: "999", message: "Rejeição: Erro não catalogado (simulate:reject)" })
    }
    const signed = signEnveloped(voidingRequest(voidingInputOf(request)), { element: "infInut", ...simulatorSigner() })
    const valid = validateVoiding("inutNFe", signed)
    if (Result.isFailure(valid)) {
      return yield* new RequestNotSent({ code: "note_not_valid", message: valid.failure.messages.join("; ") })
    }
    const at = yield* parts.now
    return {
      protocol: yield* parts.protocolFor(request.issuer.address.municipality_code.slice(0, 2), at),
      registeredAt: at
    }
  })
