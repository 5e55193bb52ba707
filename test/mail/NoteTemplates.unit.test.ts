/**
 * The note's mail to its taker, rendered without a server: a live note's subject has no mark and a
 * test note's says it has no fiscal value; a cancellation says so; names are escaped in the HTML
 * and flattened to one line in the subject; the key data (number, amount, access key, Brasília
 * time) are in both bodies.
 */
import { describe, expect, it } from "@effect/vitest"
import type { NoteFacts } from "../../src/mail/NoteMail.js"
import { HOMOLOGATION_MARK, renderNoteMail } from "../../src/mail/NoteTemplates.js"

const note: NoteFacts = {
  kind: "authorized",
  environment: "live",
  providerName: "Clínica Exemplo Ltda",
  takerName: "Maria da Silva",
  nfseNumber: "42",
  accessKey: "3".repeat(50),
  servicesAmount: 123456,
  authorizedAt: new Date("2026-11-27T15:30:00Z"),
  cancelledAt: null
}

describe("renderNoteMail", () => {
  it("a live note: no mark, the key data in Brasília time, in text and HTML", () => {
    const mail = renderNoteMail(note)
    expect(mail.subject).toBe("NFS-e nº 42 de Clínica Exemplo Ltda")
    for (const body of [mail.text, mail.html]) {
      expect(body).toContain("3".repeat(50))
      expect(body).toContain("R$\u00a01.234,56")
      // 15:30 UTC is 12:30 in Brasília.
      expect(body).toContain("27 de novembro de 2026 às 12:30 (horário de Brasília)")
      expect(body).not.toContain("homologação")
    }
    expect(mail.text).toContain("Olá, Maria da Silva,")
  })

  it("a test note says it has no fiscal value; a cancellation says it was cancelled, and when", () => {
    const test = renderNoteMail({ ...note, environment: "test" })
    expect(test.subject).toBe(`${HOMOLOGATION_MARK} NFS-e nº 42 de Clínica Exemplo Ltda`)
    expect(test.text).toContain("não tem valor fiscal")
    const cancelled = renderNoteMail({ ...note, kind: "cancelled", cancelledAt: new Date("2026-11-28T13:00:00Z") })
    expect(cancelled.subject).toBe("NFS-e nº 42 de Clínica Exemplo Ltda cancelada")
    expect(cancelled.text).toContain("Cancelada em: 28 de novembro de 2026 às 10:00 (horário de Brasília)")
    expect(cancelled.text).toContain("marca de cancelada")
  })

  it("hostile names: escaped in the HTML, one line in the subject", () => {
    const mail = renderNoteMail({
      ...note,
      providerName: "<script>alert(1)</script>\r\nBcc: x@example.com",
      takerName: "\"Ana\" & <b>Filhos</b>"
    })
    expect(mail.subject).not.toMatch(/[\r\n]/u)
    expect(mail.subject).toBe("NFS-e nº 42 de <script>alert(1)</script> Bcc: x@example.com")
    expect(mail.html).not.toContain("<script>")
    expect(mail.html).not.toContain("<b>")
    expect(mail.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
    expect(mail.html).toContain("&quot;Ana&quot; &amp; &lt;b&gt;Filhos&lt;/b&gt;")
  })
})
