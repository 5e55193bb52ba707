/**
 * ExposureMonitor and the report queues it drains: keys, sessions, alerts and events are mocks
 * (Layer.mock), the queues are the real ones. Errors.test.ts and ExposureFlood.test.ts cover
 * detection end to end.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Latch, Layer, Logger, Metric, Option } from "effect"
import { AuthService } from "../../src/auth/AuthService.js"
import { asId } from "../../src/domain/Ids.js"
import { generateToken, type TokenKind } from "../../src/domain/Tokens.js"
import { EventLog } from "../../src/events/EventLog.js"
import { ExposureMonitor } from "../../src/keys/ExposureMonitor.js"
import { KeyService } from "../../src/keys/KeyService.js"
import { SecurityAlertRepo } from "../../src/keys/SecurityAlertRepo.js"
import {
  type CandidateOutcome,
  exposureCandidates,
  ExposureReports,
  type ExposureSource,
  MAX_TOKENS_PER_REPORT,
  QUEUE_CAPACITY,
  REMEMBERED_TOKENS
} from "../../src/telemetry/ExposureReports.js"
import { makeGuardedLogger } from "../../src/telemetry/Logger.js"
import { recordingTransaction } from "../support/recordingTransaction.js"

/**
 * What the mocks saw. `known` holds the tokens that belong to a key (live/test) or a session;
 * lookups of any other token wait for `gate`, so a test can hold a worker while it fills a queue.
 */
interface World {
  readonly log: Array<string>
  readonly lookups: Array<string>
  readonly known: Set<string>
  /** Tokens whose next lookup fails, as when the database is unreachable. */
  readonly failures: Set<string>
  readonly gate: Latch.Latch
}

const makeWorld = Effect.map(
  Latch.make(true),
  (gate): World => ({ log: [], lookups: [], known: new Set(), failures: new Set(), gate })
)

/** The monitor over mocks that write what they are asked, and where transactions begin and end, to `log`. */
const monitorWith = (world: World) => {
  const write = (line: string) => Effect.sync(() => void world.log.push(line))
  const lookUp = (token: string) =>
    Effect.sync(() => {
      world.lookups.push(token)
      return { known: world.known.has(token), fails: world.failures.delete(token) }
    }).pipe(
      Effect.flatMap(({ fails, known }) =>
        fails ? Effect.die(new Error("database unreachable")) : Effect.as(known ? Effect.void : world.gate.await, known)
      )
    )
  return ExposureMonitor.layerNoDeps.pipe(
    Layer.provide([
      Layer.mock(SecurityAlertRepo)({
        insert: (alert) =>
          write(`alert ${alert.kind} ${alert.tenantId ?? "-"} ${alert.apiKeyId ?? "-"} ${alert.detail}`)
      }),
      Layer.mock(KeyService)({
        identify: (token) =>
          Effect.map(
            lookUp(token),
            (known) =>
              known ? Option.some({ keyId: asId("apiKey", "key_1"), tenantId: asId("tenant", "ten_1") }) : Option.none()
          )
      }),
      Layer.mock(AuthService)({
        revokeExposedSession: (token) =>
          Effect.flatMap(
            lookUp(token),
            (known) =>
              known
                ? Effect.as(write("revoke session"), Option.some({ id: "ses_1", userId: asId("user", "usr_1") }))
                : Effect.succeedNone
          )
      }),
      Layer.mock(EventLog)({
        record: (event) => Effect.as(write(`event ${event.type} ${event.environment} ${event.tenantId}`), "evt_1")
      }),
      recordingTransaction(world.log)
    ]),
    Layer.provideMerge(ExposureReports.layer)
  )
}

/** Runs `body` against a monitor over a fresh world. */
const withMonitor = <A, E>(body: (world: World) => Effect.Effect<A, E, ExposureMonitor | ExposureReports>) =>
  Effect.flatMap(makeWorld, (world) => Effect.provide(body(world), monitorWith(world)))

/** Lets the monitor's fibers run until `done` holds (the mocks never sleep, so yielding is enough). */
const until = (done: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100_000 && !done(); i++) yield* Effect.yieldNow
    expect(done()).toBe(true)
  })

/**
 * Until the URL queue is full behind a held worker (one candidate taken, QUEUE_CAPACITY waiting):
 * the first `fitted` reports have returned and the others wait.
 */
const untilFull = (reports: ReadonlyArray<Fiber.Fiber<void>>, fitted: number) =>
  Effect.gen(function*() {
    yield* until(() => reports.slice(0, fitted).every((fiber) => fiber.pollUnsafe() !== undefined))
    expect(reports.slice(fitted).every((fiber) => fiber.pollUnsafe() === undefined)).toBe(true)
  })

const candidates = (outcome: CandidateOutcome, source: ExposureSource) =>
  Effect.map(Metric.value(Metric.withAttributes(exposureCandidates, { outcome, source })), (state) => state.count)

/** `count` fresh token-shaped strings that belong to nothing. */
const junk = (count: number, kind: TokenKind = "test") => Array.from({ length: count }, () => generateToken(kind))

describe("ExposureMonitor (neighbours mocked)", () => {
  it.effect("a leaked key: the alert and the tenant's event, in the token's environment, commit together", () =>
    withMonitor(({ known, log }) =>
      Effect.gen(function*() {
        const monitor = yield* ExposureMonitor
        const token = generateToken("test")
        known.add(token)
        yield* monitor.handle(token, "url")
        expect(log).toEqual([
          "BEGIN",
          "alert api_key.exposed ten_1 key_1 url",
          "event api_key.exposed test ten_1",
          "COMMIT"
        ])
      })
    ))

  it.effect("a leaked session is revoked and alerted without a tenant", () =>
    withMonitor(({ known, log }) =>
      Effect.gen(function*() {
        const monitor = yield* ExposureMonitor
        const token = generateToken("sess")
        known.add(token)
        yield* monitor.handle(token, "log")
        expect(log).toEqual(["revoke session", "alert session.exposed - - log"])
      })
    ))

  it.effect("a token-shaped string that is no key or session raises no alert: it is only counted", () =>
    withMonitor(({ lookups, log }) =>
      Effect.gen(function*() {
        const monitor = yield* ExposureMonitor
        const before = yield* candidates("unknown", "log")
        const strangers = [generateToken("live"), generateToken("sess")]
        for (const token of strangers) yield* monitor.handle(token, "log")
        expect(lookups).toEqual(strangers)
        expect(log).toEqual([])
        expect((yield* candidates("unknown", "log")) - before).toBe(2)
      })
    ))
})

describe("exposure reports under a flood", () => {
  it.effect("a log line's near misses reach no lookup", () =>
    Effect.gen(function*() {
      const body = "a".repeat(32)
      const found: Array<ReadonlyArray<string>> = []
      const logger = makeGuardedLogger(() => {}, (tokens) => found.push(tokens))
      const misses = [
        `etd_test_${body.slice(1)}`, // 31 characters
        `etd_test_${body}b`, // 33 characters
        `etd_test_${body.toUpperCase()}`,
        `ETD_TEST_${body}`,
        `etd_prod_${body}`,
        `xetd_test_${body}`, // glued to a word
        `etd_test_${body.slice(1)}1` // 1 is not base32
      ]
      yield* Effect.logWarning(`near misses: ${misses.join(" ")}`).pipe(Effect.provide(Logger.layer([logger])))
      expect(found).toEqual([])
    }))

  it.effect("a log line's tokens are found after JSON escapes and percent-escapes, once per line", () =>
    Effect.gen(function*() {
      const found: Array<ReadonlyArray<string>> = []
      const written: Array<string> = []
      const logger = makeGuardedLogger((line) => written.push(line), (tokens) => found.push(tokens))
      const [key, session] = [generateToken("live"), generateToken("sess")]
      yield* Effect.logWarning(`first line\n${key} then %20${session}, ${key} again`).pipe(
        Effect.provide(Logger.layer([logger]))
      )
      expect(found).toEqual([[key, session]])
      expect(written.join("")).not.toContain(key.slice(9))
      expect(written.join("")).not.toContain(session.slice(9))
    }))

  it.effect(`at most ${MAX_TOKENS_PER_REPORT} tokens are taken from one request or line; the rest are counted`, () =>
    withMonitor(({ lookups }) =>
      Effect.gen(function*() {
        const reports = yield* ExposureReports
        const before = yield* candidates("over_cap", "url")
        const flood = junk(300)
        yield* reports.report(flood, "url")
        yield* until(() => lookups.length === MAX_TOKENS_PER_REPORT)
        yield* reports.report([], "url")
        expect(lookups).toEqual(flood.slice(0, MAX_TOKENS_PER_REPORT))
        expect((yield* candidates("over_cap", "url")) - before).toBe(300 - MAX_TOKENS_PER_REPORT)
      })
    ))

  it.effect("a token queued or looked up already is not queued again", () =>
    withMonitor(({ gate, known, log, lookups }) =>
      Effect.gen(function*() {
        const reports = yield* ExposureReports
        const before = yield* candidates("duplicate", "url")
        const real = generateToken("test")
        known.add(real)
        // Hold the worker on a stranger, so the key waits in the queue while it is reported again.
        yield* gate.close
        yield* reports.report(junk(1), "url")
        yield* until(() => lookups.length === 1)
        yield* reports.report([real], "url")
        yield* reports.report([real], "url")
        yield* gate.open
        yield* until(() => lookups.length === 2)
        yield* reports.report([real], "url")
        yield* reports.report(junk(1), "url")
        yield* until(() => lookups.length === 3)
        expect(lookups.filter((token) => token === real)).toHaveLength(1)
        expect(log.filter((line) => line.startsWith("alert"))).toEqual(["alert api_key.exposed ten_1 key_1 url"])
        expect((yield* candidates("duplicate", "url")) - before).toBe(2)
      })
    ))

  it.effect("a token whose lookup failed is looked up again when it is seen again", () =>
    withMonitor(({ failures, known, log, lookups }) =>
      Effect.gen(function*() {
        const reports = yield* ExposureReports
        const real = generateToken("live")
        known.add(real)
        failures.add(real)
        yield* reports.report([real], "url")
        yield* until(() => lookups.length === 1)
        yield* reports.report([real], "url")
        yield* until(() => lookups.length === 2)
        yield* until(() => log.includes("alert api_key.exposed ten_1 key_1 url"))
      })
    ))

  it.effect(`the memory of looked-up tokens holds the last ${REMEMBERED_TOKENS}`, () =>
    withMonitor(({ lookups }) =>
      Effect.gen(function*() {
        const reports = yield* ExposureReports
        const seen = junk(REMEMBERED_TOKENS + 1)
        for (let i = 0; i < seen.length; i += MAX_TOKENS_PER_REPORT) {
          yield* reports.report(seen.slice(i, i + MAX_TOKENS_PER_REPORT), "url")
        }
        yield* until(() => lookups.length === seen.length)
        // The oldest is forgotten and looked up again; the newest is still remembered.
        yield* reports.report([seen.at(-1)!, seen[0]!], "url")
        yield* until(() => lookups.length === seen.length + 1)
        expect(lookups.at(-1)).toBe(seen[0])
      })
    ))

  it.effect("requests of 300 token-shaped strings fill the queue while the worker is held: a real session and key still get through", () =>
    withMonitor(({ gate, known, log, lookups }) =>
      Effect.gen(function*() {
        const reports = yield* ExposureReports
        const session = generateToken("sess")
        const key = generateToken("live")
        known.add(session).add(key)
        // Held on the first stranger, the worker leaves everything else in the queue.
        yield* gate.close
        const flood = () => reports.report(junk(300, "live"), "url")
        const fibers: Array<Fiber.Fiber<void>> = []
        // Enough requests to fill the queue even after the cap; the session arrives early, the key once it is full.
        const requests = QUEUE_CAPACITY / MAX_TOKENS_PER_REPORT + 10
        for (let i = 0; i < requests; i++) {
          if (i === 10) fibers.push(yield* Effect.forkChild(reports.report([session], "url")))
          fibers.push(yield* Effect.forkChild(flood()))
        }
        const keyReport = yield* Effect.forkChild(reports.report([key], "url"))
        // 64 floods of 16 after the cap and the session: 1,025 candidates, one of them in the worker's hands.
        yield* untilFull(fibers, QUEUE_CAPACITY / MAX_TOKENS_PER_REPORT + 1)
        // The key's report waits for room rather than being dropped or pushing anything out.
        yield* Effect.yieldNow
        expect(keyReport.pollUnsafe()).toBeUndefined()
        fibers.push(keyReport)
        yield* gate.open
        yield* Fiber.joinAll(fibers)
        yield* until(() => lookups.includes(key))
        expect(log).toContain("revoke session")
        expect(log).toContain("alert api_key.exposed ten_1 key_1 url")
      })
    ))

  it.effect("a report waiting for room is not lost when its request goes away", () =>
    withMonitor(({ gate, known, log }) =>
      Effect.gen(function*() {
        const reports = yield* ExposureReports
        const session = generateToken("sess")
        known.add(session)
        yield* gate.close
        const floods: Array<Fiber.Fiber<void>> = []
        for (let i = 0; i < QUEUE_CAPACITY / MAX_TOKENS_PER_REPORT + 1; i++) {
          floods.push(yield* Effect.forkChild(reports.report(junk(MAX_TOKENS_PER_REPORT), "url")))
        }
        const waiting = yield* Effect.forkChild(reports.report([session], "url"))
        yield* untilFull([...floods, waiting], QUEUE_CAPACITY / MAX_TOKENS_PER_REPORT)
        // The client hangs up: the interruption takes effect once the report has found room.
        const hangUp = yield* Effect.forkChild(Fiber.interrupt(waiting))
        yield* gate.open
        yield* Fiber.join(hangUp)
        yield* until(() => log.includes("revoke session"))
      })
    ))

  it.effect("log lines keep their own room: a flood of URLs does not hold up a token found in a log line", () =>
    withMonitor(({ gate, known, log }) =>
      Effect.gen(function*() {
        const reports = yield* ExposureReports
        const session = generateToken("sess")
        known.add(session)
        yield* gate.close
        const floods: Array<Fiber.Fiber<void>> = []
        for (let i = 0; i < QUEUE_CAPACITY / MAX_TOKENS_PER_REPORT + 10; i++) {
          floods.push(yield* Effect.forkChild(reports.report(junk(MAX_TOKENS_PER_REPORT), "url")))
        }
        yield* untilFull(floods, QUEUE_CAPACITY / MAX_TOKENS_PER_REPORT)
        reports.reportUnsafe([session], "log")
        // Revoked while the URL worker is still held and the URL queue full.
        yield* until(() => log.includes("revoke session"))
        yield* gate.open
        yield* Fiber.joinAll(floods)
      })
    ))

  it.effect("what a full log queue cannot take is counted, and can be reported again", () =>
    withMonitor(({ gate, lookups }) =>
      Effect.gen(function*() {
        const reports = yield* ExposureReports
        const before = yield* candidates("overflow", "log")
        yield* gate.close
        const lines = Array.from({ length: QUEUE_CAPACITY / MAX_TOKENS_PER_REPORT + 1 }, () =>
          junk(MAX_TOKENS_PER_REPORT))
        for (const tokens of lines) {
          reports.reportUnsafe(tokens, "log")
        }
        expect((yield* candidates("overflow", "log")) - before).toBe(MAX_TOKENS_PER_REPORT)
        yield* gate.open
        yield* until(() =>
          lookups.length === QUEUE_CAPACITY
        )
        reports.reportUnsafe(lines.at(-1)!, "log")
        yield* until(() => lookups.length === QUEUE_CAPACITY + MAX_TOKENS_PER_REPORT)
      })
    ))
})
