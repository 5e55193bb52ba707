/**
 * What a page shows when the client refuses a call's arguments before sending it: the server's
 * `invalid_request`, its issues on the fields of the form (`registration.address.state`), as the
 * server would have named them, so that the page marks the same field either way.
 */
import { describe, expect, it } from "@effect/vitest"
import { failureOf } from "../../dashboard/src/api.js"
import { createClient } from "../../src/client/index.js"

describe("the dashboard's failure of a refused call", () => {
  it("is invalid_request, with the body's own field paths", async () => {
    const api = createClient({ baseUrl: "http://127.0.0.1:1", token: `etd_sess_${"a".repeat(32)}` })
    const error = await api.tenants
      .update({
        params: { tenantId: "ten_00000000000000000000000000" },
        // Cast past the types: a form's empty field reaches the call as it is.
        payload: { registration: { legal_name: "" } } as never
      })
      .then(() => undefined, (refused: unknown) => refused)
    const failure = failureOf(error)
    expect(failure.code).toBe("invalid_request")
    expect(failure.issues?.map((issue) => issue.path.join("."))).toContain("registration.legal_name")
  })
})
