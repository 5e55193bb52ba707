/**
 * The event outbox. Events are inserted in the same transaction as the state change that causes
 * them, so a rolled-back change leaves no event and a committed one never loses its event. The
 * same transaction hands the event to `EventFanOut` (implemented by the webhooks module, which
 * queues one delivery per matching endpoint).
 */
import { type Array as Arr, Context, Effect, Layer } from "effect"
import { Transaction } from "../db/Repository.js"
import type { EventType, RecordedEvent } from "../domain/Events.js"
import { makeId, type TenantId } from "../domain/Ids.js"
import type { Environment } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import { EventRepo } from "./EventRepo.js"

export interface NewEvent {
  readonly tenantId: TenantId
  readonly environment: Environment
  readonly type: EventType
  readonly object: unknown
}

/** Whoever must hear of every recorded event, inside the event's transaction (the webhooks). */
export class EventFanOut extends Context.Service<EventFanOut, {
  readonly fanOut: (event: RecordedEvent) => Effect.Effect<void>
}>()("etd/EventFanOut") {}

export class EventLog extends Context.Service<EventLog>()("etd/EventLog", {
  make: Effect.gen(function*() {
    const repo = yield* EventRepo
    const { atomic } = yield* Transaction
    const subscriber = yield* EventFanOut

    /** Call inside the transaction of the change the event reports. */
    const record = Effect.fn("EventLog.record")(function*(event: NewEvent) {
      const recorded: RecordedEvent = {
        id: yield* makeId("event"),
        tenantId: event.tenantId,
        environment: event.environment,
        type: event.type,
        data: { object: event.object },
        createdAt: yield* now
      }
      // In the caller's transaction, or in one of its own when there is none: either way the event
      // and what it fans out to are written together or not at all.
      yield* Effect.andThen(repo.insert(recorded), subscriber.fanOut(recorded)).pipe(atomic)
      return recorded.id
    })

    /** Events as recorded, by id (those that exist), in one statement: the webhooks send them as they were. */
    const findMany = (ids: Arr.NonEmptyReadonlyArray<string>) => repo.findMany(ids)

    return { record, findMany } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  /** Still needs an `EventFanOut`: the application's is the webhooks' (webhooks/FanOut.ts). */
  static readonly layer = this.layerNoDeps.pipe(Layer.provide([EventRepo.layer, Transaction.layer]))
}
