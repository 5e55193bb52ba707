/**
 * The sefin adapter's event requests (SefinAdapter.ts builds it): the cancellation (e101101), the
 * request for the municipality's analysis of a late cancellation (e101103) and the reading of the
 * municipality's decision (e105104 granted, e105105 refused) by the note's events.
 *
 * The request's form (EventRequest.ts) is the one production takes, until the system refuses it
 * with an E1235 that names `nPedRegEvento` or the Id's pattern: then the same request goes once
 * more in the other form, and that form is kept for this environment from then on. It is kept in
 * memory: each process learns it again from one refused request after a restart, which costs one
 * extra round trip and nothing else (the refusal registers nothing), so it needs no table. The
 * switch is logged as a warning, with the codes and the element only.
 */
import { Effect, Option, Result } from "effect"
import type { Environment } from "../../domain/Principal.js"
import {
  type AnalysisDecision,
  type AuthorityRejected,
  type AuthorityTimeout,
  type AuthorityUnavailable,
  type CancellationRequest,
  type RequestNotSent,
  type TaxAuthority
} from "../TaxAuthority.js"
import {
  ANALYSIS_GRANTED_EVENT_TYPE,
  ANALYSIS_REFUSED_EVENT_TYPE,
  buildCancellationRequest,
  cancellationReasonCode,
  readEvento
} from "./CancellationEvent.js"
import { dpsRefusalOf, refused } from "./DpsRefusals.js"
import {
  type EventForm,
  otherEventForm,
  PRODUCTION_EVENT_FORM,
  refusalBlamesEventForm,
  validateEventRequest
} from "./EventRequest.js"
import type { SefinClient } from "./SefinClient.js"
import { type SefinRefused, type SefinTimeout, SefinUnavailable } from "./SefinErrors.js"
import type { ClientIdentity } from "./SefinTransport.js"

export interface SefinEventsDeps {
  readonly environment: Environment
  readonly tpAmb: 1 | 2
  readonly client: SefinClient
  readonly identityOf: (tenantId: CancellationRequest["tenantId"]) => Effect.Effect<ClientIdentity, RequestNotSent>
  readonly sign: (xml: string, identity: ClientIdentity) => Effect.Effect<string, RequestNotSent>
  readonly transportError: (
    error: SefinUnavailable | SefinTimeout
  ) => Effect.Effect<never, AuthorityUnavailable | AuthorityTimeout>
  readonly rejectionOf: (refused: SefinRefused) => AuthorityRejected
  readonly alreadyCancelledCode: string
}

/** The national system's code for a schema failure (README of the reference files). */
const SCHEMA_FAILURE = "E1235"

export const makeSefinEvents = (deps: SefinEventsDeps) => {
  const { client, tpAmb } = deps
  // Per environment: one adapter is built for each.
  let form: EventForm = PRODUCTION_EVENT_FORM

  const requestOf = (request: CancellationRequest, inForm: EventForm) =>
    buildCancellationRequest({
      tpAmb,
      requestedAt: request.requestedAt,
      issuerTaxId: request.issuerTaxId,
      accessKey: request.accessKey,
      reasonCode: cancellationReasonCode[request.reasonCode],
      reason: request.reason,
      form: inForm,
      analysis: request.analysis
    })

  const blamesForm = (error: SefinRefused) =>
    error.errors.some((e) =>
      e.code === SCHEMA_FAILURE && refusalBlamesEventForm([e.message, e.complement ?? ""].join(" "))
    )

  /** Signs and sends the request in `inForm`; the refusal comes back as a value, so the caller may retry. */
  const send = (identity: ClientIdentity, request: CancellationRequest, inForm: EventForm) =>
    Effect.gen(function*() {
      const signed = yield* deps.sign(requestOf(request, inForm).xml, identity)
      return yield* Effect.result(client.registerEvent(identity, request.accessKey, signed))
    })

  const cancel: TaxAuthority["cancel"] = (request) =>
    Effect.gen(function*() {
      const identity = yield* deps.identityOf(request.tenantId)
      const { requestedAt } = request
      const status = request.analysis === true ? "in_analysis" as const : "cancelled" as const
      const tried = form
      let sent = yield* send(identity, request, tried)
      if (Result.isFailure(sent) && sent.failure._tag === "SefinRefused" && blamesForm(sent.failure)) {
        const other = otherEventForm(tried)
        yield* Effect.logWarning(
          "the national NFS-e system refused the event request's form; sending it in the other",
          {
            "authority.environment": deps.environment,
            "event.form.refused": tried,
            "event.form.retried": other,
            codes: sent.failure.errors.map((e) => e.code).join(",")
          }
        )
        sent = yield* send(identity, request, other)
        if (Result.isSuccess(sent) || !(sent.failure._tag === "SefinRefused" && blamesForm(sent.failure))) {
          // The other form got past the schema: it is the one this environment takes.
          form = other
        }
      }
      if (Result.isSuccess(sent)) {
        const registered = readEvento(sent.success.eventXml)
        return Result.isSuccess(registered)
          ? { protocol: registered.success.id, status, cancelledAt: new Date(registered.success.processedAt) }
          : { protocol: null, status, cancelledAt: requestedAt }
      }
      const error = sent.failure
      if (error._tag !== "SefinRefused") return yield* deps.transportError(error)
      if (status === "cancelled" && error.errors.some((e) => e.code === deps.alreadyCancelledCode)) {
        return { protocol: null, status, cancelledAt: requestedAt }
      }
      return yield* deps.rejectionOf(error)
    })

  /** The event this request would be, checked against the schema we ship (its signature comes later). */
  const cancellationRequirementsFor: TaxAuthority["cancellationRequirementsFor"] = (request) =>
    Result.match(validateEventRequest(requestOf(request, form).xml), {
      onSuccess: () => Effect.void,
      onFailure: (violation) => Effect.fail(refused(violation.messages.map((message) => dpsRefusalOf(message))))
    })

  /** The note's decision events, granted first: the reconciliation path, as an integrator polls. */
  const analysisDecision: TaxAuthority["analysisDecision"] = (request) =>
    Effect.gen(function*() {
      const identity = yield* deps.identityOf(request.tenantId)
      for (
        const [eventType, granted] of [[ANALYSIS_GRANTED_EVENT_TYPE, true], [
          ANALYSIS_REFUSED_EVENT_TYPE,
          false
        ]] as const
      ) {
        const found = yield* client.findEvent(identity, request.accessKey, eventType, 1)
        if (Option.isNone(found)) continue
        const event = readEvento(found.value.eventXml)
        if (Result.isFailure(event)) continue
        return Option.some<AnalysisDecision>({
          granted,
          decidedAt: new Date(event.success.processedAt),
          code: `E${eventType}`,
          message: event.success.request.cancellation?.reason ??
            (granted
              ? "Cancellation granted by the municipality's analysis."
              : "Cancellation refused by the municipality's analysis.")
        })
      }
      return Option.none()
    }).pipe(
      Effect.catchTags({
        SefinUnavailable: deps.transportError,
        SefinTimeout: deps.transportError,
        // A query refused with an error list is not an answer about the events: ask again later.
        SefinRefused: (refusal) =>
          deps.transportError(
            new SefinUnavailable({ message: deps.rejectionOf(refusal).message, status: refusal.status })
          )
      })
    )

  return { cancel, cancellationRequirementsFor, analysisDecision }
}
