/**
 * The built-in tax-authority simulator (SPEC §7): the default adapter, so the service runs offline.
 *
 * It behaves like the remote national system. It authorizes a valid document with a 50-digit
 * access key and a protocol number, recognises a submission id it has seen before (duplicate
 * detection), answers lookups by submission id and registers cancellations. It keeps its own
 * durable records in `authority_sim_records`, written in its own transactions: what the remote
 * authority has recorded never depends on whether the caller's transaction commits.
 *
 * Magic values for test mode, matched as substrings of `document.notes` (like test card numbers):
 *
 * | notes contain            | effect                                                                |
 * |--------------------------|-----------------------------------------------------------------------|
 * | `simulate:reject`        | `AuthorityRejected` code `E0310` (service code not allowed in the municipality) |
 * | `simulate:unavailable`   | `AuthorityUnavailable` (503) for the first `unavailableTimes` submits of the id, then authorized |
 * | `simulate:timeout`       | authorized and recorded, but the caller gets `AuthorityTimeout` after `timeoutAfter`; later submits see the duplicate, lookups find it |
 * | `simulate:cancel-reject` | the cancellation is refused: `AuthorityRejected` code `E1235`          |
 *
 * Other refusals: cancelling an unknown submission id → `E1200`; cancelling with an access key that
 * is not the submission's → `E1201`. The codes follow the national system's `E` + 4 digits shape;
 * their meanings are the simulator's own, not quotations of the national rule book.
 *
 * `failureRate` applies to every operation (submit, lookup, cancel): an outage of the real system
 * affects queries as much as submissions, and the caller must treat a failed lookup as transient.
 * Every submit call counts in `submit_attempts`, failed ones included (random failures too, so they
 * also use up the `simulate:unavailable` failures). `simulate:timeout` times out on the attempt
 * that authorizes the document; any later attempt finds the duplicate.
 *
 * Its own transactions: the simulator never writes inside a transaction the caller has open. On
 * PostgreSQL it drops the ambient transaction from the Context and works on another connection of
 * the pool (a caller in a transaction therefore holds two connections for the call). On the
 * embedded single-connection database that is impossible while the caller's transaction is open;
 * see `SingleConnectionState` for what it does instead.
 */
import {
  Clock,
  Context,
  Duration,
  Effect,
  Fiber,
  Option,
  Random,
  Result,
  Schema,
  type Scope,
  Semaphore
} from "effect"
import { SqlClient, type SqlError as SqlErrors } from "effect/sql"
import { normalizeTaxId } from "../domain/TaxId.js"
import {
  AlreadyAuthorized,
  type Authorization,
  type AuthorityRecord,
  AuthorityRejected,
  AuthorityTimeout,
  AuthorityUnavailable,
  type Cancellation,
  type CancellationRequest,
  type Submission,
  type SubmissionDocument,
  type TaxAuthority
} from "./TaxAuthority.js"

export type AuthoritySystem = "production" | "homologation"

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

export const MagicValues = {
  reject: "simulate:reject",
  unavailable: "simulate:unavailable",
  timeout: "simulate:timeout",
  cancelReject: "simulate:cancel-reject"
} as const

export const SimulatorCodes = {
  rejected: "E0310",
  cancellationRefused: "E1235",
  notFound: "E1200",
  accessKeyMismatch: "E1201"
} as const

/** tpAmb of the national system. */
const environmentCodeOf = (system: AuthoritySystem): 1 | 2 => (system === "production" ? 1 : 2)

// ---------------------------------------------------------------------------------------------
// Access keys and protocol numbers
// ---------------------------------------------------------------------------------------------

/** Mod-11 check digit of the access key: weights 2..9 from the right, remainders 0 and 1 give 0. */
export const accessKeyCheckDigit = (digits: string): number => {
  let sum = 0
  let weight = 2
  for (let i = digits.length - 1; i >= 0; i--) {
    sum += (digits.charCodeAt(i) - 48) * weight
    weight = weight === 9 ? 2 : weight + 1
  }
  const remainder = sum % 11
  return remainder < 2 ? 0 : 11 - remainder
}

/**
 * The issuer's registration as the 14 digits of the key. Alphanumeric CNPJs (from July 2026) keep
 * the key numeric: each character is valued `charCode - 48` (as in their check digits) and only the
 * last decimal digit is kept, so digits stay themselves and letters map deterministically
 * (A→7, B→8, …). Lossy, but the key only has to be unique and numeric; the real id travels with the
 * document. A CPF is left-padded with zeros, as the national layout does.
 */
const registrationDigits = (taxId: string): string =>
  Array.from(normalizeTaxId(taxId), (c) => String((c.charCodeAt(0) - 48) % 10)).join("").padStart(14, "0").slice(-14)

const digitsOnly = (s: string) => s.replace(/[^0-9]/g, "")

export interface AccessKeyParts {
  readonly municipalityCode: string
  readonly issuerTaxId: string
  readonly nfseNumber: number
  /** Year and month of issue, "AAMM". */
  readonly yearMonth: string
  /** The 9 random digits (código numérico). */
  readonly randomCode: string
}

/**
 * The national NFS-e access key, 50 digits: cMun (7) + ambiente gerador (1; 2 = the national system,
 * which is what the simulator stands for) + registration type (1 CPF, 2 CNPJ) + registration (14) +
 * NFS-e number (13) + AAMM (4) + random code (9) + check digit (1). The production/homologation
 * distinction (tpAmb) is not part of the key, as in the national layout.
 */
export const buildAccessKey = (parts: AccessKeyParts): string => {
  const normalizedTaxId = normalizeTaxId(parts.issuerTaxId)
  const body = digitsOnly(parts.municipalityCode).padStart(7, "0").slice(-7) +
    "2" +
    (normalizedTaxId.length === 11 ? "1" : "2") +
    registrationDigits(normalizedTaxId) +
    String(parts.nfseNumber).padStart(13, "0").slice(-13) +
    parts.yearMonth +
    parts.randomCode
  const key = body + String(accessKeyCheckDigit(body))
  if (!/^[0-9]{50}$/.test(key)) {
    // Every part above is fixed-width, so this only fires on a programming error.
    throw new Error(`access key of ${key.length} characters, expected 50 digits`)
  }
  return key
}

const randomDigits = (count: number) =>
  Effect.map(
    Effect.all(Array.from({ length: count }, () => Random.nextIntBetween(0, 10, { halfOpen: true }))),
    (digits) => digits.join("")
  )

/** "AAMM" of the issue date (YYYY-MM-DD), falling back to the authorization time. */
const yearMonthOf = (issueDate: string, fallback: Date): string => {
  const match = /^\d{2}(\d{2})-(\d{2})/.exec(issueDate)
  return match ? `${match[1]}${match[2]}` : fallback.toISOString().slice(2, 7).replace("-", "")
}

/** 15 digits like the national protocols: tpAmb + YYMMDD of processing + 8 random digits. */
const protocolNumber = (system: AuthoritySystem, at: Date) =>
  Effect.map(
    randomDigits(8),
    (random) => `${environmentCodeOf(system)}${at.toISOString().slice(2, 10).replace(/-/g, "")}${random}`
  )

// ---------------------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------------------

const SimRecord = Schema.Struct({
  system: Schema.Literals(["production", "homologation"]),
  submissionId: Schema.String,
  status: Schema.Literals(["received", "authorized", "cancelled"]),
  submitAttempts: Schema.Number,
  lookups: Schema.Number,
  lastOutcome: Schema.NullOr(Schema.String),
  document: Schema.Unknown,
  nfseNumber: Schema.NullOr(Schema.Number),
  accessKey: Schema.NullOr(Schema.String),
  protocol: Schema.NullOr(Schema.String),
  authorizedAt: Schema.NullOr(Schema.Date),
  cancelledAt: Schema.NullOr(Schema.Date),
  cancelProtocol: Schema.NullOr(Schema.String),
  cancelReasonCode: Schema.NullOr(Schema.String),
  cancelReason: Schema.NullOr(Schema.String),
  receivedAt: Schema.Date,
  updatedAt: Schema.Date
})
/** One row of `authority_sim_records` (camelCase, as the SQL client maps result names). */
export type SimRecord = typeof SimRecord.Type

const decodeRecords = Schema.decodeUnknownEffect(Schema.Array(SimRecord))

const authorizationOf = (record: SimRecord): Option.Option<Authorization> =>
  record.accessKey !== null && record.protocol !== null && record.authorizedAt !== null
    ? Option.some({ accessKey: record.accessKey, protocol: record.protocol, authorizedAt: record.authorizedAt })
    : Option.none()

const NotesOnly = Schema.Struct({ notes: Schema.NullishOr(Schema.String) })
const notesOf = (document: unknown): string =>
  Option.match(Schema.decodeUnknownOption(NotesOnly)(document), {
    onNone: () => "",
    onSome: ({ notes }) => notes ?? ""
  })

/** A decision on one record: the record's next state (none: unchanged) and the caller's answer. */
type Decision<A, E> = readonly [next: Option.Option<SimRecord>, answer: Result.Result<A, E>]

// ---------------------------------------------------------------------------------------------
// Isolation from the caller's transaction
// ---------------------------------------------------------------------------------------------

/**
 * Runs `effect` as if no transaction were open: the SQL client finds the current transaction's
 * connection in the Context under its `transactionService`, so without it the statements acquire a
 * connection (and a transaction) of their own.
 */
const outsideTransaction = (sql: SqlClient.SqlClient) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.updateContext(
    effect,
    // `omit` narrows the type to "R without TransactionConnection", which R never names (the tag is
    // optional context): the cast only restores the type parameter.
    (context: Context.Context<R>) => Context.omit(sql.transactionService)(context) as Context.Context<R>
  )

/**
 * State shared by every simulator on one single-connection (embedded) database.
 *
 * PGlite has one connection, guarded by a one-permit semaphore that a transaction holds from BEGIN
 * to COMMIT (src/db/PgliteClient.ts). Called from inside a caller's transaction there, the simulator
 * cannot get a transaction of its own: keeping the ambient connection would join the caller's
 * transaction (its records would vanish on the caller's rollback), and stripping it would wait for
 * the permit the caller itself holds until the caller finishes — a deadlock. So in that one case the
 * simulator decides on the caller's connection (reads only, plus `nextval`, which no rollback
 * undoes), keeps the new state of the record in `pending`, and writes it from a forked fiber in its
 * own transaction as soon as the caller's transaction has ended, commit or rollback. Every later
 * operation reads `pending` before the table, so the answers stay consistent meanwhile.
 *
 * `lock` serializes the simulator's decisions that cannot rely on the database for it: concurrent
 * calls inside the same caller transaction, and the deferred writes. It is always taken after the
 * connection permit (never while waiting for it with the lock held), so the two cannot deadlock.
 */
interface SingleConnectionState {
  readonly lock: Semaphore.Semaphore
  readonly pending: Map<string, SimRecord>
}

type IsolationMode =
  | { readonly _tag: "Pooled" }
  | { readonly _tag: "SingleConnection"; readonly state: SingleConnectionState }

// Keyed by client: the pending records belong to the database behind it, not to one simulator.
const singleConnectionStates = new WeakMap<SqlClient.SqlClient, SingleConnectionState>()

const isolationModeOf = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const known = singleConnectionStates.get(sql)
    if (known !== undefined) return { _tag: "SingleConnection", state: known } satisfies IsolationMode
    // The engine says whether this is the embedded, single-connection database.
    const rows = yield* sql<{ readonly version: string }>`SELECT version() AS version`
    if (!(rows[0]?.version ?? "").includes("PGlite")) return { _tag: "Pooled" } satisfies IsolationMode
    const state: SingleConnectionState = singleConnectionStates.get(sql) ??
      { lock: yield* Semaphore.make(1), pending: new Map() }
    singleConnectionStates.set(sql, state)
    return { _tag: "SingleConnection", state } satisfies IsolationMode
  })

// ---------------------------------------------------------------------------------------------
// The simulator
// ---------------------------------------------------------------------------------------------

/**
 * A simulator for one system. Scoped: work it has accepted runs in fibers of this scope, so a
 * caller that gives up (timeout, interruption) does not undo what the "remote" side is doing.
 */
export const makeSimulator = (
  options: SimulatorOptions
): Effect.Effect<TaxAuthority, SqlErrors.SqlError, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const scope = yield* Effect.scope
    const mode = yield* isolationModeOf(sql)
    const system = options.system
    const latency = Duration.fromInputUnsafe(options.latency ?? Duration.zero)
    const failureRate = Math.min(1, Math.max(0, options.failureRate ?? 0))
    const timeoutAfter = Duration.fromInputUnsafe(options.timeoutAfter ?? Duration.seconds(30))
    const unavailableTimes = Math.max(0, options.unavailableTimes ?? 2)

    const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))
    const travel = Duration.isGreaterThan(latency, Duration.zero) ? Effect.sleep(latency) : Effect.void
    const randomFailure = Effect.map(Random.next, (r) => r < failureRate)

    const select = (submissionId: string, forUpdate: boolean) =>
      Effect.flatMap(
        forUpdate
          ? sql`SELECT * FROM authority_sim_records
                WHERE system = ${system} AND submission_id = ${submissionId} FOR UPDATE`
          : sql`SELECT * FROM authority_sim_records WHERE system = ${system} AND submission_id = ${submissionId}`,
        // A row that does not decode means the table was changed behind the simulator's back.
        (rows) => Effect.map(Effect.orDie(decodeRecords(rows)), (records) => Option.fromNullishOr(records[0]))
      )

    const write = (record: SimRecord) =>
      sql`
        INSERT INTO authority_sim_records ${
        sql.insert({
          ...record,
          // Both drivers infer jsonb for the column from this text.
          document: record.document === null ? null : JSON.stringify(record.document)
        })
      }
        ON CONFLICT (system, submission_id) DO UPDATE SET
          status = EXCLUDED.status,
          submit_attempts = EXCLUDED.submit_attempts,
          lookups = EXCLUDED.lookups,
          last_outcome = EXCLUDED.last_outcome,
          document = EXCLUDED.document,
          nfse_number = EXCLUDED.nfse_number,
          access_key = EXCLUDED.access_key,
          protocol = EXCLUDED.protocol,
          authorized_at = EXCLUDED.authorized_at,
          cancelled_at = EXCLUDED.cancelled_at,
          cancel_protocol = EXCLUDED.cancel_protocol,
          cancel_reason_code = EXCLUDED.cancel_reason_code,
          cancel_reason = EXCLUDED.cancel_reason,
          updated_at = EXCLUDED.updated_at`

    const pendingKey = (submissionId: string) => `${system}\u0000${submissionId}`

    /**
     * Decides on the record of `submissionId` with exclusive access to it and stores the outcome
     * durably, independently of any transaction the caller may have open.
     */
    const withRecord = <A, E>(
      submissionId: string,
      options: { readonly createIfMissing: boolean },
      decide: (current: Option.Option<SimRecord>) => Effect.Effect<Decision<A, E>, SqlErrors.SqlError>
    ): Effect.Effect<Result.Result<A, E>, SqlErrors.SqlError> => {
      if (mode._tag === "Pooled") {
        // Another connection of the pool, in a transaction of its own. The row lock serializes
        // concurrent calls for one id, across processes too.
        const ownTransaction = Effect.gen(function*() {
          if (options.createIfMissing) {
            const at = yield* now
            // Makes sure there is a row to lock; a concurrent first submit waits here for ours.
            yield* sql`
              INSERT INTO authority_sim_records (system, submission_id, status, received_at, updated_at)
              VALUES (${system}, ${submissionId}, 'received', ${at}, ${at})
              ON CONFLICT (system, submission_id) DO NOTHING`
          }
          const [next, answer] = yield* Effect.flatMap(select(submissionId, true), decide)
          if (Option.isSome(next)) yield* write(next.value)
          return answer
        })
        return ownTransaction.pipe(sql.withTransaction, outsideTransaction(sql))
      }

      const { lock, pending } = mode.state
      const key = pendingKey(submissionId)
      const current = Effect.suspend(() => {
        const record = pending.get(key)
        return record !== undefined ? Effect.succeed(Option.some(record)) : select(submissionId, false)
      })

      return Effect.flatMap(Effect.serviceOption(sql.transactionService), (ambient) => {
        if (Option.isNone(ambient)) {
          // The connection permit serializes this against everything else on the database.
          return lock.withPermits(1)(Effect.gen(function*() {
            const [next, answer] = yield* Effect.flatMap(current, decide)
            if (Option.isSome(next)) {
              yield* write(next.value)
              // The table now holds the newest state, which includes anything pending.
              pending.delete(key)
            }
            return answer
          })).pipe(sql.withTransaction)
        }

        // Inside a caller's transaction: decide now, write once the caller's transaction is over.
        const flush = lock.withPermits(1)(Effect.suspend((): Effect.Effect<void, SqlErrors.SqlError> => {
          const record = pending.get(key)
          if (record === undefined) return Effect.void
          return Effect.asVoid(Effect.tap(write(record), () => Effect.sync(() => pending.delete(key))))
        })).pipe(
          sql.withTransaction,
          outsideTransaction(sql),
          Effect.tapCause((cause) =>
            Effect.logError("authority simulator: a deferred record could not be written", cause)
          )
        )
        return lock.withPermits(1)(Effect.gen(function*() {
          const [next, answer] = yield* Effect.flatMap(current, decide)
          if (Option.isSome(next)) {
            pending.set(key, next.value)
            yield* Effect.forkIn(flush, scope)
          }
          return answer
        })).pipe(Effect.uninterruptible)
      })
    }

    /**
     * The "remote" side of a call: once the request has reached the authority, the caller giving
     * up does not stop it (as with a real remote system), so it runs in a fiber of the simulator's
     * scope. In deferred mode it runs in place: it uses the caller's connection, which must not
     * outlive the caller's transaction, and it touches the database only briefly.
     */
    const handle = <A, E>(effect: Effect.Effect<Result.Result<A, E>, SqlErrors.SqlError>) =>
      Effect.gen(function*() {
        const ambient = yield* Effect.serviceOption(sql.transactionService)
        const result = mode._tag === "SingleConnection" && Option.isSome(ambient)
          ? yield* Effect.result(effect)
          : yield* Effect.result(Effect.flatMap(Effect.forkIn(effect, scope), Fiber.join))
        if (Result.isFailure(result)) {
          yield* Effect.logError("authority simulator: storage failure", result.failure)
          return yield* new AuthorityUnavailable({
            message: "The tax authority had an internal error; try again later.",
            status: 500
          })
        }
        return yield* Effect.fromResult(result.success)
      })

    const unavailable = (message: string) => new AuthorityUnavailable({ message, status: 503 })

    const fresh = (submissionId: string, at: Date): SimRecord => ({
      system,
      submissionId,
      status: "received",
      submitAttempts: 0,
      lookups: 0,
      lastOutcome: null,
      document: null,
      nfseNumber: null,
      accessKey: null,
      protocol: null,
      authorizedAt: null,
      cancelledAt: null,
      cancelProtocol: null,
      cancelReasonCode: null,
      cancelReason: null,
      receivedAt: at,
      updatedAt: at
    })

    const authorize = (document: SubmissionDocument, at: Date) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ readonly nfseNumber: number | bigint | string }>`
          SELECT nextval('authority_sim_nfse_numbers') AS nfse_number`
        // int8: a number with our type parsers, but the drivers differ, so normalize.
        const nfseNumber = Number(rows[0]!.nfseNumber)
        const accessKey = buildAccessKey({
          municipalityCode: document.service.municipality_code,
          issuerTaxId: document.issuer.taxId,
          nfseNumber,
          yearMonth: yearMonthOf(document.issueDate, at),
          randomCode: yield* randomDigits(9)
        })
        return { nfseNumber, accessKey, protocol: yield* protocolNumber(system, at) }
      })

    type SubmitSuccess = { readonly authorization: Authorization; readonly timesOut: boolean }
    type SubmitFailure = AuthorityRejected | AlreadyAuthorized | AuthorityUnavailable
    // Every submit changes the record: at least its attempt counter.
    const submitted = (
      record: SimRecord,
      answer: Result.Result<SubmitSuccess, SubmitFailure>
    ): Decision<SubmitSuccess, SubmitFailure> => [Option.some(record), answer]

    const submit = Effect.fn("TaxAuthoritySimulator.submit")(function*(submission: Submission) {
      yield* Effect.annotateCurrentSpan({
        "authority.system": system,
        "authority.submission_id": submission.submissionId
      })
      yield* travel
      const answer = yield* handle(withRecord(
        submission.submissionId,
        { createIfMissing: true },
        (current) =>
          Effect.gen(function*() {
            const at = yield* now
            const previous = Option.getOrElse(current, () => fresh(submission.submissionId, at))
            const received: SimRecord = { ...previous, submitAttempts: previous.submitAttempts + 1, updatedAt: at }
            if (yield* randomFailure) {
              return submitted(
                { ...received, lastOutcome: "unavailable (random failure)" },
                Result.fail(unavailable("The tax authority is temporarily unavailable."))
              )
            }
            const existing = authorizationOf(previous)
            if (previous.status !== "received" && Option.isSome(existing)) {
              return submitted(
                { ...received, lastOutcome: "duplicate" },
                Result.fail(new AlreadyAuthorized(existing.value))
              )
            }
            const document = submission.document
            const withDocument: SimRecord = { ...received, document }
            const notes = document.notes ?? ""
            if (notes.includes(MagicValues.reject)) {
              return submitted(
                { ...withDocument, lastOutcome: `rejected ${SimulatorCodes.rejected}` },
                Result.fail(
                  new AuthorityRejected({
                    code: SimulatorCodes.rejected,
                    message: "The national service code is not allowed in the municipality of the service."
                  })
                )
              )
            }
            if (notes.includes(MagicValues.unavailable) && received.submitAttempts <= unavailableTimes) {
              return submitted(
                { ...withDocument, lastOutcome: "unavailable (simulate:unavailable)" },
                Result.fail(unavailable("The tax authority is temporarily unavailable (503)."))
              )
            }
            const timesOut = notes.includes(MagicValues.timeout)
            const issued = yield* authorize(document, at)
            const authorization: Authorization = {
              accessKey: issued.accessKey,
              protocol: issued.protocol,
              authorizedAt: at
            }
            return submitted(
              {
                ...withDocument,
                status: "authorized",
                nfseNumber: issued.nfseNumber,
                accessKey: issued.accessKey,
                protocol: issued.protocol,
                authorizedAt: at,
                lastOutcome: timesOut ? "authorized (simulate:timeout)" : "authorized"
              },
              Result.succeed({ authorization, timesOut })
            )
          })
      ))
      if (answer.timesOut) {
        // The authority has the NFS-e; only the answer is lost on the way back.
        yield* Effect.sleep(timeoutAfter)
        return yield* new AuthorityTimeout({
          message: `The tax authority did not answer within ${Duration.format(timeoutAfter)}.`
        })
      }
      return answer.authorization
    })

    const lookup = Effect.fn("TaxAuthoritySimulator.lookup")(function*(submissionId: string) {
      yield* Effect.annotateCurrentSpan({ "authority.system": system, "authority.submission_id": submissionId })
      yield* travel
      return yield* handle(withRecord(
        submissionId,
        { createIfMissing: false },
        (current) =>
          Effect.gen(function*() {
            const failed = yield* randomFailure
            const at = yield* now
            const next = Option.map(current, (record): SimRecord => ({
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
                : Option.map(authorizationOf(record), (authorization) => ({
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
        request.submissionId,
        { createIfMissing: false },
        (current): Effect.Effect<Decision<Cancellation, AuthorityRejected | AuthorityUnavailable>, SqlErrors.SqlError> =>
          Effect.gen(function*() {
            const unchanged = Option.none<SimRecord>()
            if (yield* randomFailure) {
              return [unchanged, Result.fail(unavailable("The tax authority is temporarily unavailable."))] as const
            }
            if (Option.isNone(current) || current.value.status === "received") {
              return [
                unchanged,
                Result.fail(
                  new AuthorityRejected({
                    code: SimulatorCodes.notFound,
                    message: "No NFS-e was found for this submission (not found)."
                  })
                )
              ] as const
            }
            const record = current.value
            if (record.accessKey !== request.accessKey) {
              return [
                unchanged,
                Result.fail(
                  new AuthorityRejected({
                    code: SimulatorCodes.accessKeyMismatch,
                    message: "The access key does not belong to this submission."
                  })
                )
              ] as const
            }
            if (record.status === "cancelled" && record.cancelProtocol !== null && record.cancelledAt !== null) {
              // Idempotent: the cancellation already registered is the answer.
              return [unchanged, Result.succeed({ protocol: record.cancelProtocol, cancelledAt: record.cancelledAt })] as const
            }
            const at = yield* now
            if (notesOf(record.document).includes(MagicValues.cancelReject)) {
              return [
                Option.some({ ...record, lastOutcome: `cancellation refused ${SimulatorCodes.cancellationRefused}`, updatedAt: at }),
                Result.fail(
                  new AuthorityRejected({
                    code: SimulatorCodes.cancellationRefused,
                    message: "Cancellation refused: the NFS-e can no longer be cancelled by the issuer."
                  })
                )
              ] as const
            }
            const protocol = yield* protocolNumber(system, at)
            return [
              Option.some<SimRecord>({
                ...record,
                status: "cancelled",
                cancelledAt: at,
                cancelProtocol: protocol,
                cancelReasonCode: request.reasonCode,
                cancelReason: request.reason,
                lastOutcome: "cancelled",
                updatedAt: at
              }),
              Result.succeed({ protocol, cancelledAt: at })
            ] as const
          })
      ))
    })

    return { system, submit, lookup, cancel } satisfies TaxAuthority
  })
