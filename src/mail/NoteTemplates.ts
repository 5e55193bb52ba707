/**
 * The note's mail to its taker, in Portuguese (the taker is in Brazil, whatever the tenant's
 * language): the note's key data in plain text and simple HTML, its files attached. Names come
 * from tenants and takers, so every one is escaped in the HTML and flattened to one line in the
 * subject. A test note (homologation) says in its subject that it has no fiscal value.
 */
import type { NoteFacts } from "./NoteMail.js"
import { escapeHtml, type RenderedMail, when } from "./Templates.js"

/** The subject's mark of a note issued in the test environment. */
export const HOMOLOGATION_MARK = "[HOMOLOGAÇÃO — sem valor fiscal]"

const brl = new Intl.NumberFormat("pt-BR", { style: "currency", currency: "BRL" })

/** One line of visible text: line breaks and other controls become spaces. */
// eslint-disable-next-line no-control-regex -- control characters are what it removes
export const oneLine = (text: string) => text.replace(/[\u0000-\u001F\u007F-\u009F\u2028\u2029]+/gu, " ").trim()

export const renderNoteMail = (note: NoteFacts): RenderedMail => {
  const provider = oneLine(note.providerName)
  const number = note.nfseNumber === null ? "" : ` nº ${note.nfseNumber}`
  const cancelled = note.kind === "cancelled"
  const subject = [
    ...(note.environment === "test" ? [HOMOLOGATION_MARK] : []),
    cancelled ? `NFS-e${number} de ${provider} cancelada` : `NFS-e${number} de ${provider}`
  ].join(" ")
  const greeting = note.takerName === null ? "Olá," : `Olá, ${oneLine(note.takerName)},`
  const lead = cancelled
    ? `${provider} cancelou a nota fiscal de serviço eletrônica (NFS-e) abaixo, emitida para você.`
    : `${provider} emitiu a nota fiscal de serviço eletrônica (NFS-e) abaixo para você.`
  const rows: ReadonlyArray<readonly [string, string]> = [
    ["Número da NFS-e", note.nfseNumber ?? "—"],
    ["Valor dos serviços", brl.format(note.servicesAmount / 100)],
    ["Chave de acesso", note.accessKey],
    ["Emitida em", when("pt-BR", note.authorizedAt)],
    ...(note.cancelledAt === null ? [] : [["Cancelada em", when("pt-BR", note.cancelledAt)] as const])
  ]
  const paragraphs = [
    cancelled
      ? "Em anexo, o DANFSe (PDF) com a marca de cancelada e o XML da NFS-e."
      : "Em anexo, o DANFSe (PDF) e o XML da NFS-e.",
    ...(note.environment === "test"
      ? ["Esta nota foi emitida no ambiente de homologação (testes) e não tem valor fiscal."]
      : []),
    `Para falar sobre esta nota, responda a este e-mail: a resposta vai para ${provider}.`
  ]
  const text = [
    greeting,
    "",
    lead,
    "",
    ...rows.map(([label, value]) => `${label}: ${value}`),
    "",
    ...paragraphs.flatMap((paragraph) => [paragraph, ""])
  ].join("\n").trimEnd() + "\n"
  const paragraph = (content: string) => `<p style="margin:0 0 16px">${escapeHtml(content)}</p>`
  const table = `<table style="border-collapse:collapse;margin:0 0 16px">` +
    rows.map(([label, value]) =>
      `<tr><th style="text-align:left;padding:2px 12px 2px 0;font-weight:600">${escapeHtml(label)}</th>` +
      `<td style="padding:2px 0">${escapeHtml(value)}</td></tr>`
    ).join("") + `</table>`
  const html =
    `<!doctype html><html lang="pt-BR"><head><meta charset="utf-8"><title>${
      escapeHtml(subject)
    }</title></head><body style="font-family:system-ui,sans-serif;font-size:15px;color:#111827;max-width:560px">` +
    paragraph(greeting) + paragraph(lead) + table + paragraphs.map(paragraph).join("") + `</body></html>`
  return { subject, text, html }
}
