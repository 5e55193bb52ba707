/**
 * The built-in tax-authority simulator (SPEC §7): the default adapter, so the service runs offline.
 *
 * It behaves like the remote national system. It authorizes a valid document with a 50-digit access
 * key and a protocol number (Authorization.ts), recognises a submission id it has seen before
 * (duplicate detection), answers lookups by submission id and registers cancellations. It keeps its
 * own durable records (SimulatorRepo.ts) per tenant, as the national system knows its callers by
 * their certificates, written in its own transactions: what the remote authority has recorded never
 * depends on whether the caller's transaction commits. On the embedded single-connection database
 * that is impossible while the caller holds a transaction, so there a call from inside one is a
 * defect (the issuance worker calls it outside any transaction).
 *
 * Magic values for test mode, matched as substrings of `document.notes` (like test card numbers),
 * make it refuse, fail or time out; they and its refusal codes are in SimulatorAnswers.ts.
 *
 * `failureRate` applies to every operation (submit, lookup, cancel): an outage of the real system
 * affects queries as much as submissions, and the caller must treat a failed lookup as transient.
 * Every submit call counts in `submit_attempts`, failed ones included (random failures too, so they
 * also use up the `simulate:unavailable` failures). `simulate:timeout` times out on the attempt
 * that authorizes the document; any later attempt finds the duplicate.
 */
import { Cause, Clock, Duration, Effect, Fiber, Option, Random, Result, Schema, type Scope } from "effect"
import { type SqlClient, SqlError } from "effect/sql"
import { dpsIdPattern } from "../sefin/DpsId.js"
import {
  AlreadyAuthorized,
  type AnalysisDecision,
  type AuthorityRecord,
  type AuthorityRejected,
  AuthorityTimeout,
  AuthorityUnavailable,
  type Authorization,
  type Cancellation,
  type CancellationRequest,
  type DanfseRequest,
  MagicValues,
  type Submission,
  type SubmissionRef,
  type TaxAuthority
} from "../TaxAuthority.js"
import { type AuthoritySystem, authorizationOf, authorize, protocolNumber } from "./Authorization.js"
import { SimulatorCodes, SimulatorRefusals } from "./SimulatorAnswers.js"
import { sentFields, type SimulatorRecord, SimulatorRepo, unseenRecord } from "./SimulatorRepo.js"

export interface SimulatorOptions {
  readonly system: AuthoritySystem
  /** Delay before the simulator handles a call (network and processing time). Default 0. */
  readonly latency?: Duration.Input | undefined
  /** Probability (0..1) that a call fails with a random 503. Default 0. */
  readonly failureRate?: number | undefined
  /** How long a `simulate:timeout` submission keeps the caller waiting. Default 30 s. */
  readonly timeoutAfter?: Duration.Input | undefined
  /** How many submits of a `simulate:unavailable` document fail before it is authorized. Default 2. */
  readonly unavailableTimes?: number | undefined
}

/** The record's last outcome while the municipality has an analysis request to decide. */
const ANALYSIS_REQUESTED = "analysis requested"

const NotesOnly = Schema.Struct({ notes: Schema.NullishOr(Schema.String) })
const notesOf = (document: unknown): string =>
  Option.match(Schema.decodeUnknownOption(NotesOnly)(document), {
    onNone: () => "",
    onSome: ({ notes }) => notes ?? ""
  })

/** A decision on one record: the record's next state (none: unchanged) and the caller's answer. */
type Decision<A, E> = readonly [next: Option.Option<SimulatorRecord>, answer: Result.Result<A, E>]

/** The repository makes a failed statement a defect; the simulator still answers it as a 500. */
const isStorageFailure = <E>(cause: Cause.Cause<E>): boolean =>
  cause.reasons.some((reason) => Cause.isDieReason(reason) && SqlError.isSqlError(reason.defect))

/**
 * The "remote" side of a call: once the request has reached the authority, the caller giving up
 * does not stop it (as with a real remote system), so it runs in a fiber of the simulator's scope.
 * A storage failure is the authority's internal error: a 500 to the caller.
 */
export const remoteSide = (scope: Scope.Scope) => <A, E>(effect: Effect.Effect<Result.Result<A, E>>) =>
  Effect.flatMap(Effect.forkIn(effect, scope), Fiber.join).pipe(
    Effect.catchCauseIf(isStorageFailure, (cause) =>
      Effect.andThen(
        Effect.logError("authority simulator: storage failure", cause),
        new AuthorityUnavailable({
          message: "The tax authority had an internal error; try again later.",
          status: 500
        })
      )),
    Effect.flatMap(Effect.fromResult)
  )

/**
 * A simulator for one system. Scoped: work it has accepted runs in fibers of this scope, so a
 * caller that gives up (timeout, interruption) does not undo what the "remote" side is doing.
 */
export const makeSimulator = (
  options: SimulatorOptions
): Effect.Effect<TaxAuthority, never, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function*() {
    const repo = yield* SimulatorRepo.make
    const scope = yield* Effect.scope
    const system = options.system
    const latency = Duration.fromInputUnsafe(options.latency ?? Duration.zero)
    const failureRate = Math.min(1, Math.max(0, options.failureRate ?? 0))
    const timeoutAfter = Duration.fromInputUnsafe(options.timeoutAfter ?? Duration.seconds(30))
    const unavailableTimes = Math.max(0, options.unavailableTimes ?? 2)

    const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))
    const travel = Duration.isGreaterThan(latency, Duration.zero) ? Effect.sleep(latency) : Effect.void
    const randomFailure = Effect.map(Random.next, (r) => r < failureRate)

    const keyOf = (ref: SubmissionRef) => ({ system, tenantId: ref.tenantId, submissionId: ref.submissionId })

    /**
     * Decides on a record with exclusive access to it (`locked` holds its row lock, which
     * serializes concurrent calls for one id, across processes too) and stores the outcome.
     */
    const withRecord = <Locked, A, E>(
      locked: Effect.Effect<Locked>,
      decide: (current: Locked) => Effect.Effect<Decision<A, E>>
    ): Effect.Effect<Result.Result<A, E>> =>
      repo.inOwnTransaction(Effect.gen(function*() {
        const [next, answer] = yield* Effect.flatMap(locked, decide)
        if (Option.isSome(next)) yield* repo.save(next.value)
        return answer
      }))

    const handle = remoteSide(scope)

    const unavailable = (message: string) => new AuthorityUnavailable({ message, status: 503 })

    type SubmitSuccess = { readonly authorization: Authorization; readonly timesOut: boolean }
    type SubmitFailure = AuthorityRejected | AlreadyAuthorized | AuthorityUnavailable
    // Every submit changes the record: at least its attempt counter.
    const submitted = (
      record: SimulatorRecord,
      answer: Result.Result<SubmitSuccess, SubmitFailure>
    ): Decision<SubmitSuccess, SubmitFailure> => [Option.some(record), answer]

    /** What a submit of `submission` does to its id's record as it is (`previous`), at `at`. */
    const decideSubmit = (submission: Submission, previous: SimulatorRecord, nfseNumber: number, at: Date) =>
      Effect.gen(function*() {
        const received: SimulatorRecord = { ...previous, submitAttempts: previous.submitAttempts + 1, updatedAt: at }
        if (yield* randomFailure) {
          return submitted(
            { ...received, lastOutcome: "unavailable (random failure)" },
            Result.fail(unavailable("The tax authority is temporarily unavailable."))
          )
        }
        const existing = authorizationOf(system, previous)
        if (previous.status !== "received" && Option.isSome(existing)) {
          return submitted(
            { ...received, lastOutcome: "duplicate" },
            Result.fail(new AlreadyAuthorized(existing.value))
          )
        }
        const document = sentFields(submission.document)
        const withDocument: SimulatorRecord = { ...received, document }
        const notes = document.notes ?? ""
        if (notes.includes(MagicValues.reject)) {
          return submitted(
            { ...withDocument, lastOutcome: `rejected ${SimulatorCodes.rejected}` },
            Result.fail(SimulatorRefusals.rejected())
          )
        }
        if (notes.includes(MagicValues.unavailable) && received.submitAttempts <= unavailableTimes) {
          return submitted(
            { ...withDocument, lastOutcome: "unavailable (simulate:unavailable)" },
            Result.fail(unavailable("The tax authority is temporarily unavailable (503)."))
          )
        }
        const timesOut = notes.includes(MagicValues.timeout)
        const issued = yield* authorize(system, document, at, nfseNumber)
        const record: SimulatorRecord = {
          ...withDocument,
          status: "authorized",
          nfseNumber: issued.nfseNumber,
          accessKey: issued.accessKey,
          protocol: issued.protocol,
          authorizedAt: at,
          lastOutcome: timesOut ? "authorized (simulate:timeout)" : "authorized"
        }
        // Just set above, so always Some.
        const authorization = Option.getOrThrow(authorizationOf(system, record))
        return submitted(record, Result.succeed({ authorization, timesOut }))
      })

    /**
     * A submit, decided as the id's first and stored by one insert if the id has no record (two
     * statements, against four under the lock); else decided again under the record's lock, the
     * number drawn for the first try left a gap.
     */
    const submitOnce = (submission: Submission) =>
      Effect.gen(function*() {
        const at = yield* now
        const nfseNumber = yield* repo.drawNumber
        const [first, firstAnswer] = yield* decideSubmit(
          submission,
          unseenRecord(keyOf(submission), at),
          nfseNumber,
          at
        )
        if (Option.isSome(first) && (yield* repo.createIfAbsent(first.value))) return firstAnswer
        return yield* withRecord(
          Effect.flatMap(now, (lockedAt) => repo.lockOrCreate(keyOf(submission), lockedAt)),
          ({ nextNfseNumber, record }) =>
            Effect.flatMap(now, (decidedAt) => decideSubmit(submission, record, nextNfseNumber, decidedAt))
        )
      })

    const submit = Effect.fn("TaxAuthoritySimulator.submit")(function*(submission: Submission) {
      yield* Effect.annotateCurrentSpan({
        "authority.system": system,
        "authority.submission_id": submission.submissionId
      })
      yield* travel
      const answer = yield* handle(submitOnce(submission))
      if (answer.timesOut) {
        // The authority has the NFS-e; only the answer is lost on the way back.
        yield* Effect.sleep(timeoutAfter)
        return yield* new AuthorityTimeout({
          message: `The tax authority did not answer within ${Duration.format(timeoutAfter)}.`
        })
      }
      return answer.authorization
    })

    const lookup = Effect.fn("TaxAuthoritySimulator.lookup")(function*(ref: SubmissionRef) {
      yield* Effect.annotateCurrentSpan({ "authority.system": system, "authority.submission_id": ref.submissionId })
      yield* travel
      return yield* handle(withRecord(
        repo.lock(keyOf(ref)),
        (current) =>
          Effect.gen(function*() {
            const failed = yield* randomFailure
            const at = yield* now
            const next = Option.map(current, (record): SimulatorRecord => ({
              ...record,
              lookups: record.lookups + 1,
              updatedAt: at
            }))
            if (failed) {
              return [next, Result.fail(unavailable("The tax authority is temporarily unavailable."))] as const
            }
            const found = Option.flatMap(current, (record): Option.Option<AuthorityRecord> =>
              record.status === "received"
                ? Option.none()
                : Option.map(authorizationOf(system, record), (authorization) => ({
                  status: record.status === "cancelled" ? "cancelled" : "authorized",
                  authorization,
                  cancelledAt: record.cancelledAt
                })))
            return [next, Result.succeed(found)] as const
          })
      ))
    })

    const cancel = Effect.fn("TaxAuthoritySimulator.cancel")(function*(request: CancellationRequest) {
      yield* Effect.annotateCurrentSpan({
        "authority.system": system,
        "authority.submission_id": request.submissionId
      })
      yield* travel
      return yield* handle(withRecord(
        repo.lock(keyOf(request)),
        (current): Effect.Effect<Decision<Cancellation, AuthorityRejected | AuthorityUnavailable>> =>
          Effect.gen(function*() {
            const unchanged = Option.none<SimulatorRecord>()
            if (yield* randomFailure) {
              return [unchanged, Result.fail(unavailable("The tax authority is temporarily unavailable."))] as const
            }
            if (Option.isNone(current) || current.value.status === "received") {
              return [unchanged, Result.fail(SimulatorRefusals.notFound())] as const
            }
            const record = current.value
            if (record.accessKey !== request.accessKey) {
              return [unchanged, Result.fail(SimulatorRefusals.accessKeyMismatch())] as const
            }
            if (record.status === "cancelled" && record.cancelProtocol !== null && record.cancelledAt !== null) {
              // Idempotent: the cancellation already registered is the answer.
              return [
                unchanged,
                Result.succeed({
                  protocol: record.cancelProtocol,
                  status: "cancelled" as const,
                  cancelledAt: record.cancelledAt
                })
              ] as const
            }
            const at = yield* now
            if (request.analysis === true) {
              // The municipality decides later: `analysisDecision` finds its answer.
              const protocol = yield* protocolNumber(system, at)
              return [
                Option.some<SimulatorRecord>({
                  ...record,
                  cancelProtocol: protocol,
                  cancelReasonCode: request.reasonCode,
                  cancelReason: request.reason,
                  lastOutcome: ANALYSIS_REQUESTED,
                  updatedAt: at
                }),
                Result.succeed({ protocol, status: "in_analysis" as const, cancelledAt: at })
              ] as const
            }
            if (notesOf(record.document).includes(MagicValues.cancelReject)) {
              return [
                Option.some({
                  ...record,
                  lastOutcome: `cancellation refused ${SimulatorCodes.cancellationRefused}`,
                  updatedAt: at
                }),
                Result.fail(SimulatorRefusals.cancellationRefused())
              ] as const
            }
            const protocol = yield* protocolNumber(system, at)
            return [
              Option.some<SimulatorRecord>({
                ...record,
                status: "cancelled",
                cancelledAt: at,
                cancelProtocol: protocol,
                cancelReasonCode: request.reasonCode,
                cancelReason: request.reason,
                lastOutcome: "cancelled",
                updatedAt: at
              }),
              Result.succeed({ protocol, status: "cancelled" as const, cancelledAt: at })
            ] as const
          })
      ))
    })

    /** The municipality decides an analysis request when first asked: granted, unless `simulate:analysis-refuse`. */
    const analysisDecision = Effect.fn("TaxAuthoritySimulator.analysisDecision")(function*(ref: SubmissionRef) {
      yield* travel
      return yield* handle(withRecord(
        repo.lock(keyOf(ref)),
        (current): Effect.Effect<Decision<Option.Option<AnalysisDecision>, never>> =>
          Effect.gen(function*() {
            if (Option.isNone(current) || current.value.lastOutcome !== ANALYSIS_REQUESTED) {
              return [Option.none(), Result.succeed(Option.none())] as const
            }
            const record = current.value
            const at = yield* now
            const granted = !notesOf(record.document).includes(MagicValues.analysisRefuse)
            const decision: AnalysisDecision = {
              granted,
              decidedAt: at,
              code: granted ? SimulatorCodes.analysisGranted : SimulatorCodes.analysisRefused,
              message: granted
                ? "Cancelamento de NFS-e Deferido por Análise Fiscal"
                : "Cancelamento de NFS-e Indeferido por Análise Fiscal"
            }
            const next: SimulatorRecord = granted
              ? { ...record, status: "cancelled", cancelledAt: at, lastOutcome: "cancelled (analysis)", updatedAt: at }
              : { ...record, lastOutcome: "analysis refused", updatedAt: at }
            return [Option.some(next), Result.succeed(Option.some(decision))] as const
          })
      ))
    })

    /**
     * The simulator's DANFSe: rendered from the note's XML, as the service renders it in every mode.
     * The renderer (pdfkit, its fonts, the QR encoder: ~60 MiB) is loaded by the first PDF asked for.
     */
    const danfse = Effect.fn("TaxAuthoritySimulator.danfse")(function*(request: DanfseRequest) {
      const { renderNfseXml } = yield* Effect.promise(() => import("../danfse/Danfse.js"))
      return yield* Effect.promise(() =>
        renderNfseXml(request.nfseXml, { cancelled: request.cancelled, substituted: request.substituted })
      )
    })

    return {
      system,
      submissionIdOf: dpsIdPattern,
      // It stands for an authority that needs no certificate and takes whatever the API accepted.
      requirementsFor: () => Effect.void,
      cancellationRequirementsFor: () => Effect.void,
      submit,
      lookup,
      cancel,
      danfse,
      analysisDecision
    } satisfies TaxAuthority
  })
