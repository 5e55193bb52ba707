/**
 * SQL for the state authorizers' status checks (AuthorizerMonitor.ts): the goods emitters they are
 * asked through — per state, one tenant with what a goods invoice needs (a state registration, an
 * address) and an unexpired active certificate, ICP-Brasil ones first (production takes no other) —
 * and the answers every instance shares (migration 0025).
 */
import { Context, Duration, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { decodeRows, repository } from "../db/Repository.js"
import { AuthorizerState, type AuthorizerStatus } from "../domain/AuthorizerStatus.js"
import { GoodsInvoiceType } from "../domain/GoodsInvoice.js"
import { TenantId } from "../domain/Ids.js"
import { Environment } from "../domain/Principal.js"

export const StateEmitter = Schema.Struct({
  tenantId: TenantId,
  state: Schema.String,
  stateCode: Schema.String
})
export type StateEmitter = typeof StateEmitter.Type

/** Which authorizer: an environment's, for a state's notes of a type. */
export interface AuthorizerKey {
  readonly environment: Environment
  readonly state: string
  readonly type: typeof GoodsInvoiceType.Type
}

const emitters = decodeRows(StateEmitter)
const claims = decodeRows(Schema.Struct({ claimed: Schema.Boolean }))
const statuses = decodeRows(Schema.Struct({
  environment: Environment,
  state: Schema.String,
  type: GoodsInvoiceType,
  status: AuthorizerState,
  code: Schema.NullOr(Schema.String),
  reason: Schema.NullOr(Schema.String),
  checkedAt: Schema.Date
}))

export class AuthorizerStatusRepo extends Context.Service<AuthorizerStatusRepo>()("etd/AuthorizerStatusRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const onePerState = emitters(sql`
      SELECT DISTINCT ON (t.registration -> 'address' ->> 'state')
        t.id AS tenant_id, t.registration -> 'address' ->> 'state' AS state,
        left(t.registration -> 'address' ->> 'municipality_code', 2) AS state_code
      FROM tenants t JOIN credentials c ON c.tenant_id = t.id AND c.status = 'active' AND c.not_after > now()
      WHERE t.registration ->> 'state_registration' IS NOT NULL
        AND t.registration -> 'address' ->> 'state' IS NOT NULL
        AND t.registration -> 'address' ->> 'municipality_code' IS NOT NULL
      ORDER BY t.registration -> 'address' ->> 'state', c.verified_chain DESC, c.not_after DESC`)

    /** Takes the asking of an authorizer, unless an instance took it less than `every` ago. */
    const claim = (key: AuthorizerKey, at: Date, every: Duration.Duration) => {
      const since = new Date(at.getTime() - Duration.toMillis(every))
      return claims(sql`
        INSERT INTO authorizer_status (environment, state, type, claimed_at)
        VALUES (${key.environment}, ${key.state}, ${key.type}, ${at})
        ON CONFLICT (environment, state, type) DO UPDATE SET claimed_at = excluded.claimed_at
        WHERE authorizer_status.claimed_at <= ${since}
        RETURNING true AS claimed`).pipe(Effect.map((rows) => rows.length > 0))
    }

    const record = (status: AuthorizerStatus) =>
      sql`
        UPDATE authorizer_status SET status = ${status.status}, code = ${status.code}, reason = ${status.reason},
          checked_at = ${status.checked_at}
        WHERE environment = ${status.environment} AND state = ${status.state} AND type = ${status.type}`.pipe(
        Effect.asVoid
      )

    /** Every answer had, whichever instance had it. */
    const answered = statuses(sql`
      SELECT environment, state, type, status, code, reason, checked_at FROM authorizer_status
      WHERE status IS NOT NULL ORDER BY environment, state, type`).pipe(
      Effect.map((rows) => rows.map(({ checkedAt, ...row }): AuthorizerStatus => ({ ...row, checked_at: checkedAt })))
    )

    return repository("AuthorizerStatusRepo", { onePerState, claim, record, answered })
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
