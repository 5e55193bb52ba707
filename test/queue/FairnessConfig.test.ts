/** The fairness caps' settings (SPEC §11): unset, a tenant gets half of an instance's pool, at least one. */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit } from "effect"
import { appConfig } from "../../src/Config.js"

const fairness = (env: Record<string, string>) =>
  Effect.runSyncExit(Effect.map(appConfig.parse(ConfigProvider.fromEnv({ env })), (config) => config.fairness))

describe("fairness settings", () => {
  it("default to half of each pool per tenant and sixteen per endpoint", () => {
    expect(fairness({})).toEqual(
      Exit.succeed({ issuancePerTenant: 16, webhooksPerTenant: 16, webhooksPerEndpoint: 16 })
    )
    expect(fairness({ WORKER_CONCURRENCY: "1", WEBHOOKS_CONCURRENCY: "9" }))
      .toEqual(Exit.succeed({ issuancePerTenant: 1, webhooksPerTenant: 5, webhooksPerEndpoint: 16 }))
  })

  it("take explicit caps, and refuse ones that are not positive integers", () => {
    expect(
      fairness({
        WORKER_TENANT_CONCURRENCY: "3",
        WEBHOOKS_TENANT_CONCURRENCY: "16",
        WEBHOOKS_ENDPOINT_CONCURRENCY: "2"
      })
    )
      .toEqual(Exit.succeed({ issuancePerTenant: 3, webhooksPerTenant: 16, webhooksPerEndpoint: 2 }))
    expect(Exit.isFailure(fairness({ WEBHOOKS_TENANT_CONCURRENCY: "0" }))).toBe(true)
    expect(Exit.isFailure(fairness({ WEBHOOKS_ENDPOINT_CONCURRENCY: "two" }))).toBe(true)
  })
})
