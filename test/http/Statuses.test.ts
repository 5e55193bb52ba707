/**
 * `statusOf` reads the status an error class declares (`httpApiStatus`). Statuses stored or sent
 * outside the API (a replayed idempotent answer, a response before routing) come from it, so it
 * must agree with the status the API itself answers each error of the contract with.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import * as Errors from "../../src/domain/Errors.js"

const { statusOf } = Errors

/** The status the framework answers an error with, from an endpoint declaring only that error. */
const apiStatusOf = (error: Schema.Top) => {
  const statuses: Array<number> = []
  HttpApi.reflect(HttpApi.make("probe").add(HttpApiGroup.make("probe").add(HttpApiEndpoint.get("e", "/", { error }))), {
    onGroup: () => {},
    onEndpoint: ({ errors }) => statuses.push(...errors.keys())
  })
  return statuses
}

const errorClasses = Object.entries(Errors).flatMap(([name, value]) =>
  Schema.isSchema(value) && typeof value === "function" ? [{ name, errorClass: value }] : []
)

describe("statusOf", () => {
  it("finds every error class of the contract", () => {
    expect(errorClasses.map((c) => c.name)).toContain("InternalError")
    expect(errorClasses.length).toBeGreaterThanOrEqual(27)
  })

  it.each(errorClasses)("is the status the API answers $name with", ({ errorClass }) => {
    // An instance without running the constructor, which would want each class's own fields.
    const error: object = Object.create(errorClass.prototype)
    expect([statusOf(error)]).toEqual(apiStatusOf(errorClass))
  })

  it("reads constructed errors, and is 500 for anything that declares no status", () => {
    expect(statusOf(new Errors.NotFound())).toBe(404)
    expect(statusOf(new Errors.RateLimited({ retry_after: 1 }))).toBe(429)
    expect(statusOf(new Errors.CertificateTaxIdMismatch())).toBe(422)
    expect(statusOf(new Error("not a contract error"))).toBe(500)
    expect(statusOf({})).toBe(500)
  })
})
