/** SQL for `payment_provider_events`: one row per `webhook-id` the payment provider delivered. */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { decodeRows, repository } from "../db/Repository.js"
import type { WebhookOutcome } from "../domain/Billing.js"

export interface ReceivedEvent {
  readonly webhookId: string
  readonly eventId: string
  readonly type: string
  /** As the provider sent it: recorded also when it names no tenant. */
  readonly tenantId: string
  readonly outcome: WebhookOutcome
  readonly receivedAt: Date
}

const Recorded = Schema.Struct({ webhookId: Schema.String })

export class BillingRepo extends Context.Service<BillingRepo>()("etd/BillingRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Records a delivery, in the transaction of the change it causes: false when its `webhook-id`
     * was recorded before (a duplicate, perhaps one committed a moment ago by a concurrent delivery).
     */
    const record = (event: ReceivedEvent) =>
      sql`
        INSERT INTO payment_provider_events ${sql.insert({ ...event })}
        ON CONFLICT (webhook_id) DO NOTHING
        RETURNING webhook_id`.pipe(
        decodeRows(Recorded),
        Effect.map((rows) => rows.length === 1)
      )

    return repository("BillingRepo", { record })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  /** Its only dependency is the `SqlClient`, which the application (or a test) provides. */
  static readonly layer = this.layerNoDeps
}
