/**
 * The event outbox. Events are inserted in the same transaction (or the same statement) as the
 * state change that causes them, so a rolled-back change leaves no event and a committed one never
 * loses its event. The same statement writes what `EventFanOut` makes of the event (implemented by
 * the webhooks module: one delivery per matching endpoint).
 */
import { type Array as Arr, Context, Effect, Layer } from "effect"
import type { Statement } from "effect/sql"
import { type StatementParts } from "../db/Repository.js"
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

/**
 * Whoever must hear of every recorded event, in the statement that records it (the webhooks): what
 * it writes for an event, given the condition under which the event was written.
 */
export class EventFanOut extends Context.Service<EventFanOut, {
  readonly fanningOut: (event: RecordedEvent) => Effect.Effect<(written: Statement.Fragment) => StatementParts>
}>()("etd/EventFanOut") {}

export class EventLog extends Context.Service<EventLog>()("etd/EventLog", {
  make: Effect.gen(function*() {
    const repo = yield* EventRepo
    const subscriber = yield* EventFanOut

    const recordedOf = (event: NewEvent) =>
      Effect.gen(function*(): Effect.fn.Return<RecordedEvent> {
        return {
          id: yield* makeId("event"),
          tenantId: event.tenantId,
          environment: event.environment,
          type: event.type,
          data: { object: event.object },
          createdAt: yield* now
        }
      })

    /**
     * Records the event in the caller's transaction, or on its own: the event and what it fans out
     * to are one statement, written together or not at all.
     */
    const record = Effect.fn("EventLog.record")(function*(event: NewEvent) {
      const recorded = yield* recordedOf(event)
      yield* repo.record(recorded, yield* subscriber.fanningOut(recorded))
      return recorded.id
    })

    /**
     * The event and what it fans out to as parts of another repository's statement, written only
     * where the gate it is given holds (the outcome that causes the event was written): one round
     * trip for all of it.
     */
    const recording = (event: NewEvent) =>
      Effect.gen(function*() {
        const recorded = yield* recordedOf(event)
        const fanOut = yield* subscriber.fanningOut(recorded)
        return (gate: Statement.Fragment) => repo.recording(recorded, gate, fanOut)
      })

    /** Events as recorded, by id (those that exist), in one statement: the webhooks send them as they were. */
    const findMany = (ids: Arr.NonEmptyReadonlyArray<string>) => repo.findMany(ids)

    return { record, recording, findMany } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  /** Still needs an `EventFanOut`: the application's is the webhooks' (webhooks/FanOut.ts). */
  static readonly layer = this.layerNoDeps.pipe(Layer.provide(EventRepo.layer))
}
