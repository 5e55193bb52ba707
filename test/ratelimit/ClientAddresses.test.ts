/**
 * Real client addresses behind proxies, and login limits that hold (SPEC §3, §11): the app
 * trusts 127.0.0.1 as its proxy, so a request from 127.0.0.1 is the load balancer speaking for the
 * client its headers name, and one from any other loopback address (127.0.0.2 …) is a client
 * connecting directly, whose forwarding headers are its own invention. The access log and the
 * security alerts name the resolved client. The limits do not touch the database: embedded only.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { AppConfigShape } from "../../src/Config.js"
import { parseTrustedProxies } from "../../src/http/ClientAddress.js"
import { eventually, type RawResponse } from "../http/helpers.js"
import { createKey, PASSWORD, registerOwner, uniqueEmail } from "../support/fixtures.js"
import { fromAddress } from "../support/fromAddress.js"
import { withLogRecords } from "../support/logRecords.js"
import { makeTestApp } from "../support/TestApp.js"

const PROXY = "127.0.0.1"

const behindProxy: Partial<AppConfigShape> = {
  trustedProxies: parseTrustedProxies(PROXY).networks,
  // Ten failures per email, thirty attempts per client address, a minute; thirty attempts per email an hour.
  loginRateLimit: { perMinute: 10 }
}

const login = (from: string, email: string, password: string, headers: Record<string, string> = {}) =>
  fromAddress(from, "POST", "/v1/auth/login", { email, password }, headers)

const register = (from: string, email: string, headers: Record<string, string> = {}) =>
  fromAddress(from, "POST", "/v1/auth/register", { email, password: PASSWORD }, headers)

/** `attempt` until the first 429 (at most `max` times); the statuses seen. */
const untilLimited = <E, R>(max: number, attempt: (i: number) => Effect.Effect<RawResponse, E, R>) =>
  Effect.gen(function*() {
    const statuses: Array<number> = []
    for (let i = 0; i < max && statuses.at(-1) !== 429; i++) statuses.push((yield* attempt(i)).status)
    return statuses
  })

const randomIPv4 = () => `203.0.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`

layer(makeTestApp("embedded", behindProxy), { timeout: 60_000, excludeTestServices: true })(
  "client addresses behind a trusted proxy",
  (it) => {
    it.effect("each client behind the proxy has its own budget: one client's junk logins leave another signing in", () =>
      withLogRecords((records) =>
        Effect.gen(function*() {
          const email = uniqueEmail("behind")
          expect((yield* register(PROXY, email, { "x-forwarded-for": "198.51.100.9" })).status).toBe(201)

          // The reproduced attack: junk logins from one client until its address budget is spent. It
          // also writes an address of its choosing first; the proxy appends the one it saw.
          const junk = yield* untilLimited(
            60,
            () =>
              login(PROXY, uniqueEmail("junk"), "wrong password", { "x-forwarded-for": `${randomIPv4()}, 192.0.2.66` })
          )
          expect(junk.at(-1)).toBe(429)
          expect(junk.length).toBeGreaterThan(30)

          // Another person behind the same proxy still signs in, named by X-Forwarded-For or Forwarded.
          const owner = yield* login(PROXY, email, PASSWORD, { "x-forwarded-for": "198.51.100.9" })
          expect(owner.status).toBe(200)
          const quoted = yield* login(PROXY, email, PASSWORD, { forwarded: "for=\"198.51.100.9:55123\";proto=https" })
          expect(quoted.status).toBe(200)

          // The access log names the client the proxy forwarded for, not the proxy.
          const lines = records().filter((r) => r.msg === "request" && r["http.route"] === "/v1/auth/login")
          const ownerLine = lines.find((r) => r.trace_id === owner.headers["x-request-id"])
          expect(ownerLine).toMatchObject({ "client.address": "198.51.100.9", "http.response.status_code": 200 })
          const junkLines = lines.filter((r) => r["http.response.status_code"] === 429)
          expect(junkLines.length).toBeGreaterThan(0)
          for (const line of junkLines) expect(line["client.address"]).toBe("192.0.2.66")
        })
      ))

    it.effect("an untrusted peer's forwarding headers are ignored: rotating spoofed addresses buys no budget", () =>
      withLogRecords((records) =>
        Effect.gen(function*() {
          const spoofer = "127.0.0.2"
          const statuses = yield* untilLimited(60, (i) =>
            login(spoofer, uniqueEmail("spoof"), "wrong password", {
              "x-forwarded-for": randomIPv4(),
              forwarded: i % 2 === 0 ? `for=${randomIPv4()}` : `for="[2001:db8::${i.toString(16)}]"`
            }))
          expect(statuses.at(-1)).toBe(429)
          // Thirty a minute per address, and what refilled while the attempts ran.
          expect(statuses.length).toBeGreaterThan(30)
          expect(statuses.length).toBeLessThanOrEqual(35)
          for (const line of records().filter((r) => r.msg === "request" && r["http.route"] === "/v1/auth/login")) {
            expect(line["client.address"]).toBe(spoofer)
          }
          // Another client is not affected.
          expect((yield* login("127.0.0.3", uniqueEmail(), "wrong password")).status).toBe(401)
        })
      ))

    it.effect("IPv6 clients count per /64: another address in the same /64 is the same client", () =>
      Effect.gen(function*() {
        const from = (address: string) => ({ forwarded: `for="[${address}]:4711"` })
        const statuses = yield* untilLimited(
          60,
          (i) => login(PROXY, uniqueEmail("v6"), "wrong password", from(`2001:db8:1:2::${(i + 1).toString(16)}`))
        )
        expect(statuses.at(-1)).toBe(429)
        expect(statuses.length).toBeGreaterThan(30)
        expect((yield* login(PROXY, uniqueEmail(), "wrong", from("2001:db8:1:2:ffff:ffff:ffff:ffff"))).status).toBe(429)
        // The next /64 is someone else.
        expect((yield* login(PROXY, uniqueEmail(), "wrong", from("2001:db8:1:3::1"))).status).toBe(401)
      }))

    it.effect("14 wrong passwords for one email from a known address end in 429; the owner's other places still work", () =>
      Effect.gen(function*() {
        const email = uniqueEmail("known")
        expect((yield* register("127.0.0.4", email)).status).toBe(201)
        // The owner has signed in from two places.
        expect((yield* login("127.0.0.4", email, PASSWORD)).status).toBe(200)
        expect((yield* login("127.0.0.5", email, PASSWORD)).status).toBe(200)

        const statuses = []
        for (let i = 0; i < 14; i++) statuses.push((yield* login("127.0.0.4", email, `wrong password ${i}`)).status)
        // The address's own failures for the email: ten, then 429 (a token may come back meanwhile).
        expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401))
        expect(statuses.at(-1)).toBe(429)
        expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(11)

        // The owner's other place is not held back by them, nor is a stranger's guess counted there.
        expect((yield* login("127.0.0.5", email, PASSWORD)).status).toBe(200)
        expect((yield* login("127.0.0.6", email, "wrong password")).status).toBe(401)
      }))

    it.effect("a security alert names the client that sent the exposed key, as the proxy forwarded it", () =>
      withLogRecords((records) =>
        Effect.gen(function*() {
          const owner = yield* registerOwner("alerted")
          const key = yield* createKey(owner, "test")
          const refused = yield* fromAddress(PROXY, "GET", "/v1/documents", undefined, {
            authorization: `Bearer ${key.token}`,
            origin: "https://shop.example",
            "x-forwarded-for": "198.51.100.77"
          })
          expect(refused.status).toBe(403)
          const alert = yield* eventually(
            Effect.sync(() =>
              records().filter((r) => r.alert === "api_key.exposed" && r.api_key_id === key.api_key.id)
            ),
            (found) => found.length > 0
          )
          expect(alert[0]).toMatchObject({ source: "browser", "client.address": "198.51.100.77" })
          expect(JSON.stringify(alert)).not.toContain(key.token)
        })
      ))
  }
)

layer(
  makeTestApp("embedded", { loginRateLimit: { perMinute: 1000, attemptsPerHour: 5 } }),
  { timeout: 60_000, excludeTestServices: true }
)("the hourly cap on attempts per email", (it) => {
  it.effect("holds from any number of addresses, counts successes, and keeps the owner's known places apart", () =>
    Effect.gen(function*() {
      const email = uniqueEmail("capped")
      expect((yield* register("127.0.0.7", email)).status).toBe(201)
      // The owner's first login comes from a place not known yet: one of the five of "elsewhere".
      expect((yield* login("127.0.0.7", email, PASSWORD)).status).toBe(200)

      // A guesser on a new address for each attempt, far below any per-minute budget.
      const guesses = []
      for (let i = 0; i < 6; i++) guesses.push((yield* login(`127.0.1.${i + 1}`, email, `guess ${i}`)).status)
      expect(guesses).toEqual([401, 401, 401, 401, 429, 429])
      // Elsewhere, even the right password now waits …
      expect((yield* login("127.0.1.99", email, PASSWORD)).status).toBe(429)

      // … but not at the owner's known place, which has a cap of its own, successes included.
      const owner = []
      for (let i = 0; i < 6; i++) owner.push((yield* login("127.0.0.7", email, PASSWORD)).status)
      expect(owner).toEqual([200, 200, 200, 200, 200, 429])
    }))
})
