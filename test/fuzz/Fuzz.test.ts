/**
 * The property-based fuzz of issue 16: every endpoint of the contract, under every kind of
 * authentication, gets requests drawn from its own Schemas and then spoiled (see `cases.ts`,
 * `hostile.ts`). Every answer is checked by `oracle.ts`, and a refused request must leave the
 * database as it found it (`state.ts`). A short run is part of `npm test`; `npm run fuzz` runs
 * the long one (`settings.ts`).
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { randomBytes } from "node:crypto"
import { markEmailVerified } from "../support/fixtures.js"
import { makeTestApp } from "../support/TestApp.js"
import { type AuthKind, authKinds, materialize, planArbitrary, poolsOf } from "./cases.js"
import { contractEndpoints } from "./contract.js"
import { problemsOf } from "./oracle.js"
import { send } from "./send.js"
import { fuzzSettings, replayHint } from "./settings.js"
import { changedTables, makeFingerprint } from "./state.js"
import { checkWorld, keepSession, makeWorld, type World } from "./world.js"

const settings = fuzzSettings()
// Deletions last: a DELETE that succeeds removes a world resource the other endpoints' runs name.
const endpoints = [...contractEndpoints()].sort((a, b) => Number(a.method === "DELETE") - Number(b.method === "DELETE"))
const POOL_SIZE = 24
const REQUEST_TIMEOUT_MS = 30_000

// Limits high enough that the fuzz reaches the handlers instead of spending its runs on 429s.
const unlimited = { perSecond: 1_000_000, burst: 1_000_000 }
const providerSecret = `whsec_${randomBytes(32).toString("base64")}`
const fuzzConfig = {
  rateLimit: unlimited,
  tenantRateLimit: unlimited,
  sessionRateLimit: unlimited,
  loginRateLimit: { perMinute: 1_000_000 },
  uploadRateLimit: { perMinute: 1_000_000 },
  paymentProviderWebhookSecret: Option.some(Redacted.make(providerSecret))
}

if (settings.long) console.log(`fuzz: seed ${settings.seed}, ${settings.runs} runs per endpoint and authentication`)

const describeRequest = (
  request: { method: string; path: string; headers: Record<string, string>; body?: Uint8Array | undefined }
) => {
  const body = request.body === undefined ? "" : Buffer.from(request.body).toString("utf8")
  return `${request.method} ${request.path.slice(0, 300)}\n${JSON.stringify(request.headers).slice(0, 600)}\n` +
    `${body.length} bytes: ${JSON.stringify(body.slice(0, 400))}`
}

for (const database of settings.databases) {
  /** Answers by endpoint and status, printed after a long run to show how deep the requests got. */
  const tally = new Map<string, Map<number | string, number>>()
  const count = (endpoint: string, status: number | string) => {
    const byStatus = tally.get(endpoint) ?? new Map<number | string, number>()
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1)
    tally.set(endpoint, byStatus)
  }
  const runs = (kind: AuthKind, appropriate: ReadonlyArray<AuthKind>) =>
    appropriate.includes(kind) ? settings.runs : Math.max(1, Math.ceil(settings.runs / 4))
  // Generous: five kinds of credentials, and a run may send a megabyte.
  const testTimeout = 60_000 + settings.runs * 10_000

  layer(makeTestApp(database, fuzzConfig), { timeout: 120_000, excludeTestServices: true })(
    `fuzz (${database})`,
    (it) => {
      let world: Promise<World> | undefined

      const setUp = Effect.gen(function*() {
        const server = yield* HttpServer.HttpServer
        const port = (server.address as { readonly port: number }).port
        const fingerprint = yield* makeFingerprint
        const sql = yield* SqlClient.SqlClient
        const verifyEmail = (userId: string) =>
          Effect.runPromise(markEmailVerified(userId).pipe(Effect.provideService(SqlClient.SqlClient, sql)))
        world ??= makeWorld(port, providerSecret, settings.long, verifyEmail)
        return { port, fingerprint, world: yield* Effect.promise(() => world!) }
      })

      it.effect("the state check sees a write to any table, and not what only the workers change", () =>
        Effect.gen(function*() {
          const { fingerprint, world } = yield* setUp
          const sql = yield* SqlClient.SqlClient
          const before = yield* fingerprint
          const docId = world.a.ids["docId"]![0]!
          yield* sql`UPDATE documents SET attempts = attempts + 1, updated_at = updated_at + interval '1 second' WHERE id = ${docId}`
          expect(changedTables(before, yield* fingerprint)).toEqual([])
          yield* sql`UPDATE tenants SET name = name || '.' WHERE id = ${world.a.tenantId}`
          yield* sql`UPDATE documents SET notes = 'changed' WHERE id = ${docId}`
          const changed = changedTables(before, yield* fingerprint).map((change) => change.split(":")[0])
          yield* sql`UPDATE tenants SET name = rtrim(name, '.') WHERE id = ${world.a.tenantId}`
          yield* sql`UPDATE documents SET notes = NULL WHERE id = ${docId}`
          expect(changed.sort()).toEqual(["documents", "tenants"])
        }))

      endpoints.forEach((endpoint, index) => {
        it.effect(`${endpoint.method} ${endpoint.path} (${endpoint.authentication})`, () =>
          Effect.gen(function*() {
            const { fingerprint, port, world } = yield* setUp
            const pools = poolsOf(endpoint, settings.seed + index, POOL_SIZE, world.known)
            const { appropriate, others } = authKinds(endpoint)
            for (const [k, auth] of [...appropriate, ...others].entries()) {
              const property = fc.asyncProperty(planArbitrary(endpoint, auth, world, pools), async (plan) => {
                const { request, secrets } = materialize(plan, endpoint, pools, world)
                const before = await Effect.runPromise(fingerprint)
                const outcome = await send(port, request, REQUEST_TIMEOUT_MS)
                const problems = [...problemsOf(request, outcome, secrets)]
                count(endpoint.name, outcome._tag === "Answered" ? outcome.response.status : "dropped")
                if (outcome._tag === "Answered" && outcome.response.status >= 400 && outcome.response.status < 500) {
                  const changed = changedTables(before, await Effect.runPromise(fingerprint))
                  if (changed.length > 0) problems.push(`a refused request changed the database: ${changed.join("; ")}`)
                }
                if (outcome._tag === "Answered" && outcome.response.status < 300 && request.method !== "GET") {
                  await keepSession(world)
                }
                if (problems.length > 0) {
                  const answer = outcome._tag === "Answered"
                    ? `${outcome.response.status} ${outcome.response.text.slice(0, 600)}`
                    : outcome.reason
                  throw new Error(
                    `${problems.join("\n")}\n--- request\n${describeRequest(request)}\n--- answer\n${answer}`
                  )
                }
              })
              const result = yield* Effect.promise(() =>
                fc.check(property, {
                  seed: settings.seed + index * 101 + k,
                  numRuns: runs(auth, appropriate),
                  includeErrorInReport: true
                })
              )
              if (result.failed) {
                expect.fail(
                  `${endpoint.name} with ${auth} authentication: ${fc.defaultReportMessage(result)}\n${
                    replayHint(settings)
                  }`
                )
              }
            }
          }), testTimeout)
      })

      it.effect("the fuzz's own session and key still work: no request revoked them on the way", () =>
        Effect.gen(function*() {
          const { world } = yield* setUp
          yield* Effect.promise(() => checkWorld(world))
        }))

      afterAll(() => {
        if (!settings.long) return
        console.log(`fuzz (${database}): answers by endpoint and status`)
        for (const [endpoint, byStatus] of tally) {
          const statuses = [...byStatus].sort(([a], [b]) => String(a).localeCompare(String(b)))
          console.log(`  ${endpoint}: ${statuses.map(([status, n]) => `${status}×${n}`).join(" ")}`)
        }
      })
    }
  )
}
