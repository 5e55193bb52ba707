/**
 * A document's cancellation on its detail (SPEC §6): what was asked and the authority's answer, the
 * control that asks for it (owners and admins), and, once the authority refused a cancellation as
 * past its deadline (E0822), the request for the municipality's analysis (event e101103) that the
 * API takes as `analysis: true` on the same call.
 */
import type { ComponentChildren } from "preact"
import { useState } from "preact/hooks"
import { formatDateTime, texts, useLang, useTexts } from "../i18n.js"
import { Badge, Dialog, ErrorNotice, useAction } from "../ui.js"
import { useWorkspace } from "../workspace.js"
import type { AnyDocument } from "./DocumentTexts.js"

type ReasonCode = "issue_error" | "service_not_provided" | "other"

const REASON_CODES: ReadonlyArray<ReasonCode> = ["issue_error", "service_not_provided", "other"]
const REASON_MIN = 15
const REASON_MAX = 255
/** The national refusal of a cancellation past the municipality's deadline: the analysis is the way on. */
const PAST_DEADLINE = "E0822"

const text = texts({
  en: {
    cancellation: "Cancellation",
    requestKind: "Request",
    kindPlain: "cancellation by the issuer (e101101)",
    kindAnalysis: "analysis by the municipality (e101103)",
    kindGoods: "cancellation by the issuer (event 110111)",
    reasonCode: "Reason",
    reason: "Explanation",
    cancelState: "State",
    cancelPending: "waiting for the authority",
    cancelInAnalysis: "in analysis",
    cancelDone: "cancelled",
    cancelRefused: "refused by the authority",
    requestedAt: "Requested at",
    cancelledAt: "Cancelled at",
    protocol: "Protocol",
    cancelError: "Authority's refusal",
    cancel: "Cancel document",
    cancelNote:
      "Cancelling sends a request to the tax authority, which may refuse it (for example past its deadline). The document stays authorized until the authority confirms.",
    developerNote: "Only owners and admins cancel documents; your role in this tenant is developer.",
    lateNote:
      "The authority refused the cancellation because the municipality's deadline for it has passed (E0822). You can ask the municipality to analyse the cancellation instead: the document stays authorized until it decides.",
    askAnalysis: "Ask for the municipality's analysis",
    developerAnalysisNote: "Only owners and admins ask for the analysis; your role in this tenant is developer.",
    cancelTitle: "Cancel document no. {number}",
    analysisTitle: "Ask for the analysis of the cancellation of document no. {number}",
    reason_issue_error: "Error in the issue",
    reason_service_not_provided: "Service not provided",
    reason_other: "Other",
    reasonHint: "Between {min} and {max} characters; it goes to the authority with the request.",
    counter: "{count} of {max} characters",
    tooShort: "Write at least {min} characters.",
    keep: "Keep the document",
    confirmCancel: "Request cancellation",
    confirmAnalysis: "Request analysis",
    sending: "Sending…"
  },
  pt: {
    cancellation: "Cancelamento",
    requestKind: "Pedido",
    kindPlain: "cancelamento pelo emitente (e101101)",
    kindAnalysis: "análise fiscal pelo município (e101103)",
    kindGoods: "cancelamento pelo emitente (evento 110111)",
    reasonCode: "Motivo",
    reason: "Justificativa",
    cancelState: "Andamento",
    cancelPending: "aguardando a autoridade",
    cancelInAnalysis: "em análise",
    cancelDone: "cancelado",
    cancelRefused: "recusado pela autoridade",
    requestedAt: "Solicitado em",
    cancelledAt: "Cancelado em",
    protocol: "Protocolo",
    cancelError: "Recusa da autoridade",
    cancel: "Cancelar documento",
    cancelNote:
      "O cancelamento é um pedido à autoridade tributária, que pode recusá-lo (por exemplo, fora do prazo). O documento continua autorizado até a autoridade confirmar.",
    developerNote: "Só proprietários e administradores cancelam documentos; seu papel nesta conta é desenvolvedor.",
    lateNote:
      "A autoridade recusou o cancelamento porque o prazo do município para ele terminou (E0822). Você pode pedir ao município a análise do cancelamento: o documento continua autorizado até a decisão.",
    askAnalysis: "Solicitar análise do município",
    developerAnalysisNote:
      "Só proprietários e administradores solicitam a análise; seu papel nesta conta é desenvolvedor.",
    cancelTitle: "Cancelar o documento nº {number}",
    analysisTitle: "Solicitar a análise do cancelamento do documento nº {number}",
    reason_issue_error: "Erro na emissão",
    reason_service_not_provided: "Serviço não prestado",
    reason_other: "Outros",
    reasonHint: "Entre {min} e {max} caracteres; vai para a autoridade junto com o pedido.",
    counter: "{count} de {max} caracteres",
    tooShort: "Escreva pelo menos {min} caracteres.",
    keep: "Manter o documento",
    confirmCancel: "Solicitar cancelamento",
    confirmAnalysis: "Solicitar análise",
    sending: "Enviando…"
  }
})

const Fact = ({ label, children }: { readonly label: string; readonly children: ComponentChildren }) => (
  <div>
    <dt>{label}</dt>
    <dd>{children}</dd>
  </div>
)

/** The cancellation's facts, then what may be asked next: a cancellation, or its analysis after E0822. */
export const CancellationSection = ({ document, onCancelled }: {
  readonly document: AnyDocument
  readonly onCancelled: (document: AnyDocument) => void
}) => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { canManage } = useWorkspace()
  const [asking, setAsking] = useState<"cancel" | "analysis" | undefined>(undefined)
  const { cancellation } = document
  const pastDeadline = document.status === "authorized" && cancellation?.error?.code === PAST_DEADLINE
  return (
    <>
      {cancellation !== null && (
        <>
          <h2>{t("cancellation")}</h2>
          <dl class="facts">
            <Fact label={t("cancelState")}>
              {cancellation.cancelled_at !== null
                ? <Badge tone="muted">{t("cancelDone")}</Badge>
                : cancellation.error !== null
                ? <Badge tone="bad">{t("cancelRefused")}</Badge>
                : document.status === "cancellation_in_analysis"
                ? <Badge tone="warn">{t("cancelInAnalysis")}</Badge>
                : <Badge tone="warn">{t("cancelPending")}</Badge>}
            </Fact>
            <Fact label={t("requestKind")}>
              {document.type !== "service_invoice"
                ? t("kindGoods")
                : cancellation.analysis === true
                ? t("kindAnalysis")
                : t("kindPlain")}
            </Fact>
            {document.type === "service_invoice" && (
              <Fact label={t("reasonCode")}>{t(`reason_${cancellation.reason_code}`)}</Fact>
            )}
            <Fact label={t("reason")}>{cancellation.reason}</Fact>
            <Fact label={t("requestedAt")}>{formatDateTime(cancellation.requested_at, lang)}</Fact>
            {cancellation.cancelled_at !== null && (
              <Fact label={t("cancelledAt")}>{formatDateTime(cancellation.cancelled_at, lang)}</Fact>
            )}
            {cancellation.protocol !== null && (
              <Fact label={t("protocol")}>
                <span class="mono">{cancellation.protocol}</span>
              </Fact>
            )}
            {cancellation.error !== null && (
              <Fact label={t("cancelError")}>
                <span class="mono">{cancellation.error.code}</span> {cancellation.error.message}
              </Fact>
            )}
          </dl>
        </>
      )}

      {document.status === "authorized" && (pastDeadline
        ? (
          <>
            {cancellation === null && <h2>{t("cancellation")}</h2>}
            <p class="notice warning">{t("lateNote")}</p>
            {canManage
              ? (
                <button type="button" class="danger" onClick={() => setAsking("analysis")}>
                  {t("askAnalysis")}
                </button>
              )
              : <p class="notice info">{t("developerAnalysisNote")}</p>}
          </>
        )
        : (
          <>
            {cancellation === null && <h2>{t("cancellation")}</h2>}
            <p class="hint">{t("cancelNote")}</p>
            {canManage
              ? <button type="button" class="danger" onClick={() => setAsking("cancel")}>{t("cancel")}</button>
              : <p class="notice info">{t("developerNote")}</p>}
          </>
        ))}

      {asking !== undefined && (
        <CancelDialog
          document={document}
          analysis={asking === "analysis"}
          onClose={() => setAsking(undefined)}
          onCancelled={(cancelled) => {
            setAsking(undefined)
            onCancelled(cancelled)
          }}
        />
      )}
    </>
  )
}

/** The reason, asked before anything is sent; `analysis` asks for the municipality's analysis instead. */
const CancelDialog = ({ document, analysis, onClose, onCancelled }: {
  readonly document: AnyDocument
  readonly analysis: boolean
  readonly onClose: () => void
  readonly onCancelled: (document: AnyDocument) => void
}) => {
  const t = useTexts(text)
  const { api, tenant } = useWorkspace()
  const action = useAction()
  const [reasonCode, setReasonCode] = useState<ReasonCode>(
    document.cancellation?.reason_code ?? (document.type === "service_invoice" ? "issue_error" : "other")
  )
  const [reason, setReason] = useState(analysis ? document.cancellation?.reason ?? "" : "")
  const [tried, setTried] = useState(false)
  // The API trims the reason before counting it.
  const length = reason.trim().length
  const tooShort = length < REASON_MIN
  const submit = (event: Event) => {
    event.preventDefault()
    setTried(true)
    if (tooShort) return
    action.run(() =>
      api.documents.cancel({
        params: { tenantId: tenant.id, docId: document.id },
        payload: { reason_code: reasonCode, reason: reason.trim(), ...(analysis ? { analysis: true } : {}) }
      })
    ).then((cancelled) => cancelled !== undefined && onCancelled(cancelled))
  }
  return (
    <Dialog
      title={t(analysis ? "analysisTitle" : "cancelTitle", { number: document.number })}
      onClose={onClose}
      busy={action.busy}
    >
      <form onSubmit={submit} noValidate>
        <p class="notice warning">{analysis ? t("lateNote") : t("cancelNote")}</p>
        {/* A goods invoice's event carries the explanation only (its reason code is kept, not sent). */}
        {document.type === "service_invoice" && (
          <label>
            {t("reasonCode")}
            <select value={reasonCode} onChange={(event) => setReasonCode(event.currentTarget.value as ReasonCode)}>
              {REASON_CODES.map((code) => <option key={code} value={code}>{t(`reason_${code}`)}</option>)}
            </select>
          </label>
        )}
        <label>
          {t("reason")}
          <textarea
            rows={4}
            maxLength={REASON_MAX}
            required
            aria-describedby="cancel-reason-hint cancel-reason-count"
            aria-invalid={tried && tooShort ? "true" : undefined}
            value={reason}
            onInput={(event) => setReason(event.currentTarget.value)}
          />
        </label>
        <p class="hint counter">
          <span id="cancel-reason-hint">{t("reasonHint", { min: REASON_MIN, max: REASON_MAX })}</span>{" "}
          <span id="cancel-reason-count">{t("counter", { count: length, max: REASON_MAX })}</span>
        </p>
        {tried && tooShort && <p class="notice error" role="alert">{t("tooShort", { min: REASON_MIN })}</p>}
        {action.failure && <ErrorNotice failure={action.failure} />}
        <div class="actions">
          <button type="button" onClick={onClose}>{t("keep")}</button>
          <button type="submit" class="danger" disabled={action.busy}>
            {action.busy ? t("sending") : t(analysis ? "confirmAnalysis" : "confirmCancel")}
          </button>
        </div>
      </form>
    </Dialog>
  )
}
