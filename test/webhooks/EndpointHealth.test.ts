/**
 * An endpoint's health (docs/webhooks.md): unknown before anything is sent, failing when none of its
 * latest 3 deliveries sent succeeded (all of them, when fewer were sent), healthy again after a
 * success; on the endpoint read, the list and a change's answer alike.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createKey, registerOwner } from "../support/fixtures.js"
import { makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"
import { eventually, startReceiver } from "./receiver.js"
import { invoice, webhookTestOverrides as overrides } from "./setup.js"

interface Health {
  readonly status: string
  readonly last_success_at: string | null
  readonly last_failure_at: string | null
  readonly consecutive_failures: number
}

for (const database of testDatabases) {
  layer(makeTestApp(database, overrides), { timeout: 120_000, excludeTestServices: true })(
    `webhook endpoint health (${database})`,
    (it) => {
      it.effect("unknown, then failing, healthy after a success, failing after 3 failures in a row", () =>
        Effect.gen(function*() {
          const receiver = yield* startReceiver(() => 500)
          const owner = yield* registerOwner("health")
          const { token } = yield* createKey(owner, "test")
          const hooks = `/v1/tenants/${owner.tenantId}/webhook-endpoints`
          const created = yield* rawRequest("POST", hooks, {
            token,
            body: { url: receiver.url(), events: ["document.authorized"] }
          })
          const unknown = { status: "unknown", last_success_at: null, last_failure_at: null, consecutive_failures: 0 }
          expect(created.json!["health"]).toEqual(unknown)
          const path = `${hooks}/${created.json!["id"]}`
          expect((yield* rawRequest("GET", path, { token })).json!["health"]).toEqual(unknown)

          const healthAfter = (sentDeliveries: number, succeeded: boolean) =>
            Effect.gen(function*() {
              yield* rawRequest("POST", `/v1/tenants/${owner.tenantId}/documents`, { token, body: invoice })
              const read = yield* eventually(
                rawRequest("GET", path, { token }),
                (response) => {
                  const health = response.json?.["health"] as Health | undefined
                  return succeeded
                    ? health?.last_success_at !== null && health?.consecutive_failures === 0
                    : health?.consecutive_failures === sentDeliveries
                },
                1000
              )
              return read.json!["health"] as Health
            })

          // One delivery sent, failed: none of the (fewer than 3) deliveries sent succeeded.
          const firstFailure = yield* healthAfter(1, false)
          expect(firstFailure).toMatchObject({ status: "failing", last_success_at: null, consecutive_failures: 1 })
          expect(Date.parse(firstFailure.last_failure_at!)).not.toBeNaN()
          const listed = yield* rawRequest("GET", hooks, { token })
          expect((listed.json!["data"] as Array<{ health: Health }>)[0]!.health).toEqual(firstFailure)

          receiver.respond = () => 200
          const recovered = yield* healthAfter(0, true)
          expect(recovered).toMatchObject({ status: "healthy", consecutive_failures: 0 })
          expect(recovered.last_failure_at).toBe(firstFailure.last_failure_at)

          // Two failures after a success: one of the latest 3 succeeded, still healthy; a third is not.
          receiver.respond = () => 503
          expect(yield* healthAfter(1, false)).toMatchObject({ status: "healthy", consecutive_failures: 1 })
          expect(yield* healthAfter(2, false)).toMatchObject({ status: "healthy", consecutive_failures: 2 })
          const failing = yield* healthAfter(3, false)
          expect(failing).toMatchObject({
            status: "failing",
            last_success_at: recovered.last_success_at,
            consecutive_failures: 3
          })

          // A change answers with the health too.
          const changed = yield* rawRequest("PATCH", path, { token, body: { description: "ERP" } })
          expect(changed.json!["health"]).toEqual(failing)
        }))
    }
  )
}
