/**
 * Rate limits as a client sees them (SPEC §2 429 row, §3, §11): per tenant across its keys, per
 * tenant's certificate uploads, login failures per email and attempts per address (proxies and the
 * hourly cap per email: ClientAddresses.test.ts); shared by two instances through Redis, and served
 * from memory while Redis is out (issue 16 items 8 and 14). Sessions' limits and the other upload
 * budgets are in SessionLimits.test.ts. The rules do not touch the database, so they run on the
 * embedded one only.
 */
import { describe, expect, it, layer, vi, type Vitest } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Metric, Scope } from "effect"
import net from "node:net"
import type { AppConfigShape } from "../../src/Config.js"
import { rateLimitFallbacks } from "../../src/ratelimit/RateLimiter.js"
import { redisKey } from "../../src/ratelimit/RedisBuckets.js"
import { expectError, type RawResponse } from "../http/helpers.js"
import { createKey, PASSWORD, registerOwner, uniqueEmail } from "../support/fixtures.js"
import { fromAddress } from "../support/fromAddress.js"
import { inspectRedis, redisProxy, redisSettings, redisSuite, testKeyPrefix, testRedisUrl } from "../support/Redis.js"
import { makeTestApp, rawRequest } from "../support/TestApp.js"

/**
 * Another app, built in the test with a memo map of its own, so it shares no layer (no limiter,
 * no database) with the suite's app: a second instance.
 */
const startApp = (overrides: Partial<AppConfigShape>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.Scope
    const app = yield* Layer.buildWithMemoMap(makeTestApp("embedded", overrides), Layer.makeMemoMapUnsafe(), scope)
    return <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideContext(effect, app)
  })

const login = (address: string, email: string, password: string) =>
  fromAddress(address, "POST", "/v1/auth/login", { email, password })

/**
 * `attempt` `count` times in a row, checked against a bucket of `budget` refilling at `perSecond`:
 * the first `budget` get `passed`, then 429s, except for the tokens the bucket got back while the
 * attempts ran (login buckets refill every few seconds, and a loaded machine can be that slow).
 */
const expectSpent = <E, R>(
  count: number,
  attempt: (i: number) => Effect.Effect<RawResponse, E, R>,
  { budget, passed, perSecond }: { budget: number; passed: number; perSecond: number }
) =>
  Effect.gen(function*() {
    const started = Date.now()
    const statuses: Array<number> = []
    for (let i = 0; i < count; i++) statuses.push((yield* attempt(i)).status)
    const refilled = Math.floor(((Date.now() - started) / 1000) * perSecond)
    expect(statuses.slice(0, budget)).toEqual(Array(budget).fill(passed))
    expect(statuses.every((status) => status === passed || status === 429), String(statuses)).toBe(true)
    const passes = statuses.filter((status) => status === passed).length
    expect(passes, String(statuses)).toBeLessThanOrEqual(budget + refilled)
    expect(passes, String(statuses)).toBeLessThan(count)
  })

const expectLimited = (response: RawResponse, limit: number) => {
  const body = expectError(response, 429, "rate_limited")
  const retryAfter = Number(response.headers["retry-after"])
  expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true)
  expect(body["retry_after"]).toBe(retryAfter)
  expect(response.headers["ratelimit-limit"]).toBe(String(limit))
  expect(response.headers["ratelimit-remaining"]).toBe("0")
  expect(Number(response.headers["ratelimit-reset"])).toBeGreaterThanOrEqual(1)
}

/** Nothing refills during a test. */
const slowly = (burst: number) => ({ perSecond: 0.001, burst })

/** Log lines the app wrote while `effect` ran (the app logs JSON lines to stdout). */
const withStdout = <A, E, R>(effect: (lines: () => ReadonlyArray<string>) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => vi.spyOn(process.stdout, "write")),
    (spy) => effect(() => spy.mock.calls.map(([chunk]) => String(chunk))),
    (spy) => Effect.sync(() => spy.mockRestore())
  )
const outageWarnings = (lines: ReadonlyArray<string>) => lines.filter((line) => line.includes("Redis does not answer"))
const recoveries = (lines: ReadonlyArray<string>) => lines.filter((line) => line.includes("Redis answers again"))
const fallbacks = Effect.map(Metric.value(rateLimitFallbacks), (state) => Number(state.count))

/** Every limit of these suites, small enough to reach; each test uses tenants and sessions of its own. */
const limits: Partial<AppConfigShape> = {
  rateLimit: slowly(100),
  tenantRateLimit: slowly(3),
  sessionRateLimit: slowly(8),
  sessionTenantRateLimit: slowly(8),
  uploadRateLimit: { perMinute: 2, perUserPerMinute: 100, globalPerMinute: 100 },
  // Ten failures per email, thirty attempts per address.
  loginRateLimit: { perMinute: 10 }
}

/** The Redis suite's app reaches Redis through a proxy the tests can cut. */
class TestRedis
  extends Context.Service<TestRedis, { readonly prefix: string; readonly proxy: Effect.Success<typeof redisProxy> }>()(
    "test/TestRedis"
  )
{}

const redisApp = Layer.unwrap(
  Effect.gen(function*() {
    const prefix = yield* testKeyPrefix
    const proxy = yield* redisProxy
    return makeTestApp("embedded", { ...limits, ...redisSettings(proxy.url, prefix) }).pipe(
      Layer.merge(Layer.succeed(TestRedis, { prefix, proxy }))
    )
  })
)

/** The rules, the same whichever store holds the buckets. */
const ruleTests = (it: Vitest.MethodsNonLive<Layer.Success<ReturnType<typeof makeTestApp>>>) => {
  it.effect("all of a tenant's keys share the tenant's bucket", () =>
    Effect.gen(function*() {
      const owner = yield* registerOwner()
      const [first, second] = [yield* createKey(owner), yield* createKey(owner)]
      const url = `/v1/tenants/${owner.tenantId}`
      const served = [
        yield* rawRequest("GET", url, { token: first.token }),
        yield* rawRequest("GET", url, { token: first.token }),
        yield* rawRequest("GET", url, { token: second.token })
      ]
      expect(served.map((r) => [r.status, r.headers["ratelimit-limit"], r.headers["ratelimit-remaining"]])).toEqual([
        [200, "3", "2"],
        [200, "3", "1"],
        [200, "3", "0"]
      ])
      // A second key buys nothing more.
      expectLimited(yield* rawRequest("GET", url, { token: second.token }), 3)
      expectLimited(yield* rawRequest("GET", url, { token: first.token }), 3)
      // Another tenant has its own bucket.
      const other = yield* registerOwner("other")
      const otherKey = yield* createKey(other)
      expect((yield* rawRequest("GET", `/v1/tenants/${other.tenantId}`, { token: otherKey.token })).status).toBe(200)
    }))

  it.effect("certificate uploads are limited per tenant, whatever the outcome of each", () =>
    Effect.gen(function*() {
      const owner = yield* registerOwner()
      const upload = (tenant: { tenantId: string; session: string }) =>
        rawRequest("POST", `/v1/tenants/${tenant.tenantId}/credentials`, {
          token: tenant.session,
          body: { pkcs12: "MIIBAAAA", password: "not the password" }
        })
      for (let i = 0; i < 2; i++) {
        const rejected = yield* upload(owner)
        expect(rejected.status, rejected.text).toBeGreaterThanOrEqual(400)
        expect(rejected.status, rejected.text).toBeLessThan(500)
        expect(rejected.status).not.toBe(429)
      }
      const limited = yield* upload(owner)
      expectLimited(limited, 2)
      // One token comes back every 30 s.
      expect(Number(limited.headers["retry-after"])).toBeGreaterThan(20)
      // Another tenant's uploads are still opened.
      const other = yield* registerOwner("other")
      expect((yield* upload(other)).status).not.toBe(429)
    }))

  it.effect("login: failures count per email, not attempts; the owner's known address is never locked out", () =>
    Effect.gen(function*() {
      // The owner registers and logs in from 127.0.0.1.
      const owner = yield* registerOwner()
      const guesser = "127.0.0.2"
      const failures = { budget: 10, passed: 401, perSecond: 10 / 60 }
      yield* expectSpent(20, (i) => login(guesser, owner.email, `wrong password ${i}`), failures)
      expectLimited(yield* login(guesser, owner.email, "wrong password again"), 10)

      // From an address that never logged in, even the right password waits: that is the lockout.
      expectLimited(yield* login("127.0.0.3", owner.email, PASSWORD), 10)
      // From the address the owner logged in from before, the right password still works …
      expect((yield* login("127.0.0.1", owner.email.toUpperCase(), PASSWORD)).status).toBe(200)
      // … and that success forgives the failures, everywhere.
      expect((yield* login("127.0.0.3", owner.email, PASSWORD)).status).toBe(200)

      // Successful logins spend nothing of the email's failure budget: twelve in a row from a new
      // address (they count in the hourly cap on attempts, ClientAddresses.test.ts).
      const successes = []
      for (let i = 0; i < 12; i++) successes.push((yield* login("127.0.0.4", owner.email, PASSWORD)).status)
      expect(successes).toEqual(Array(12).fill(200))

      // Per address, every attempt counts: thirty, whatever the emails (and passwords).
      const attempts = { budget: 30, passed: 401, perSecond: 30 / 60 }
      yield* expectSpent(36, () => login("127.0.0.5", uniqueEmail(), PASSWORD), attempts)
    }))
}

layer(makeTestApp("embedded", limits), { timeout: 60_000, excludeTestServices: true })(
  "rate limits over HTTP (buckets in memory)",
  ruleTests
)

if (testRedisUrl === undefined) {
  describe.skip(redisSuite("rate limits over HTTP (buckets in Redis)"), () => it("needs Redis", () => {}))
} else {
  layer(redisApp, { timeout: 60_000, excludeTestServices: true })("rate limits over HTTP (buckets in Redis)", (it) => {
    ruleTests(it)

    it.effect("a second instance on the same Redis shares the buckets", () =>
      Effect.gen(function*() {
        const { prefix } = yield* TestRedis
        const inSecond = yield* startApp({ ...limits, ...redisSettings(testRedisUrl!, prefix) })
        // Failed logins for one email, alternately on each instance (each has a database of its
        // own, so the email is unknown to both and every attempt fails).
        const email = uniqueEmail()
        const attempt = login("127.0.0.8", email, "wrong password")
        // Ten failures in all: then both instances refuse.
        yield* expectSpent(14, (i) => (i % 2 === 0 ? attempt : inSecond(attempt)), {
          budget: 10,
          passed: 401,
          perSecond: 10 / 60
        })
      }))

    it.effect(
      "Redis stopped mid-run: 200 and 429 from memory meanwhile, never a 500; shared again once it is back",
      () =>
        withStdout((lines) =>
          Effect.gen(function*() {
            const { prefix, proxy } = yield* TestRedis
            const redis = yield* inspectRedis
            const owner = yield* registerOwner()
            const key = yield* createKey(owner)
            const get = Effect.gen(function*() {
              const started = Date.now()
              const response = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: key.token })
              expect(Date.now() - started).toBeLessThan(2000)
              return response.status
            })
            const tokensInRedis = Effect.map(
              Effect.promise(() => redis.hget(redisKey(prefix, `tenant:${owner.tenantId}`), "tokens")),
              Number
            )
            expect(yield* get).toBe(200)
            expect(yield* tokensInRedis).toBeCloseTo(2, 1)

            proxy.set("refuse")
            const before = yield* fallbacks
            const during = []
            for (let i = 0; i < 5; i++) during.push(yield* get)
            // This instance's memory starts the tenant afresh: three more, then 429.
            expect(during).toEqual([200, 200, 200, 429, 429])
            expect((yield* fallbacks) - before).toBe(5)
            expect(outageWarnings(lines())).toHaveLength(1)

            proxy.set("forward")
            const after = []
            for (let i = 0; i < 40 && recoveries(lines()).length === 0; i++) {
              after.push(yield* get)
              yield* Effect.sleep(Duration.millis(100))
            }
            expect(recoveries(lines())).toHaveLength(1)
            for (const status of after) expect([200, 429]).toContain(status)
            // Decided in Redis again: the shared bucket, not the memory one, is the one spent.
            const level = yield* tokensInRedis
            expect(level).toBeGreaterThanOrEqual(1)
            expect(yield* get).toBe(200)
            expect(yield* tokensInRedis).toBeCloseTo(level - 1, 1)
            expect(outageWarnings(lines())).toHaveLength(1)
          })
        ),
      { timeout: 30_000 }
    )
  })
}

/** A port nothing listens on. */
const closedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
)

describe.skipIf(testRedisUrl === undefined)(redisSuite("rate limits over HTTP with Redis"), () => {
  it.live(
    "Redis at a closed port: requests are served with this instance's limits, one warning, fallbacks counted",
    () =>
      withStdout((lines) =>
        Effect.gen(function*() {
          const inApp = yield* startApp({
            ...redisSettings(`redis://127.0.0.1:${yield* closedPort}`, "etd-test:closed:"),
            rateLimit: slowly(3)
          })
          yield* inApp(Effect.gen(function*() {
            const owner = yield* registerOwner()
            const key = yield* createKey(owner)
            const before = yield* fallbacks
            const responses = []
            for (let i = 0; i < 5; i++) {
              const started = Date.now()
              responses.push({
                ...(yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: key.token })),
                ms: Date.now() - started
              })
            }
            expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 429, 429])
            expectLimited(responses[3]!, 3)
            for (const response of responses) expect(response.ms).toBeLessThan(2000)
            expect((yield* fallbacks) - before).toBe(5)
          }))
          // Registration, login and key creation fell back too: still a single warning.
          expect(outageWarnings(lines())).toHaveLength(1)
        })
      ),
    { timeout: 30_000 }
  )
})
