/**
 * `?ending_before=<id>` on the lists (Stripe's semantics, beside SPEC §2's `starting_after`): the
 * page of items just before the id in the list's order, still in that order; `has_more` says
 * whether more items come before them and `next_cursor` (the page's first id) continues backwards.
 * Both cursors at once are `400 invalid_request`. Checked on a newest-first list (documents, API
 * keys) and on an ascending one (members, by user id).
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { addMember, field } from "../support/accounts.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { consultingService } from "../support/samples.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"
import { expectError, issuesOf, jsonObject } from "./helpers.js"

const invoice = (reference: string) => ({
  type: "service_invoice",
  reference,
  taker: { tax_id: "52998224725", name: "Maria da Silva" },
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" }
})

interface Page {
  readonly ids: ReadonlyArray<string>
  readonly has_more: unknown
  readonly next_cursor: unknown
}

/** GET a list as raw JSON: its ids, `has_more` and `next_cursor`. */
const page = (url: string, token: string) =>
  Effect.map(rawRequest("GET", url, { token }), (response): Page => {
    expect(response.status, `${url}: ${response.text}`).toBe(200)
    const data = field(response.json, "data")
    return {
      ids: Array.isArray(data) ? data.map((item) => String(field(item, "id") ?? field(field(item, "user"), "id"))) : [],
      has_more: field(response.json, "has_more"),
      next_cursor: field(response.json, "next_cursor")
    }
  })

/**
 * Checks `ending_before` on a list whose order is `ordered` (all its items): pages just before
 * the last item, walking back to the start; the boundaries (before the first item, exactly `limit`
 * items left, fewer than `limit`); and the refusal of both cursors together.
 */
const checkEndingBefore = (path: string, token: string, ordered: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    expect(ordered.length).toBe(5)
    const [a, b, c, d, e] = ordered as [string, string, string, string, string]
    const sep = path.includes("?") ? "&" : "?"
    const at = (query: string) => page(`${path}${sep}${query}`, token)

    // Walking back from the last item, two at a time, each page in the list's own order.
    const back1 = yield* at(`limit=2&ending_before=${e}`)
    expect(back1).toEqual({ ids: [c, d], has_more: true, next_cursor: c })
    const back2 = yield* at(`limit=2&ending_before=${back1.next_cursor}`)
    expect(back2).toEqual({ ids: [a, b], has_more: false, next_cursor: null })

    // Nothing comes before the first item.
    expect(yield* at(`ending_before=${a}`)).toEqual({ ids: [], has_more: false, next_cursor: null })
    // Exactly `limit` items before: a full page and no phantom page before it.
    expect(yield* at(`limit=3&ending_before=${d}`)).toEqual({ ids: [a, b, c], has_more: false, next_cursor: null })
    // One more than `limit`: the nearest ones, and more before.
    expect(yield* at(`limit=3&ending_before=${e}`)).toEqual({ ids: [b, c, d], has_more: true, next_cursor: b })
    // Fewer than `limit`, with the default page size.
    expect(yield* at(`ending_before=${c}`)).toEqual({ ids: [a, b], has_more: false, next_cursor: null })

    // Back and forth meet: forwards after b is what backwards before e ends with.
    const forwards = yield* at(`limit=2&starting_after=${b}`)
    expect(forwards).toEqual({ ids: [c, d], has_more: true, next_cursor: d })

    // Both cursors at once name two pages: refused, naming the parameter.
    const both = yield* rawRequest("GET", `${path}${sep}starting_after=${b}&ending_before=${e}`, { token })
    const body = expectError(both, 400, "invalid_request")
    expect(issuesOf(body).map((issue) => issue.path)).toContainEqual(["ending_before"])
    expect(jsonObject(both)["message"]).toContain("starting_after and ending_before")
  })

for (const database of testDatabases) {
  layer(makeTestApp(database), { timeout: 120_000, excludeTestServices: true })(`ending_before (${database})`, (it) => {
    it.effect("documents: the page just before an id, newest first, on the tenant path and the shorthand", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const key = yield* createKey(owner)
        const created: Array<string> = []
        for (const i of [1, 2, 3, 4, 5]) {
          const response = yield* rawRequest("POST", "/v1/documents", { token: key.token, body: invoice(`eb-${i}`) })
          expect(response.status, response.text).toBe(202)
          created.push(String(field(response.json, "id")))
        }
        const newestFirst = [...created].reverse()
        expect((yield* page("/v1/documents", key.token)).ids).toEqual(newestFirst)
        yield* checkEndingBefore(`/v1/tenants/${owner.tenantId}/documents`, key.token, newestFirst)
        yield* checkEndingBefore("/v1/documents", key.token, newestFirst)
        // With a filter: the page before an id among the matching documents only.
        expect(yield* page(`/v1/documents?reference=eb-4&ending_before=${newestFirst[4]}`, key.token)).toEqual({
          ids: [created[3]],
          has_more: false,
          next_cursor: null
        })
        // The typed client sends it too.
        const api = yield* client(key.token)
        const typed = yield* api.documents.listForKey({ query: { limit: 1, ending_before: newestFirst[1]! } })
        expect(typed.data.map((document) => document.id)).toEqual([newestFirst[0]])
        expect(typed.has_more).toBe(false)
        // A malformed id is a validation error, as for starting_after.
        expectError(
          yield* rawRequest("GET", "/v1/documents?ending_before=not-a-document-id", { token: key.token }),
          400,
          "invalid_request"
        )
      }))

    it.effect("API keys: the page just before an id, newest first", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const created: Array<string> = []
        for (let i = 0; i < 5; i++) created.push((yield* createKey(owner, "test", ["documents:read"])).api_key.id)
        const path = `/v1/tenants/${owner.tenantId}/api-keys`
        const newestFirst = [...created].reverse()
        expect((yield* page(path, owner.session)).ids).toEqual(newestFirst)
        yield* checkEndingBefore(path, owner.session, newestFirst)
      }))

    it.effect("members: the page just before an id in an ascending list", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        for (const role of ["admin", "developer", "developer", "developer"] as const) yield* addMember(owner, role)
        const path = `/v1/tenants/${owner.tenantId}/members`
        const ascending = (yield* page(path, owner.session)).ids
        expect([...ascending].sort()).toEqual(ascending)
        yield* checkEndingBefore(path, owner.session, ascending)
      }))

    it.effect("webhook endpoints and deliveries refuse both cursors as well", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const key = yield* createKey(owner)
        const endpoints = `/v1/tenants/${owner.tenantId}/webhook-endpoints`
        const both = (path: string, prefix: string) =>
          rawRequest(
            "GET",
            `${path}?starting_after=${prefix}_${"0".repeat(26)}&ending_before=${prefix}_${"1".repeat(26)}`,
            {
              token: key.token
            }
          )
        expectError(yield* both(endpoints, "whe"), 400, "invalid_request")
        expectError(yield* both(`${endpoints}/whe_${"0".repeat(26)}/deliveries`, "dlv"), 400, "invalid_request")
        // One cursor alone is served (an empty list here).
        expect(yield* page(`${endpoints}?ending_before=whe_${"1".repeat(26)}`, key.token)).toEqual({
          ids: [],
          has_more: false,
          next_cursor: null
        })
      }))
  })
}
