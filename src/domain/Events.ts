/**
 * The kinds of event a tenant can receive (SPEC §9). Their payload schemas live with the webhooks
 * (webhooks/Events.ts); the list is here because every module that records events names them.
 */
import { Schema } from "effect"

export const eventTypes = [
  "document.authorized",
  "document.rejected",
  "document.failed",
  "document.cancelled",
  "document.cancellation_failed",
  "api_key.exposed",
  "credential.expiring",
  "quota.threshold"
] as const

export const EventType = Schema.Literals(eventTypes)
export type EventType = typeof EventType.Type
