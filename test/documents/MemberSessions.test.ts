/**
 * Documents on the tenant path for a member's session (SPEC §5, §15): every member lists and reads
 * both environments' documents, narrowed by `?environment=`; an owner or admin cancels (a live
 * document exactly as a live key would), a developer may not; a stranger's session finds nothing;
 * issuing stays with API keys. For a key, `?environment=` only narrows its own environment.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { makeApp } from "../../src/App.js"
import type { AppConfigShape } from "../../src/Config.js"
import type { NewDocument } from "../../src/documents/Api.js"
import { Document } from "../../src/domain/Document.js"
import { addMember, expectError, field } from "../support/accounts.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { consultingService } from "../support/samples.js"
import { asServiceDocument } from "../support/serviceDocument.js"
import {
  client,
  databaseLayer,
  httpServerTest,
  rawRequest,
  testConfig,
  type TestDatabase,
  testDatabases
} from "../support/TestApp.js"

const fast: Partial<AppConfigShape> = {
  loginRateLimit: { perMinute: 100_000 },
  rateLimit: { perSecond: 100_000, burst: 100_000 },
  queue: { instanceId: "t", shutdownGrace: Duration.seconds(1) },
  issuance: { concurrency: 4, pollInterval: Duration.millis(20), lease: Duration.seconds(60) },
  retry: { baseDelay: Duration.millis(10), maxDelay: Duration.millis(50), window: Duration.seconds(5) }
}

const appOn = (database: TestDatabase) =>
  makeApp(testConfig(fast), databaseLayer(database)).pipe(Layer.provideMerge(httpServerTest))

const decodeDocument = Schema.decodeUnknownSync(Schema.toCodecJson(Document))

const REASON = { reason_code: "issue_error", reason: "Wrong amount on the invoice, reissuing." } as const

const invoice = (reference: string): NewDocument => ({
  type: "service_invoice",
  reference,
  taker: { tax_id: "52998224725", name: "Maria da Silva" },
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" }
})

const documentsPath = (tenantId: string) => `/v1/tenants/${tenantId}/documents`

const issued = (token: string, tenantId: string, reference: string) =>
  Effect.map(rawRequest("POST", documentsPath(tenantId), { token, body: invoice(reference) }), (response) => {
    expect(response.status, response.text).toBe(202)
    return decodeDocument(response.json)
  })

/** Polls the document (with any token that reads it) until `done` holds. */
const settled = (token: string, tenantId: string, id: string, done: (document: Document) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 400; i++) {
      const response = yield* rawRequest("GET", `${documentsPath(tenantId)}/${id}`, { token })
      expect(response.status, response.text).toBe(200)
      const document = decodeDocument(response.json)
      if (done(document)) return document
      yield* Effect.sleep(Duration.millis(25))
    }
    return yield* Effect.die(new Error(`document ${id} did not settle`))
  })

const idsOf = (response: { readonly status: number; readonly text: string; readonly json: unknown }) => {
  expect(response.status, response.text).toBe(200)
  const data = field(response.json, "data")
  return Array.isArray(data) ? data.map((item) => String(field(item, "id"))) : []
}

/** A tenant with one live and one test document (test first, so live is the newest), and its members. */
const tenantWithDocuments = Effect.gen(function*() {
  const owner = yield* registerOwner("sessions")
  const live = yield* createKey(owner, "live")
  const test = yield* createKey(owner, "test")
  const testDocument = yield* issued(test.token, owner.tenantId, "T-1")
  const liveDocument = yield* issued(live.token, owner.tenantId, "L-1")
  const admin = yield* addMember(owner, "admin")
  const developer = yield* addMember(owner, "developer")
  return { owner, admin, developer, live, test, liveDocument, testDocument }
})

for (const database of testDatabases) {
  layer(appOn(database), { timeout: 120_000, excludeTestServices: true })(
    `documents for a member's session (${database})`,
    (it) => {
      it.effect("every member lists and reads both environments' documents; ?environment= narrows the list", () =>
        Effect.gen(function*() {
          const t = yield* tenantWithDocuments
          const both = [t.liveDocument.id, t.testDocument.id]
          for (const member of [t.owner, t.admin, t.developer]) {
            const path = documentsPath(t.owner.tenantId)
            expect(idsOf(yield* rawRequest("GET", path, { token: member.session }))).toEqual(both)
            expect(idsOf(yield* rawRequest("GET", `${path}?environment=live`, { token: member.session }))).toEqual([
              t.liveDocument.id
            ])
            expect(idsOf(yield* rawRequest("GET", `${path}?environment=test`, { token: member.session }))).toEqual([
              t.testDocument.id
            ])
            for (const document of [t.liveDocument, t.testDocument]) {
              const one = yield* rawRequest("GET", `${path}/${document.id}`, { token: member.session })
              expect(one.status, one.text).toBe(200)
              expect(decodeDocument(one.json)).toMatchObject({ id: document.id, environment: document.environment })
            }
          }
          // The typed client: the same method names for keys and sessions.
          const api = yield* client(t.developer.session)
          const page = yield* api.documents.list({
            params: { tenantId: t.owner.tenantId },
            query: { environment: "test" }
          })
          expect(page.data.map((d) => d.id)).toEqual([t.testDocument.id])
          const one = yield* api.documents.get({ params: { tenantId: t.owner.tenantId, docId: t.liveDocument.id } })
          expect(one.environment).toBe("live")
          expectError(
            yield* rawRequest("GET", `${documentsPath(t.owner.tenantId)}?environment=prod`, { token: t.owner.session }),
            400,
            "invalid_request"
          )
        }))

      it.effect("the other filters and pagination apply across both environments, newest first", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner("pages")
          const live = yield* createKey(owner, "live")
          const test = yield* createKey(owner, "test")
          // Alternating environments: one page of the merged list mixes them in creation order.
          const created: Array<Document> = []
          for (let i = 0; i < 5; i++) {
            created.push(yield* issued(i % 2 === 0 ? test.token : live.token, owner.tenantId, `R-${i}`))
          }
          const newestFirst = created.map((d) => d.id).reverse()
          const path = documentsPath(owner.tenantId)
          const first = yield* rawRequest("GET", `${path}?limit=2`, { token: owner.session })
          expect(idsOf(first)).toEqual(newestFirst.slice(0, 2))
          expect(field(first.json, "has_more")).toBe(true)
          const second = yield* rawRequest("GET", `${path}?limit=2&starting_after=${newestFirst[1]}`, {
            token: owner.session
          })
          expect(idsOf(second)).toEqual(newestFirst.slice(2, 4))
          const last = yield* rawRequest("GET", `${path}?limit=2&starting_after=${newestFirst[3]}`, {
            token: owner.session
          })
          expect(idsOf(last)).toEqual(newestFirst.slice(4))
          expect(field(last.json, "has_more")).toBe(false)
          const before = yield* rawRequest("GET", `${path}?limit=2&ending_before=${newestFirst[4]}`, {
            token: owner.session
          })
          expect(idsOf(before)).toEqual(newestFirst.slice(2, 4))
          expect(idsOf(yield* rawRequest("GET", `${path}?reference=R-3`, { token: owner.session }))).toEqual([
            created[3]!.id
          ])
          expect(idsOf(yield* rawRequest("GET", `${path}?reference=R-3&environment=test`, { token: owner.session })))
            .toEqual([])
          for (const document of created) {
            yield* settled(owner.session, owner.tenantId, document.id, (d) => d.status === "authorized")
          }
          expect(
            idsOf(yield* rawRequest("GET", `${path}?status=authorized&environment=live`, { token: owner.session }))
          )
            .toEqual([created[3]!.id, created[1]!.id])
          expect(idsOf(yield* rawRequest("GET", `${path}?status=rejected`, { token: owner.session }))).toEqual([])
        }))

      it.effect("for a key, ?environment= narrows its own environment: the other one is an empty page, never its data", () =>
        Effect.gen(function*() {
          const t = yield* tenantWithDocuments
          const path = documentsPath(t.owner.tenantId)
          expect(idsOf(yield* rawRequest("GET", path, { token: t.test.token }))).toEqual([t.testDocument.id])
          expect(idsOf(yield* rawRequest("GET", `${path}?environment=test`, { token: t.test.token }))).toEqual([
            t.testDocument.id
          ])
          const other = yield* rawRequest("GET", `${path}?environment=live`, { token: t.test.token })
          expect(idsOf(other)).toEqual([])
          expect(field(other.json, "has_more")).toBe(false)
          expect(idsOf(yield* rawRequest("GET", `${path}?environment=test`, { token: t.live.token }))).toEqual([])
          // A key still reads its own environment's document only.
          expectError(
            yield* rawRequest("GET", `${path}/${t.liveDocument.id}`, { token: t.test.token }),
            404,
            "not_found"
          )
          // The key-scoped shorthand is unchanged: the key's environment, and no environment filter.
          expect(idsOf(yield* rawRequest("GET", "/v1/documents", { token: t.live.token }))).toEqual([t.liveDocument.id])
        }))

      it.effect("a stranger's session gets 404; issuing stays with API keys (401 for a session)", () =>
        Effect.gen(function*() {
          const t = yield* tenantWithDocuments
          const stranger = yield* registerOwner("stranger")
          const path = documentsPath(t.owner.tenantId)
          expectError(yield* rawRequest("GET", path, { token: stranger.session }), 404, "not_found")
          expectError(
            yield* rawRequest("GET", `${path}/${t.liveDocument.id}`, { token: stranger.session }),
            404,
            "not_found"
          )
          expectError(
            yield* rawRequest("POST", `${path}/${t.liveDocument.id}/cancel`, { token: stranger.session, body: REASON }),
            404,
            "not_found"
          )
          // The stranger's own tenant does not have the document either.
          expectError(
            yield* rawRequest("GET", `${documentsPath(stranger.tenantId)}/${t.liveDocument.id}`, {
              token: stranger.session
            }),
            404,
            "not_found"
          )
          expectError(
            yield* rawRequest("POST", path, { token: t.owner.session, body: invoice("S-1") }),
            401,
            "invalid_api_key"
          )
          // Nor does the shorthand take a session.
          expectError(yield* rawRequest("GET", "/v1/documents", { token: t.owner.session }), 401, "invalid_api_key")
        }))

      it.effect("an owner or admin cancels from a session (a live document as a live key would); a developer gets 403 forbidden", () =>
        Effect.gen(function*() {
          const t = yield* tenantWithDocuments
          const tenantId = t.owner.tenantId
          const liveDocument = yield* settled(
            t.live.token,
            tenantId,
            t.liveDocument.id,
            (d) => d.status === "authorized"
          )
          const testDocument = yield* settled(
            t.test.token,
            tenantId,
            t.testDocument.id,
            (d) => d.status === "authorized"
          )
          const cancelPath = (id: string) => `${documentsPath(tenantId)}/${id}/cancel`

          const refused = yield* rawRequest("POST", cancelPath(liveDocument.id), {
            token: t.developer.session,
            body: REASON
          })
          expectError(refused, 403, "forbidden")
          expect((yield* settled(t.owner.session, tenantId, liveDocument.id, () => true)).status).toBe("authorized")

          // The admin cancels the live document through the typed client: the service's one path.
          const api = yield* client(t.admin.session)
          const requested = yield* api.documents.cancel({
            params: { tenantId, docId: liveDocument.id },
            payload: REASON
          })
          expect(requested).toMatchObject({ id: liveDocument.id, environment: "live", status: "cancel_requested" })
          expect(asServiceDocument(requested).cancellation).toMatchObject({
            ...REASON,
            cancelled_at: null,
            error: null
          })
          const cancelled = yield* settled(
            t.owner.session,
            tenantId,
            liveDocument.id,
            (d) => d.status !== "cancel_requested"
          )
          expect(cancelled.status).toBe("cancelled")
          // It reached the authority's production system, and the tenant's webhooks hear of it.
          const sql = yield* SqlClient.SqlClient
          const records = yield* sql<{ status: string }>`
          SELECT s.status FROM authority_sim_records s JOIN documents d ON d.submission_id = s.submission_id
          WHERE d.id = ${liveDocument.id} AND s.system = 'production'`
          expect(records.map((r) => r.status)).toEqual(["cancelled"])
          const events = yield* sql<{ type: string; environment: string }>`
          SELECT type, environment FROM events WHERE tenant_id = ${tenantId} AND data->'object'->>'id' = ${liveDocument.id}
          ORDER BY id`
          expect(events).toEqual([
            { type: "document.authorized", environment: "live" },
            { type: "document.cancelled", environment: "live" }
          ])

          // The owner cancels the test document too; a second cancellation is the usual 409.
          const owner = yield* rawRequest("POST", cancelPath(testDocument.id), { token: t.owner.session, body: REASON })
          expect(owner.status, owner.text).toBe(202)
          expectError(
            yield* rawRequest("POST", cancelPath(testDocument.id), { token: t.admin.session, body: REASON }),
            409,
            "invalid_state"
          )
          // A key with documents:cancel still cancels only its own environment's documents.
          const other = yield* issued(t.test.token, tenantId, "T-2")
          yield* settled(t.test.token, tenantId, other.id, (d) => d.status === "authorized")
          expectError(
            yield* rawRequest("POST", cancelPath(other.id), { token: t.live.token, body: REASON }),
            404,
            "not_found"
          )
        }))
    }
  )
}
