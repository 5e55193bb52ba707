/**
 * Number voiding (inutilização) of goods invoices: a range of a series whose numbers no note used
 * (drawn for documents the authority rejected, or that failed) is voided at the authority, so the
 * series has no gap the authority cannot account for. Answered in the request, as the authority
 * answers it, like a correction letter: the range is checked and recorded under the series' row
 * lock (numbering waits, so no number of it is drawn meanwhile), the authority is asked outside any
 * transaction, and its answer is kept with the `numbers.voided` event in one.
 *
 * A lost answer leaves the request `pending`: the same request again resends it (the authority's
 * duplicity of the range counts as registered); the range is not taken by another meanwhile.
 */
import { Context, Effect, Layer, Option } from "effect"
import { GoodsAuthorities } from "../authority/GoodsAuthority.js"
import { makeTransaction } from "../db/Repository.js"
import { Conflict, InvalidState, NotFound } from "../domain/Errors.js"
import { makeId } from "../domain/Ids.js"
import { cursorOf, type PageParams, pageSize, toPage } from "../domain/Pagination.js"
import type { Environment } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import type { NewVoiding, VoidedNumbers } from "../domain/Voiding.js"
import { EventLog } from "../events/EventLog.js"
import { TenantService } from "../tenants/TenantService.js"
import { answerOf, keepAnswer } from "./AuthorityAnswers.js"
import type { Issuer } from "./DocumentService.js"
import { goodsIssuerOf } from "./GoodsEmitter.js"
import { type SeriesRef, type StoredVoiding, VoidingRepo } from "./VoidingRepo.js"

export const toVoidedNumbers = (row: StoredVoiding): VoidedNumbers => ({
  id: row.id,
  object: "voided_numbers",
  environment: row.environment,
  type: row.type,
  series: row.series,
  from: row.fromNumber,
  to: row.toNumber,
  reason: row.reason,
  status: row.status,
  protocol: row.protocol,
  requested_at: row.requestedAt,
  registered_at: row.registeredAt,
  error: row.error
})

const range = (from: number, to: number) => (from === to ? `number ${from}` : `numbers ${from} to ${to}`)

export class VoidingService extends Context.Service<VoidingService>()("etd/VoidingService", {
  make: Effect.gen(function*() {
    const repo = yield* VoidingRepo
    const inTransaction = yield* makeTransaction
    const tenants = yield* TenantService
    const authorities = yield* GoodsAuthorities
    const events = yield* EventLog

    /** The voiding to send: the pending one of the same range and reason (a retry), or a new one. */
    const take = (ref: SeriesRef, request: NewVoiding) =>
      Effect.gen(function*() {
        const last = yield* repo.lastNumberForUpdate(ref)
        if (Option.isNone(last) || request.to > last.value) {
          return yield* new InvalidState({
            message: `Only numbers already drawn can be voided: ${ref.type} series ${ref.series} is at ` +
              `${Option.getOrElse(last, () => 0)}.`
          })
        }
        const held = yield* repo.holdersOf(ref, request.from, request.to)
        if (held.length > 0) {
          const [first] = held
          return yield* new Conflict({
            message: `Number ${first!.number} is document ${first!.id}'s (${first!.status}): only numbers no note ` +
              "used (of rejected or failed documents) can be voided."
          })
        }
        const before = yield* repo.overlapping(ref, request.from, request.to)
        const same = before.find((v) =>
          v.fromNumber === request.from && v.toNumber === request.to && v.reason === request.reason
        )
        if (same !== undefined && before.length === 1) return { voiding: same, send: same.status === "pending" }
        if (before.length > 0) {
          const [other] = before
          return yield* new Conflict({
            message: `${range(other!.fromNumber, other!.toNumber)} of the series are voided already, or being ` +
              `voided (${other!.id}, ${other!.status}).`
          })
        }
        const voiding = yield* repo.insert({
          ...ref,
          id: yield* makeId("voiding"),
          from: request.from,
          to: request.to,
          reason: request.reason,
          at: yield* now
        })
        return { voiding, send: true }
      }).pipe(inTransaction)

    const voidNumbers = Effect.fn("VoidingService.voidNumbers")(function*(issuer: Issuer, request: NewVoiding) {
      const found = yield* tenants.issuer(issuer.tenantId)
      if (Option.isNone(found)) return yield* new NotFound({ message: "No such tenant." })
      const emitter = yield* Effect.fromResult(goodsIssuerOf(found.value.taxId, found.value.registration))
      const ref: SeriesRef = { ...issuer, type: request.type, series: request.series ?? "1" }
      const { send, voiding } = yield* take(ref, request)
      yield* Effect.annotateCurrentSpan({ "voiding.id": voiding.id })
      if (!send) return toVoidedNumbers(voiding)
      const answer = yield* authorities.for(issuer.environment).voidNumbers({
        tenantId: issuer.tenantId,
        voidingId: voiding.id,
        environment: issuer.environment,
        issuer: emitter,
        type: voiding.type,
        series: Number(voiding.series),
        from: voiding.fromNumber,
        to: voiding.toNumber,
        reason: voiding.reason,
        requestedAt: voiding.requestedAt
      }).pipe((call) => answerOf(call, "voiding"))
      const kept = yield* keepAnswer({
        answer,
        pending: voiding,
        settle: (at) => repo.settle(voiding.id, answer, at),
        recordRegistered: (registered) =>
          events.record({
            tenantId: issuer.tenantId,
            environment: issuer.environment,
            type: "numbers.voided",
            object: toVoidedNumbers(registered)
          }),
        inTransaction
      })
      return toVoidedNumbers(kept)
    })

    const get = Effect.fn("VoidingService.get")(
      function*(tenantId: Issuer["tenantId"], environment: Environment, id: string) {
        const found = yield* repo.find(tenantId, environment, id)
        if (Option.isNone(found)) return yield* new NotFound({ message: "No such voiding." })
        return toVoidedNumbers(found.value)
      }
    )

    /** Newest first; one more is read to say whether there is a next page. */
    const list = Effect.fn("VoidingService.list")(function*(
      tenantId: Issuer["tenantId"],
      environment: Environment,
      query: PageParams
    ) {
      const limit = pageSize(query.limit)
      const cursor = cursorOf(query)
      const page = toPage(yield* repo.list(tenantId, environment, limit + 1, cursor), limit, cursor)
      return { ...page, data: page.data.map(toVoidedNumbers) }
    })

    return { voidNumbers, get, list } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps.pipe(Layer.provide([VoidingRepo.layer, TenantService.layer]))
}
