/** The payment provider's events (SPEC §10): what the billing contract and its repository share. */
import { Schema } from "effect"

/** What became of a delivery; every one but `duplicate` is recorded with its `webhook-id`. */
export const WebhookOutcome = Schema.Literals([
  "applied",
  "duplicate",
  "ignored_unknown_type",
  "ignored_unknown_tenant",
  "ignored_stale"
])
export type WebhookOutcome = typeof WebhookOutcome.Type
