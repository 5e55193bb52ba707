/**
 * The built-in simulator of the state authorities, for goods invoices (NF-e, NFC-e): the default
 * goods adapter, so the service issues goods notes offline as it does service notes.
 *
 * It decides as a SEFAZ does (../sefaz/NoteReview.ts: the official rejection codes, schema and
 * signature first), on the note the service would send, signed with the simulator's own certificate
 * (SimulatorSigner.ts: it holds no tenant's). It keeps its records in the simulator's table, per
 * tenant, in transactions of its own, like the service invoices' simulator (Simulator.ts): an
 * authorized note's protocol and its `nfeProc`, what a lookup by the note's key returns. A note sent
 * again is adopted, never authorized twice (the duplicity a SEFAZ answers 204).
 *
 * The magic values of test mode work as in Simulator.ts, from the sale's `notes`: `simulate:reject`
 * is rejected (999), `simulate:unavailable` fails with 503 `unavailableTimes` times first,
 * `simulate:timeout` is authorized but the answer is lost (the caller times out; a lookup finds it),
 * `simulate:offline` finds the service paused online (never received) and is authorized once sent offline (tpEmis 9),
 * `simulate:cancel-reject` has its cancellation refused as past its deadline (501).
 *
 * A cancellation (event 110111) is checked as a SEFAZ checks it (the note authorized, its protocol),
 * built, signed and validated against the event's schema, and registered with a protocol of its own;
 * the same cancellation again is done, not refused.
 */
import { Clock, Duration, Effect, Option, Random, Result, type Scope } from "effect"
import type { SqlClient } from "effect/sql"
import type { Environment } from "../../domain/Principal.js"
import { drawDanfe } from "../danfe/Danfe.js"
import type {
  GoodsAuthority,
  GoodsAuthorization,
  GoodsCancellation,
  GoodsCancellationRequest,
  GoodsCorrection,
  GoodsSubmission
} from "../GoodsAuthority.js"
import {
  cancellationEvent,
  eventBatch,
  loadCancellationSchemas,
  validateCancellation
} from "../sefaz/NfeCancellation.js"
import { correctionEvent, loadEventSchemas, validateEvent } from "../sefaz/NfeCorrection.js"
import { AUTHORIZED, AUTHORIZED_REASON, processedNote, protocolElement } from "../sefaz/NfeProtocol.js"
import { loadNfeSchemas } from "../sefaz/NfeXsd.js"
import { reviewNote } from "../sefaz/NoteReview.js"
import { goodsSubmissionIdOf, issuedNote, signedNote } from "../sefaz/SignedNote.js"
import {
  AuthorityRejected,
  AuthorityTimeout,
  AuthorityUnavailable,
  MagicValues,
  RequestNotSent
} from "../TaxAuthority.js"
import { signEnveloped } from "../xml/XmlSignature.js"
import { authorizationOf } from "./GoodsRecords.js"
import { simulatedVoiding } from "./SimulatedVoiding.js"
import type { SimulatorOptions } from "./Simulator.js"
import { remoteSide } from "./Simulator.js"
import { type SimulatorRecord, SimulatorRepo } from "./SimulatorRepo.js"
import { simulatorSigner } from "./SimulatorSigner.js"

const APPLICATION = "ETD-SIMULADOR_4.00"

type SubmitFailure = AuthorityRejected | AuthorityUnavailable | RequestNotSent
type SubmitAnswer = Result.Result<
  { readonly authorization: GoodsAuthorization; readonly timesOut: boolean },
  SubmitFailure
>

export const makeGoodsSimulator = (
  options: SimulatorOptions
): Effect.Effect<GoodsAuthority, never, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function*() {
    const repo = yield* SimulatorRepo.make
    const handle = remoteSide(yield* Effect.scope)
    const system = options.system
    const environment: Environment = system === "production" ? "live" : "test"
    const latency = Duration.fromInputUnsafe(options.latency ?? Duration.zero)
    const failureRate = Math.min(1, Math.max(0, options.failureRate ?? 0))
    const timeoutAfter = Duration.fromInputUnsafe(options.timeoutAfter ?? Duration.seconds(30))
    const unavailableTimes = Math.max(0, options.unavailableTimes ?? 2)

    const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))
    const travel = Duration.isGreaterThan(latency, Duration.zero) ? Effect.sleep(latency) : Effect.void
    const randomFailure = Effect.map(Random.next, (r) => r < failureRate)
    const unavailable = (message: string) => new AuthorityUnavailable({ message, status: 503 })
    // libxml2 and the schemas cost ~160 MiB and a start-up pause: loaded by the first goods note, not at start.
    const schemas = Effect.promise(() => Promise.all([loadNfeSchemas(), loadCancellationSchemas(), loadEventSchemas()]))

    const keyOf = (submission: GoodsSubmission) => ({
      system,
      tenantId: submission.tenantId,
      submissionId: submission.submissionId
    })

    /** 15 digits like a SEFAZ's: 1 + cUF + the year's two digits + 10 random digits. */
    const protocolFor = (stateCode: string, at: Date) =>
      Effect.map(
        Effect.all(Array.from({ length: 10 }, () => Random.nextIntBetween(0, 10, { halfOpen: true }))),
        (digits) => `1${stateCode}${String(at.getUTCFullYear()).slice(2)}${digits.join("")}`
      )

    /** What a submit does to its record as it is, at `at`: the record's next state and the caller's answer. */
    const decideSubmit = (submission: GoodsSubmission, previous: SimulatorRecord, at: Date) =>
      Effect.gen(function*() {
        const received: SimulatorRecord = { ...previous, submitAttempts: previous.submitAttempts + 1, updatedAt: at }
        const answer = (record: SimulatorRecord, result: SubmitAnswer) => [record, result] as const
        if (yield* randomFailure) {
          return answer(
            { ...received, lastOutcome: "unavailable (random failure)" },
            Result.fail(unavailable("The tax authority is temporarily unavailable."))
          )
        }
        const existing = authorizationOf(previous)
        if (Option.isSome(existing)) {
          // The same note again (its first answer was lost): the authority's 204, answered with its protocol.
          return answer(
            { ...received, lastOutcome: "duplicate (204)" },
            Result.succeed({ authorization: existing.value, timesOut: false })
          )
        }
        const signed = submission.offlineXml === undefined
          ? yield* Effect.result(signedNote(submission.note, simulatorSigner()))
          : Result.succeed(issuedNote(submission.note, submission.offlineXml))
        if (Result.isFailure(signed)) {
          return answer(
            { ...received, lastOutcome: "not sent: schema" },
            Result.fail(new RequestNotSent({ code: "note_not_valid", message: signed.failure.message }))
          )
        }
        const review = reviewNote(signed.success.note, environment)
        if (Result.isFailure(review)) {
          return answer(
            { ...received, lastOutcome: `rejected ${review.failure.status}` },
            Result.fail(new AuthorityRejected({ code: review.failure.status, message: review.failure.reason }))
          )
        }
        const note = review.success
        if (note.notes.includes(MagicValues.unavailable) && received.submitAttempts <= unavailableTimes) {
          return answer(
            { ...received, lastOutcome: "unavailable (simulate:unavailable)" },
            Result.fail(unavailable("The tax authority is temporarily unavailable (503)."))
          )
        }
        if (note.notes.includes(MagicValues.offline) && note.emissionType === "1") {
          return answer(
            { ...received, lastOutcome: "unreachable (simulate:offline)" },
            Result.fail(
              new AuthorityUnavailable({
                message: "The tax authority's service is paused (simulate:offline).",
                unreached: true
              })
            )
          )
        }
        if (note.notes.includes(MagicValues.reject)) {
          return answer(
            { ...received, lastOutcome: "rejected 999" },
            Result.fail(
              new AuthorityRejected({ code: "999", message: "Rejeição: Erro não catalogado (simulate:reject)" })
            )
          )
        }
        const protocol = yield* protocolFor(note.stateCode, at)
        const protocolXml = protocolElement({
          environment,
          application: APPLICATION,
          accessKey: note.accessKey,
          receivedAt: at,
          protocol,
          digestValue: note.digestValue,
          status: AUTHORIZED,
          reason: AUTHORIZED_REASON
        })
        const xml = processedNote(signed.success.note, protocolXml)
        const timesOut = note.notes.includes(MagicValues.timeout)
        return answer(
          {
            ...received,
            status: "authorized",
            accessKey: note.accessKey,
            protocol,
            authorizedAt: at,
            document: { xml },
            lastOutcome: timesOut ? "authorized (simulate:timeout)" : "authorized"
          },
          Result.succeed({ authorization: { accessKey: note.accessKey, protocol, authorizedAt: at, xml }, timesOut })
        )
      })

    const submit: GoodsAuthority["submit"] = Effect.fn("GoodsSimulator.submit")(function*(submission) {
      yield* Effect.annotateCurrentSpan({
        "authority.system": system,
        "authority.submission_id": submission.submissionId
      })
      yield* schemas
      yield* travel
      const answer = yield* handle(repo.inOwnTransaction(Effect.gen(function*() {
        const at = yield* now
        const record = yield* repo.lockOrCreateRecord(keyOf(submission), at)
        const [next, result] = yield* decideSubmit(submission, record, at)
        yield* repo.save(next)
        return result
      })))
      if (answer.timesOut) {
        // The authority has the note; only the answer is lost on the way back.
        yield* Effect.sleep(timeoutAfter)
        return yield* new AuthorityTimeout({
          message: `The tax authority did not answer within ${Duration.format(timeoutAfter)}.`
        })
      }
      return answer.authorization
    })

    /** An NFC-e issued offline: the note `submit` would send, signed in the simulator's name, kept nowhere. */
    const issueOffline: GoodsAuthority["issueOffline"] = (submission) =>
      Effect.andThen(schemas, signedNote(submission.note, simulatorSigner())).pipe(
        Effect.map((signed) => ({ accessKey: signed.accessKey, xml: signed.note })),
        Effect.catchTag("NoteNotValid", (error) =>
          Effect.fail(new RequestNotSent({ code: "note_not_valid", message: error.message })))
      )

    const lookup: GoodsAuthority["lookup"] = Effect.fn("GoodsSimulator.lookup")(function*(submission) {
      yield* Effect.annotateCurrentSpan({
        "authority.system": system,
        "authority.submission_id": submission.submissionId
      })
      yield* travel
      return yield* handle(repo.inOwnTransaction(Effect.gen(function*() {
        const current = yield* repo.lock(keyOf(submission))
        const at = yield* now
        if (Option.isSome(current)) {
          yield* repo.save({ ...current.value, lookups: current.value.lookups + 1, updatedAt: at })
        }
        if (yield* randomFailure) {
          return Result.fail(unavailable("The tax authority is temporarily unavailable."))
        }
        return Result.succeed(Option.flatMap(current, authorizationOf))
      })))
    })

    /** What a cancellation does to the note's record: registered (or found registered), or refused with a SEFAZ code. */
    const decideCancel = (request: GoodsCancellationRequest, current: Option.Option<SimulatorRecord>, at: Date) =>
      Effect.gen(function*() {
        const refuse = (code: string, reason: string) =>
          Result.fail(new AuthorityRejected({ code, message: `Rejeição: ${reason}` }))
        if (Option.isNone(current) || current.value.status === "received") {
          return [Option.none<SimulatorRecord>(), refuse("217", "NF-e não consta na base de dados da SEFAZ")] as const
        }
        const record = current.value
        if (record.status === "cancelled") {
          // The same event again (its answer was lost): done, as the SEFAZ's duplicity of the event says.
          return [
            Option.none<SimulatorRecord>(),
            Result.succeed({ protocol: null, cancelledAt: record.cancelledAt! })
          ] as const
        }
        if (record.protocol !== request.protocol) {
          return [
            Option.none<SimulatorRecord>(),
            refuse("222", "Protocolo de Autorização de Uso difere do cadastrado")
          ] as const
        }
        if ((request.note.request.notes ?? "").includes(MagicValues.cancelReject)) {
          return [
            Option.some({ ...record, lastOutcome: "cancellation refused 501", updatedAt: at }),
            refuse("501", "Prazo de cancelamento superior ao previsto na Legislação")
          ] as const
        }
        const signer = simulatorSigner()
        const batch = eventBatch(
          "1",
          signEnveloped(
            cancellationEvent({
              environment,
              accessKey: request.accessKey,
              issuerTaxId: request.note.issuer.taxId,
              protocol: request.protocol,
              reason: request.reason,
              requestedAt: request.requestedAt
            }),
            { element: "nfeEvent", ...signer }
          )
        )
        const valid = validateCancellation("envEvento", batch)
        if (Result.isFailure(valid)) {
          return [
            Option.none<SimulatorRecord>(),
            Result.fail(new RequestNotSent({ code: "note_not_valid", message: valid.failure.messages.join("; ") }))
          ] as const
        }
        const protocol = yield* protocolFor(request.accessKey.slice(0, 2), at)
        return [
          Option.some({
            ...record,
            status: "cancelled" as const,
            cancelledAt: at,
            cancelProtocol: protocol,
            cancelReason: request.reason,
            lastOutcome: "cancelled",
            updatedAt: at
          }),
          Result.succeed({ protocol, cancelledAt: at })
        ] as const
      })

    const cancel: GoodsAuthority["cancel"] = Effect.fn("GoodsSimulator.cancel")(function*(request) {
      yield* Effect.annotateCurrentSpan({ "authority.system": system, "authority.submission_id": request.submissionId })
      yield* schemas
      yield* travel
      return yield* handle<GoodsCancellation, AuthorityRejected | AuthorityUnavailable | RequestNotSent>(
        repo.inOwnTransaction(Effect.gen(function*() {
          if (yield* randomFailure) {
            return Result.fail(unavailable("The tax authority is temporarily unavailable."))
          }
          const at = yield* now
          const [next, answer] = yield* decideCancel(request, yield* repo.lock(keyOf(request)), at)
          if (Option.isSome(next)) {
            yield* repo.save(next.value)
          }
          return answer
        }))
      )
    })

    /**
     * A correction letter, as a SEFAZ takes it: of a note it authorized and has not cancelled, the
     * event built and checked as the SEFAZ adapter sends it. `simulate:reject` in the letter's text
     * has it refused (999). The simulator keeps no letters: the service numbers and keeps them.
     */
    const correct: GoodsAuthority["correct"] = Effect.fn("GoodsSimulator.correct")(function*(request) {
      yield* Effect.annotateCurrentSpan({ "authority.system": system, "authority.submission_id": request.submissionId })
      yield* schemas
      yield* travel
      return yield* handle<GoodsCorrection, AuthorityRejected | AuthorityUnavailable | RequestNotSent>(
        repo.inOwnTransaction(Effect.gen(function*() {
          if (yield* randomFailure) {
            return Result.fail(unavailable("The tax authority is temporarily unavailable."))
          }
          const refuse = (code: string, reason: string) =>
            Result.fail(new AuthorityRejected({ code, message: `Rejeição: ${reason}` }))
          const current = yield* repo.lock(keyOf(request))
          if (Option.isNone(current) || current.value.status === "received") {
            return refuse("217", "NF-e não consta na base de dados da SEFAZ")
          }
          if (current.value.status === "cancelled") {
            return refuse("218", "NF-e já está cancelada na base de dados da SEFAZ")
          }
          if (request.text.includes(MagicValues.reject)) {
            return refuse("999", "Erro não catalogado (simulate:reject)")
          }
          const batch = eventBatch(
            "1",
            signEnveloped(
              correctionEvent({ ...request, environment, issuerTaxId: request.note.issuer.taxId }),
              { element: "nfeEvent", ...simulatorSigner() }
            )
          )
          const valid = validateEvent("envEvento", batch)
          if (Result.isFailure(valid)) {
            return Result.fail(
              new RequestNotSent({ code: "note_not_valid", message: valid.failure.messages.join("; ") })
            )
          }
          const at = yield* now
          const protocol = yield* protocolFor(request.accessKey.slice(0, 2), at)
          yield* repo.save({
            ...current.value,
            lastOutcome: `correction ${request.sequence} registered`,
            updatedAt: at
          })
          return Result.succeed({ protocol, registeredAt: at })
        }))
      )
    })

    return {
      system,
      submissionIdOf: goodsSubmissionIdOf,
      // The simulator signs in its own name: it needs nothing of the tenant.
      requirementsFor: () =>
        Effect.void,
      submit,
      issueOffline,
      lookup,
      cancel,
      correct,
      voidNumbers: simulatedVoiding({ system, travel, randomFailure, unavailable, now, protocolFor }),
      // Always in operation: nothing to ask.
      status: () => Effect.succeedNone,
      danfe: drawDanfe
    } satisfies GoodsAuthority
  })
