/**
 * SPEC §11 fairness for issuance: a tenant's burst of documents against a slow authority holds at
 * most its cap of the issuance workers, so another tenant's document is submitted at once.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { TaxAuthorities } from "../../src/authority/TaxAuthority.js"
import { AppConfigTest } from "../../src/Config.js"
import { OutboxLive } from "../../src/credentials/MailSealingLive.js"
import { MigrationsLive } from "../../src/db/Database.js"
import { Transaction } from "../../src/db/Repository.js"
import type { NewDocument } from "../../src/documents/Api.js"
import { DocumentRepo } from "../../src/documents/DocumentRepo.js"
import { DocumentService } from "../../src/documents/DocumentService.js"
import { IssuanceQueue } from "../../src/documents/IssuanceQueue.js"
import { IssuanceWorkersLive } from "../../src/documents/IssuanceWorker.js"
import { asId, type TenantId } from "../../src/domain/Ids.js"
import { Readiness } from "../../src/runtime/Readiness.js"
import { TenantService } from "../../src/tenants/TenantService.js"
import { EventLogLive } from "../../src/webhooks/FanOut.js"
import { databaseLayer, testDatabases } from "../support/Databases.js"
import { completeRegistration } from "../support/registration.js"
import { consultingService } from "../support/samples.js"
import { makeScriptedAuthority, type SubmitScript } from "../support/ScriptedAuthority.js"
import { cnpj } from "../support/taxIds.js"
import { unusedGoodsAuthorities } from "../support/unusedGoodsAuthorities.js"

const payload: NewDocument = {
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria Tomadora" },
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" }
}

const newTenant = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const id = asId("tenant", `ten_issuefair${Math.random().toString(36).slice(2, 12)}`)
  yield* sql`
    INSERT INTO tenants (id, name, tax_id, monthly_quota, registration, created_at)
    VALUES (${id}, ${"Prestadora Ltda"}, ${cnpj()}, ${1000}, ${JSON.stringify(completeRegistration)}::jsonb,
      ${new Date()})`
  return id
})

for (const database of testDatabases) {
  layer(Layer.provideMerge(MigrationsLive, databaseLayer(database)), { timeout: 60_000 })(
    `issuance fairness (${database})`,
    (it) => {
      it.effect("a tenant's burst against a slow authority holds at most its cap of workers: another tenant's document goes through at once", () => {
        let noisyTenant = asId("tenant", "")
        let inFlight = 0
        let mostInFlight = 0
        // The noisy tenant's submissions take 3 s each; the others' are answered at once.
        const submit: SubmitScript = (submission, _, authorize) =>
          submission.tenantId !== noisyTenant ? authorize : Effect.sync(() => {
            inFlight += 1
            mostInFlight = Math.max(mostInFlight, inFlight)
          }).pipe(
            Effect.andThen(Effect.sleep("3 seconds")),
            Effect.andThen(authorize),
            Effect.ensuring(Effect.sync(() => inFlight -= 1))
          )
        const services = Layer.mergeAll(
          DocumentService.layer,
          DocumentRepo.layer,
          IssuanceQueue.layer,
          TenantService.layer,
          Readiness.layer
        ).pipe(
          Layer.provideMerge(EventLogLive),
          Layer.provideMerge(OutboxLive),
          Layer.provideMerge(Transaction.layer),
          Layer.provideMerge(Layer.succeed(
            TaxAuthorities,
            TaxAuthorities.fromEach({
              live: makeScriptedAuthority("production", { submit }).authority,
              test: makeScriptedAuthority("homologation", { submit }).authority
            })
          )),
          Layer.provideMerge(unusedGoodsAuthorities),
          Layer.provideMerge(AppConfigTest({
            queue: { instanceId: "issuance-fairness", shutdownGrace: Duration.millis(200) },
            issuance: { concurrency: 4, pollInterval: Duration.millis(20), lease: Duration.seconds(60) },
            fairness: { issuancePerTenant: 2, webhooksPerTenant: 4, webhooksPerEndpoint: 4 }
          }))
        )
        const issue = (tenantId: TenantId) =>
          Effect.flatMap(
            DocumentService,
            (documents) => documents.issue({ tenantId, environment: "test" }, payload, undefined)
          )
        return Effect.gen(function*() {
          noisyTenant = yield* newTenant
          const quiet = yield* newTenant
          yield* Effect.forEach(Array.from({ length: 10 }), () => issue(noisyTenant), { discard: true })
          const scope = yield* Scope.make()
          yield* Layer.buildWithScope(IssuanceWorkersLive, scope)
          for (let i = 0; i < 200 && inFlight < 2; i++) yield* Effect.sleep("10 millis")
          const issuedAt = Date.now()
          const document = yield* issue(quiet)
          const sql = yield* SqlClient.SqlClient
          let status = "pending"
          for (let i = 0; i < 300 && status !== "authorized"; i++) {
            yield* Effect.sleep("10 millis")
            const [row] = yield* sql<{ status: string }>`SELECT status FROM documents WHERE id = ${document.id}`
            status = row!.status
          }
          const waited = Date.now() - issuedAt
          yield* Scope.close(scope, Exit.void)
          // Without the cap the four workers all wait on the noisy tenant's submissions (3 s each).
          expect(status).toBe("authorized")
          expect(waited).toBeLessThan(1500)
          expect(mostInFlight).toBe(2)
        }).pipe(Effect.provide(services), TestClock.withLive)
      })
    }
  )
}
