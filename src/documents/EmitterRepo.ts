/**
 * SQL for the goods emitters the state authorizers are asked about: per state, one tenant with
 * what a goods invoice needs (a state registration, an address) and an active certificate, whose
 * certificate opens the connection (AuthorizerMonitor.ts). A certificate that chains to ICP-Brasil
 * is preferred: production takes no other.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { decodeRows, repository } from "../db/Repository.js"
import { TenantId } from "../domain/Ids.js"

export const StateEmitter = Schema.Struct({
  tenantId: TenantId,
  state: Schema.String,
  stateCode: Schema.String
})
export type StateEmitter = typeof StateEmitter.Type

const emitters = decodeRows(StateEmitter)

export class EmitterRepo extends Context.Service<EmitterRepo>()("etd/EmitterRepo", {
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

    return repository("EmitterRepo", { onePerState })
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
