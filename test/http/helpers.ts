/** Assertions shared by the HTTP convention tests: the SPEC §2 error body and token-shaped strings. */
import { expect } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { base32 } from "../../src/domain/Tokens.js"

export interface RawResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
}

/** The response body as a JSON object; fails the test when it is anything else. */
export const jsonObject = (response: RawResponse): Record<string, unknown> => {
  const parsed: unknown = JSON.parse(response.text)
  expect(typeof parsed === "object" && parsed !== null && !Array.isArray(parsed), `not a JSON object: ${response.text}`)
    .toBe(true)
  return parsed as Record<string, unknown>
}

/** Status, stable `code` and a non-empty human `message` (SPEC §2); returns the body for more checks. */
export const expectError = (response: RawResponse, status: number, code: string): Record<string, unknown> => {
  expect(response.status, response.text).toBe(status)
  expect(response.headers["content-type"]).toContain("application/json")
  const body = jsonObject(response)
  expect(body["code"]).toBe(code)
  expect(typeof body["message"]).toBe("string")
  expect(String(body["message"]).length).toBeGreaterThan(0)
  return body
}

export interface Issue {
  readonly path: ReadonlyArray<string | number>
  readonly message: string
}

/** The `issues` of an `invalid_request` body, each checked to be `{path, message}`. */
export const issuesOf = (body: Record<string, unknown>): ReadonlyArray<Issue> => {
  const issues = body["issues"]
  expect(Array.isArray(issues), `issues missing in ${JSON.stringify(body)}`).toBe(true)
  return (issues as ReadonlyArray<unknown>).map((issue) => {
    expect(issue).toEqual({ path: expect.any(Array), message: expect.any(String) })
    return issue as Issue
  })
}

/** A string shaped exactly like an API token (`etd_<env>_<32 base32>`) that no key has. */
export const tokenShaped = (kind: "live" | "test" | "sess" = "test") => `etd_${kind}_${base32(randomBytes(20))}`

/** Retries `effect` until `done` holds, for effects of asynchronous work; fails after ~5 s. */
export const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, done: (a: A) => boolean) =>
  effect.pipe(
    Effect.filterOrFail(done, () => "not yet" as const),
    Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 100 })
  )
