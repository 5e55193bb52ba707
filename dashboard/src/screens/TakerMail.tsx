/**
 * A document's e-mail to its taker (the note with its DANFSe and XML), as the document's
 * `taker_notification` tells it: whether it went out, was given up and why, or why none is sent.
 */
import { formatDateTime, texts, useLang, useTexts } from "../i18n.js"
import { Badge } from "../ui.js"
import type { Document } from "./DocumentTexts.js"

type Notification = NonNullable<Document["taker_notification"]>

const text = texts({
  en: {
    title: "E-mail to the taker",
    state: "State",
    status_pending: "sending",
    status_sent: "sent",
    status_failed: "not delivered",
    status_disabled: "not sent",
    status_no_address: "not sent",
    status_test_recipient: "not sent",
    status_superseded: "not sent",
    why: "Why",
    why_disabled: "turned off in Company",
    why_no_address: "the taker has no e-mail",
    why_test_recipient: "a test note is e-mailed only to your team's confirmed addresses",
    why_superseded: "the note was cancelled or replaced first",
    which: "Mail",
    kind_authorized: "the authorized note",
    kind_cancelled: "the cancellation",
    to: "To",
    attempts: "Attempts",
    sentAt: "Sent at",
    lastError: "Mail server's answer"
  },
  pt: {
    title: "E-mail ao tomador",
    state: "Situação",
    status_pending: "enviando",
    status_sent: "enviado",
    status_failed: "não entregue",
    status_disabled: "não enviado",
    status_no_address: "não enviado",
    status_test_recipient: "não enviado",
    status_superseded: "não enviado",
    why: "Motivo",
    why_disabled: "desativado em Empresa",
    why_no_address: "o tomador não tem e-mail",
    why_test_recipient: "uma nota de teste só é enviada aos e-mails confirmados da sua equipe",
    why_superseded: "a nota foi cancelada ou substituída antes",
    which: "Mensagem",
    kind_authorized: "a nota autorizada",
    kind_cancelled: "o cancelamento",
    to: "Para",
    attempts: "Tentativas",
    sentAt: "Enviado em",
    lastError: "Resposta do servidor de e-mail"
  }
})

const tones = {
  pending: "info",
  sent: "ok",
  failed: "bad",
  disabled: "muted",
  no_address: "muted",
  test_recipient: "muted",
  superseded: "muted"
} as const

export const TakerMail = (
  { notification, email }: { readonly notification: Notification; readonly email: string | undefined }
) => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { status } = notification
  return (
    <>
      <h2>{t("title")}</h2>
      <dl class="facts">
        <div>
          <dt>{t("state")}</dt>
          <dd>
            <Badge tone={tones[status]}>{t(`status_${status}`)}</Badge>
          </dd>
        </div>
        {(status === "disabled" || status === "no_address" || status === "test_recipient" || status === "superseded") &&
          (
            <div>
              <dt>{t("why")}</dt>
              <dd>{t(`why_${status}`)}</dd>
            </div>
          )}
        <div>
          <dt>{t("which")}</dt>
          <dd>{t(`kind_${notification.kind}`)}</dd>
        </div>
        {email !== undefined && status !== "no_address" && (
          <div>
            <dt>{t("to")}</dt>
            <dd class="mono">{email}</dd>
          </div>
        )}
        {(status === "pending" || status === "sent" || status === "failed") && (
          <div>
            <dt>{t("attempts")}</dt>
            <dd>{notification.attempts}</dd>
          </div>
        )}
        {notification.sent_at !== null && (
          <div>
            <dt>{t("sentAt")}</dt>
            <dd>{formatDateTime(notification.sent_at, lang)}</dd>
          </div>
        )}
        {notification.last_error !== null && (
          <div>
            <dt>{t("lastError")}</dt>
            <dd class="mono">{notification.last_error}</dd>
          </div>
        )}
      </dl>
    </>
  )
}
