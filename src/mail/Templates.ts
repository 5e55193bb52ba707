/**
 * The mails' words, in Portuguese (pt-BR) and English: a subject, a plain-text body and a simple
 * HTML body (no images, no remote content) for each template. Pure, so every template and locale is
 * tested without a server.
 */
import type { AccountMessage, MailLocale } from "./Outbox.js"

export interface RenderedMail {
  readonly subject: string
  readonly text: string
  readonly html: string
}

export const escapeHtml = (text: string) =>
  text.replace(/&/gu, "&amp;").replace(/</gu, "&lt;").replace(/>/gu, "&gt;").replace(/"/gu, "&quot;")

export const when = (locale: MailLocale, date: Date) =>
  new Intl.DateTimeFormat(locale, { dateStyle: "long", timeStyle: "short", timeZone: "America/Sao_Paulo" })
    .format(date) + (locale === "pt-BR" ? " (horário de Brasília)" : " (Brasília time)")

const roleNames: Record<MailLocale, Record<string, string>> = {
  "pt-BR": { owner: "proprietário", admin: "administrador", developer: "desenvolvedor" },
  en: { owner: "owner", admin: "admin", developer: "developer" }
}

/** A mail's parts before layout: paragraphs, an optional button, and a closing line. */
interface Parts {
  readonly subject: string
  readonly greeting: string
  readonly paragraphs: ReadonlyArray<string>
  readonly action?: { readonly label: string; readonly link: string; readonly note: string }
  readonly closing: string
}

const hello = (locale: MailLocale, name: string | null) =>
  locale === "pt-BR" ? (name === null ? "Olá," : `Olá, ${name},`) : (name === null ? "Hello," : `Hello ${name},`)

const closing = (locale: MailLocale) =>
  locale === "pt-BR"
    ? "Se você não esperava esta mensagem, pode ignorá-la."
    : "If you did not expect this message, you can ignore it."

const partsOf = (locale: MailLocale, message: AccountMessage): Parts => {
  const pt = locale === "pt-BR"
  switch (message.template) {
    case "email_verification":
      return {
        subject: pt ? "Confirme seu endereço de e-mail" : "Confirm your e-mail address",
        greeting: hello(locale, message.name),
        paragraphs: [
          pt
            ? "Para concluir o cadastro, confirme que este endereço de e-mail é seu."
            : "To finish signing up, confirm that this e-mail address is yours."
        ],
        action: {
          label: pt ? "Confirmar e-mail" : "Confirm e-mail",
          link: message.link,
          note: pt
            ? `O link vale uma vez, até ${when(locale, message.expiresAt)}.`
            : `The link works once, until ${when(locale, message.expiresAt)}.`
        },
        closing: closing(locale)
      }
    case "password_reset":
      return {
        subject: pt ? "Redefinição de senha" : "Reset your password",
        greeting: hello(locale, message.name),
        paragraphs: [
          pt
            ? "Recebemos um pedido para redefinir a senha da sua conta. Ao definir a nova senha, todas as sessões abertas são encerradas."
            : "We received a request to reset your account's password. Setting a new password signs out every open session."
        ],
        action: {
          label: pt ? "Definir nova senha" : "Set a new password",
          link: message.link,
          note: pt
            ? `O link vale uma vez, até ${when(locale, message.expiresAt)}.`
            : `The link works once, until ${when(locale, message.expiresAt)}.`
        },
        closing: pt
          ? "Se não foi você quem pediu, ignore esta mensagem: sua senha continua a mesma."
          : "If you did not ask for this, ignore this message: your password stays the same."
      }
    case "invitation": {
      const role = roleNames[locale][message.role] ?? message.role
      const who = message.inviterName ?? (pt ? "Alguém" : "Someone")
      return {
        subject: pt ? `Convite para ${message.tenantName}` : `Invitation to ${message.tenantName}`,
        greeting: hello(locale, null),
        paragraphs: [
          pt
            ? `${who} convidou você para participar de ${message.tenantName} como ${role}.`
            : `${who} invited you to join ${message.tenantName} as ${role}.`
        ],
        action: {
          label: pt ? "Ver convite" : "View invitation",
          link: message.link,
          note: pt
            ? `O convite vale até ${when(locale, message.expiresAt)}.`
            : `The invitation is valid until ${when(locale, message.expiresAt)}.`
        },
        closing: closing(locale)
      }
    }
    case "tax_id_verified_elsewhere":
      return {
        subject: pt
          ? `O CNPJ/CPF de ${message.tenantName} foi verificado por outra conta`
          : `${message.tenantName}'s tax id was verified by another account`,
        greeting: hello(locale, null),
        paragraphs: [
          pt
            ? `Outra conta enviou um certificado digital válido para ${message.taxId}, o CNPJ/CPF de ${message.tenantName}, e passou a ser a responsável por ele.`
            : `Another account uploaded a valid digital certificate for ${message.taxId}, ${message.tenantName}'s tax id, and now holds it.`,
          pt
            ? "Se isso não era esperado, fale com o suporte."
            : "If you did not expect this, contact support."
        ],
        closing: ""
      }
  }
}

/** The mail in `locale`: plain text with the link on a line of its own, and the same as simple HTML. */
export const render = (locale: MailLocale, message: AccountMessage): RenderedMail => {
  const parts = partsOf(locale, message)
  const text = [
    parts.greeting,
    "",
    ...parts.paragraphs.flatMap((paragraph) => [paragraph, ""]),
    ...(parts.action === undefined ? [] : [parts.action.link, "", parts.action.note, ""]),
    ...(parts.closing === "" ? [] : [parts.closing])
  ].join("\n").trimEnd() + "\n"
  const paragraph = (content: string) => `<p style="margin:0 0 16px">${content}</p>`
  const button = parts.action === undefined ? "" : paragraph(
    `<a href="${escapeHtml(parts.action.link)}" style="display:inline-block;padding:10px 18px;` +
      `background:#1d4ed8;color:#ffffff;text-decoration:none;border-radius:6px">${escapeHtml(parts.action.label)}</a>`
  ) + paragraph(escapeHtml(parts.action.note))
  const html =
    `<!doctype html><html lang="${locale}"><head><meta charset="utf-8"><title>${
      escapeHtml(parts.subject)
    }</title></head><body style="font-family:system-ui,sans-serif;font-size:15px;color:#111827;max-width:560px">` +
    paragraph(escapeHtml(parts.greeting)) +
    parts.paragraphs.map((p) => paragraph(escapeHtml(p))).join("") +
    button +
    (parts.closing === "" ? "" : paragraph(`<small>${escapeHtml(parts.closing)}</small>`)) +
    `</body></html>`
  return { subject: parts.subject, text, html }
}
