/**
 * What the webhook suites share: an app that delivers to receivers on this machine, quickly, with
 * rate limits out of the way, and a plain service invoice to trigger deliveries with.
 */
import { Duration } from "effect"
import type { AppConfigShape } from "../../src/Config.js"
import { consultingService } from "../support/samples.js"

export const webhookTestOverrides: Partial<AppConfigShape> = {
  loginRateLimit: { perMinute: 100_000 },
  rateLimit: { perSecond: 100_000, burst: 100_000 },
  queue: { instanceId: "t", shutdownGrace: Duration.seconds(1) },
  issuance: { concurrency: 2, pollInterval: Duration.millis(20), lease: Duration.seconds(60) },
  webhooks: {
    allowPrivateTargets: true,
    timeout: Duration.seconds(10),
    concurrency: 4,
    pollInterval: Duration.millis(20),
    lease: Duration.seconds(60)
  }
}

export const invoice = {
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria da Silva" },
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" }
}
