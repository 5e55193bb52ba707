/**
 * An in-memory tax authority for pipeline tests. It remembers what it authorized (so lookups and
 * duplicate detection behave like the real thing) and lets a test script each call's outcome.
 */
import { Clock, Effect, Option } from "effect"
import {
  AlreadyAuthorized,
  type AuthorityRecord,
  type AuthorityRejected,
  type Authorization,
  type CancellationRequest,
  type RequestNotSent,
  type Submission,
  type TaxAuthority,
  type TransientAuthorityError
} from "../../src/authority/TaxAuthority.js"

export interface Call {
  readonly op: "submit" | "lookup" | "cancel"
  readonly submissionId: string
}

export type SubmitScript = (
  submission: Submission,
  attempt: number,
  authorize: Effect.Effect<Authorization>
) => Effect.Effect<Authorization, AuthorityRejected | AlreadyAuthorized | RequestNotSent | TransientAuthorityError>

export type CancelScript = (
  request: CancellationRequest,
  attempt: number
) => Effect.Effect<{ protocol: string; cancelledAt: Date }, AuthorityRejected | TransientAuthorityError> | undefined

export const makeScriptedAuthority = (
  system: "production" | "homologation",
  script: { submit?: SubmitScript; cancel?: CancelScript } = {}
) => {
  const records = new Map<string, AuthorityRecord>()
  const calls: Array<Call> = []
  const attempts = new Map<string, number>()
  let sequence = 0

  const count = (op: Call["op"], submissionId: string) => {
    calls.push({ op, submissionId })
    const key = `${op}:${submissionId}`
    const attempt = (attempts.get(key) ?? 0) + 1
    attempts.set(key, attempt)
    return attempt
  }

  const authorizeNow = (submissionId: string) =>
    Effect.map(Clock.currentTimeMillis, (millis) => {
      const existing = records.get(submissionId)
      if (existing) return existing.authorization
      sequence += 1
      const accessKey = String(sequence).padStart(50, "3")
      const authorization: Authorization = {
        accessKey,
        protocol: `P${sequence}`,
        authorizedAt: new Date(millis),
        nfseNumber: String(sequence),
        nfseXml: `<NFSe xmlns="http://www.sped.fazenda.gov.br/nfse"><infNFSe Id="NFS${accessKey}"/></NFSe>`
      }
      records.set(submissionId, { status: "authorized", authorization, cancelledAt: null })
      return authorization
    })

  const authority: TaxAuthority = {
    system,
    submissionIdOf: scriptedSubmissionIds,
    requirementsFor: () => Effect.void,
    cancellationRequirementsFor: () => Effect.void,
    danfse: () => Effect.succeed(new TextEncoder().encode("%PDF-1.7 scripted")),
    analysisDecision: () => Effect.succeedNone,
    submit: (submission) =>
      Effect.suspend(() => {
        const attempt = count("submit", submission.submissionId)
        const existing = records.get(submission.submissionId)
        if (existing) return Effect.fail(new AlreadyAuthorized(existing.authorization))
        const authorize = authorizeNow(submission.submissionId)
        return script.submit ? script.submit(submission, attempt, authorize) : authorize
      }),
    // Keyed by submission id alone: every tenant of these tests has a tax id of its own.
    lookup: ({ submissionId }) =>
      Effect.sync(() => {
        count("lookup", submissionId)
        return Option.fromNullishOr(records.get(submissionId))
      }),
    cancel: (request) =>
      Effect.suspend(() => {
        const attempt = count("cancel", request.submissionId)
        const scripted = script.cancel?.(request, attempt)
        const outcome = (scripted === undefined
          ? undefined
          : Effect.map(scripted, (c) => ({ ...c, status: "cancelled" as const }))) ??
          Effect.map(
            Clock.currentTimeMillis,
            (millis) => ({ protocol: "C1", status: "cancelled" as const, cancelledAt: new Date(millis) })
          )
        return Effect.tap(outcome, (cancellation) =>
          Effect.sync(() => {
            const record = records.get(request.submissionId)
            if (record) {
              records.set(request.submissionId, {
                ...record,
                status: "cancelled",
                cancelledAt: cancellation.cancelledAt
              })
            }
          }))
      })
  }

  const submissionsOf = (submissionId: string) =>
    calls.filter((c) => c.op === "submit" && c.submissionId === submissionId).length
  const authorizedCount = () => records.size

  return { authority, calls, records, submissionsOf, authorizedCount }
}

/** Submission ids of a scripted authority: one per issuer, place and series, completed by the number. */
export const scriptedSubmissionIds: TaxAuthority["submissionIdOf"] = (document) => ({
  prefix: `SUB-${document.issuer.taxId}-${document.service.municipality_code}-${document.series}-`,
  width: 15
})
