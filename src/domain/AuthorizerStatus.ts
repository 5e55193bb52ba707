/**
 * What the service last heard from each state's authorizer (SEFAZ, SVRS, SVAN) through its status
 * service (NfeStatusServico): shown in `/readyz` and exported as a metric, for the operators. A
 * paused or unreachable authorizer does not make the instance unready: its notes wait in the queue.
 */
import { Schema } from "effect"
import { GoodsInvoiceType } from "./GoodsInvoice.js"
import { Environment } from "./Principal.js"
import { DateTime } from "./Time.js"

export const AuthorizerState = Schema.Literals(["in_operation", "paused", "unreachable", "no_certificate"])
export type AuthorizerState = typeof AuthorizerState.Type

export const AuthorizerStatus = Schema.Struct({
  environment: Environment,
  state: Schema.String.annotate({ description: "The emitters' state (UF) whose authorizer this is." }),
  type: GoodsInvoiceType.annotate({
    description: "The notes it authorizes: NF-e or NFC-e (their authorizers may differ)."
  }),
  status: AuthorizerState.annotate({
    description: "`in_operation` (107), `paused` (any other answer, 108 or 109 mostly), `unreachable` (no answer), " +
      "`no_certificate` (no emitter of the state has a certificate usable in this environment to ask with)."
  }),
  code: Schema.NullOr(Schema.String).annotate({ description: "The status service's `cStat`, when it answered." }),
  reason: Schema.NullOr(Schema.String).annotate({
    description: "Its `xMotivo`; null without an answer (why is in the service's log)."
  }),
  checked_at: DateTime
}).annotate({
  identifier: "AuthorizerStatus",
  description: "A state authorizer's last answer to the status service (NfeStatusServico)."
})
export type AuthorizerStatus = typeof AuthorizerStatus.Type
