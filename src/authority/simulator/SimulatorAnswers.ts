/**
 * What the built-in simulator answers besides an authorization: the magic values of test mode
 * (SPEC §7), matched as substrings of `document.notes` (like test card numbers), and its refusals.
 *
 * | notes contain            | effect                                                                |
 * |--------------------------|-----------------------------------------------------------------------|
 * | `simulate:reject`        | `AuthorityRejected` code `E0310` (service code not allowed in the municipality) |
 * | `simulate:unavailable`   | `AuthorityUnavailable` (503) for the first `unavailableTimes` submits of the id, then authorized |
 * | `simulate:timeout`       | authorized and recorded, but the caller gets `AuthorityTimeout` after `timeoutAfter`; later submits see the duplicate, lookups find it |
 * | `simulate:cancel-reject` | the cancellation is refused as past its deadline: `AuthorityRejected` code `E0822` (the national code); an analysis request (e101103) is then registered |
 * | `simulate:analysis-refuse` | the municipality refuses that analysis request (e105105); without it, it grants it (e105104) |
 *
 * Other refusals: cancelling an unknown submission id → `E1200`; cancelling with an access key that
 * is not the submission's → `E1201`. The codes follow the national system's `E` + 4 digits shape;
 * their meanings are the simulator's own, not quotations of the national rule book.
 */
import { AuthorityRejected } from "../TaxAuthority.js"

export const SimulatorCodes = {
  rejected: "E0310",
  cancellationRefused: "E0822",
  analysisRefused: "E105105",
  analysisGranted: "E105104",
  notFound: "E1200",
  accessKeyMismatch: "E1201"
} as const

/** The refusals, each with its code and message. */
export const SimulatorRefusals = {
  rejected: () =>
    new AuthorityRejected({
      code: SimulatorCodes.rejected,
      message: "The national service code is not allowed in the municipality of the service."
    }),
  cancellationRefused: () =>
    new AuthorityRejected({
      code: SimulatorCodes.cancellationRefused,
      message: "Cancellation refused: the deadline for the issuer's cancellation has passed; ask for the " +
        "municipality's analysis (e101103)."
    }),
  notFound: () =>
    new AuthorityRejected({
      code: SimulatorCodes.notFound,
      message: "No NFS-e was found for this submission (not found)."
    }),
  accessKeyMismatch: () =>
    new AuthorityRejected({
      code: SimulatorCodes.accessKeyMismatch,
      message: "The access key does not belong to this submission."
    })
}
