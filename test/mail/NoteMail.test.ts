/**
 * Notes e-mailed to their takers, end to end on the simulator through a real SMTP server (the
 * test's Mailbox): an authorized note's mail carries the DANFSe and the NFS-e XML byte for byte as
 * `GET …/pdf` and `…/xml` serve them, from the service's address in the tenant's name, Reply-To the
 * registration's e-mail; a cancelled note's mail carries the files as they are served after the
 * cancellation (the DANFSe marked CANCELADA); the tenant's switch off and a taker without an e-mail
 * send nothing and the document says why; a test note goes only to a confirmed address of the
 * tenant's team, never to a stranger; the switch turned off stops a mail being retried, and a note
 * cancelled first never gets its authorization mail; refusals are retried, a permanent one is visible
 * on the document; hostile names inject neither HTML nor headers.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import type { AppConfigShape } from "../../src/Config.js"
import { Document } from "../../src/domain/Document.js"
import { makeId } from "../../src/domain/Ids.js"
import { normalizeEmail } from "../../src/domain/User.js"
import { pdfText } from "../support/DanfseText.js"
import { createKey, registerOwner, uniqueEmail } from "../support/fixtures.js"
import { type Mailbox, makeMailTestApp, type ReceivedMail, TestMailbox } from "../support/Mailbox.js"
import { completeRegistration } from "../support/registration.js"
import { bytesRequest, rawRequest, testDatabases } from "../support/TestApp.js"
import { hasTool } from "../support/tools.js"

const fast: Partial<AppConfigShape> = {
  loginRateLimit: { perMinute: 100_000 },
  rateLimit: { perSecond: 100_000, burst: 100_000 },
  queue: { instanceId: "t", shutdownGrace: Duration.seconds(1) },
  issuance: { concurrency: 4, pollInterval: Duration.millis(20), lease: Duration.seconds(60) },
  retry: { baseDelay: Duration.millis(10), maxDelay: Duration.millis(50), window: Duration.seconds(5) }
}

const decodeDocument = Schema.decodeUnknownSync(Schema.toCodecJson(Document))

const invoice = (taker: Record<string, unknown>) => ({
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "João da Conceição Araújo", ...taker },
  service: {
    code: "010101",
    nbs_code: "115013000",
    description: "Consultoria em segurança da informação",
    municipality_code: "3550308"
  },
  amounts: { services: 123456, iss_rate: "5.00" }
})

const issued = (token: string, taker: Record<string, unknown>) =>
  Effect.gen(function*() {
    const response = yield* rawRequest("POST", "/v1/documents", { token, body: invoice(taker) })
    expect(response.status, response.text).toBe(202)
    return String(response.json?.["id"])
  })

/** The document once `until` holds of it. */
const documentWhen = (token: string, id: string, until: (document: Document) => boolean, what: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 400; i++) {
      const document = decodeDocument((yield* rawRequest("GET", `/v1/documents/${id}`, { token })).json)
      if (until(document)) return document
      yield* Effect.sleep(Duration.millis(25))
    }
    return yield* Effect.die(`document ${id}: ${what} never held`)
  })

const mailStatus = (token: string, id: string, status: string) =>
  documentWhen(token, id, (document) => document.taker_notification?.status === status, `mail ${status}`)

/**
 * The owner's tenant, with a test key, as the fixtures leave it (a complete registration), once the
 * owner's verification mail arrived: a refusal a test asks of the mailbox is then for its note.
 */
const tenantWithKey = (label: string) =>
  Effect.gen(function*() {
    const owner = yield* registerOwner(label)
    yield* (yield* TestMailbox).waitFor(owner.email)
    const key = yield* createKey(owner, "test")
    return { owner, token: key.token }
  })

/**
 * A new member's address on the tenant's team, confirmed or not, written straight to the database
 * (a registration would mail that address first): a test note is e-mailed only to a confirmed one.
 */
const teamAddress = (owner: { tenantId: string }, label: string, confirmed = true) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const email = uniqueEmail(label)
    const id = yield* makeId("user")
    const at = new Date()
    yield* sql`
      INSERT INTO users (id, email, email_normalized, name, password_hash, email_verified_at, created_at)
      VALUES (${id}, ${email}, ${email}, ${label}, 'not-a-hash', ${confirmed ? at : null}, ${at})`
    yield* sql`
      INSERT INTO memberships (tenant_id, user_id, role, created_at)
      VALUES (${owner.tenantId}, ${id}, 'developer', ${at})`
    return email
  }).pipe(Effect.orDie)

/**
 * A note to `to` whose mail the mailbox refuses (451) until told otherwise, once it was tried: the
 * mail is then being retried.
 */
const issuedWithMailRefused = (mailbox: Mailbox, token: string, to: string) =>
  Effect.gen(function*() {
    mailbox.refuseNext(1_000)
    const id = yield* issued(token, { email: to })
    yield* documentWhen(token, id, (document) => (document.taker_notification?.attempts ?? 0) >= 1, "mail tried")
    return id
  })

/** How many mail jobs ended `withheld` so far (the file's tests run one after another). */
const withheldJobs = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ count: number }>`SELECT count(*)::int AS count FROM mail_jobs WHERE state = 'withheld'`.pipe(
      Effect.map((rows) => rows[0]!.count),
      Effect.orDie
    )
)

/** How many mail jobs were queued to `address` (jobs are keyed by a digest of the normalized address). */
const mailJobsTo = (address: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ count: number }>`
      SELECT count(*)::int AS count FROM mail_jobs
      WHERE recipient_key = ${createHash("sha256").update(normalizeEmail(address)).digest("hex")}`.pipe(
      Effect.map((rows) => rows[0]!.count),
      Effect.orDie
    ))

const patchTenant = (owner: { session: string; tenantId: string }, body: unknown) =>
  rawRequest("PATCH", `/v1/tenants/${owner.tenantId}`, { token: owner.session, body })

const attachment = (mail: ReceivedMail, extension: string) => {
  const found = mail.attachments.find((file) => file.filename.endsWith(`.${extension}`))
  if (found === undefined) throw new Error(`no .${extension} attached to "${mail.subject}"`)
  return found
}

for (const database of testDatabases) {
  // Attempts enough for a mail kept refused to outlast what a test does meanwhile: at the default 8
  // (about 3 s at these delays) a job refused while a cancellation went through a busy machine gave up
  // (`failed`) before it could end `withheld`. Permanent refusals still fail at the first attempt.
  layer(makeMailTestApp(database, fast, { maxAttempts: 200 }), { timeout: 120_000, excludeTestServices: true })(
    `note mail to the taker (${database})`,
    (it) => {
      it.effect("an authorized note is e-mailed with its PDF and XML as the API serves them; cancelled, again with the files after cancellation", () =>
        Effect.gen(function*() {
          const mailbox = yield* TestMailbox
          const { owner, token } = yield* tenantWithKey("notamail")
          const renamed = yield* patchTenant(owner, { note_mail: { sender_name: "Clínica Exemplo" } })
          expect(renamed.status, renamed.text).toBe(200)
          expect(renamed.json?.["note_mail"]).toEqual({ enabled: true, sender_name: "Clínica Exemplo" })

          const to = yield* teamAddress(owner, "tomador")
          const id = yield* issued(token, { email: to })
          const mail = yield* mailbox.waitFor(to)
          const document = yield* mailStatus(token, id, "sent")
          const accessKey = document.authority!.access_key
          expect(document.taker_notification).toMatchObject({ kind: "authorized", attempts: 1, last_error: null })
          expect(document.taker_notification?.sent_at).toBeInstanceOf(Date)

          // The service's address (its SPF and DKIM), the tenant's name, answers to the tenant.
          expect(mail.fromAddress).toBe("no-reply@localhost")
          expect(mail.fromName).toBe("Clínica Exemplo")
          expect(mail.replyTo).toBe(completeRegistration.email)
          expect(mail.messageId).toBe(`<${id}.authorized@localhost>`)
          // A test note says it is worth nothing, in the subject and the body.
          expect(mail.subject).toBe(
            `[HOMOLOGAÇÃO — sem valor fiscal] NFS-e nº ${
              document.authority!.nfse_number
            } de ${completeRegistration.legal_name}`
          )
          expect(mail.text).toContain("Olá, João da Conceição Araújo,")
          expect(mail.text).toContain(`Chave de acesso: ${accessKey}`)
          expect(mail.text).toContain("R$\u00a01.234,56")
          expect(mail.text).toContain("(horário de Brasília)")
          expect(mail.text).toContain("não tem valor fiscal")
          expect(mail.html).toContain(accessKey)

          const xml = yield* rawRequest("GET", `/v1/documents/${id}/xml`, { token })
          const pdf = yield* bytesRequest(`/v1/documents/${id}/pdf`, token)
          expect(mail.attachments.map((file) => file.filename).sort()).toEqual([
            `NFSe-${accessKey}.pdf`,
            `NFSe-${accessKey}.xml`
          ])
          expect(attachment(mail, "pdf").contentType).toBe("application/pdf")
          expect(attachment(mail, "pdf").content).toEqual(pdf.bytes)
          expect(new TextDecoder().decode(attachment(mail, "pdf").content.slice(0, 5))).toBe("%PDF-")
          expect(attachment(mail, "xml").contentType).toBe("application/xml")
          expect(new TextDecoder().decode(attachment(mail, "xml").content)).toBe(xml.text)
          expect(xml.text).toContain(`<NFSe`)
          expect(xml.text).toContain(accessKey)

          const cancel = yield* rawRequest("POST", `/v1/documents/${id}/cancel`, {
            token,
            body: { reason_code: "issue_error", reason: "Valor errado na nota, reemitindo." }
          })
          expect(cancel.status, cancel.text).toBe(202)
          const cancelledMail = yield* mailbox.waitFor(to, (received) => received.subject.endsWith("cancelada"))
          const cancelled = yield* documentWhen(
            token,
            id,
            (document) => document.taker_notification?.kind === "cancelled" && document.status === "cancelled",
            "cancelled, its mail recorded"
          )
          yield* mailStatus(token, id, "sent")
          expect(cancelled.status).toBe("cancelled")
          expect(cancelledMail.messageId).toBe(`<${id}.cancelled@localhost>`)
          expect(cancelledMail.text).toContain("cancelou a nota fiscal")
          expect(cancelledMail.text).toContain("Cancelada em:")
          const pdfAfter = yield* bytesRequest(`/v1/documents/${id}/pdf`, token)
          const xmlAfter = yield* rawRequest("GET", `/v1/documents/${id}/xml`, { token })
          expect(attachment(cancelledMail, "pdf").content).toEqual(pdfAfter.bytes)
          expect(new TextDecoder().decode(attachment(cancelledMail, "xml").content)).toBe(xmlAfter.text)
          if (hasTool("pdftotext")) expect(pdfText(attachment(cancelledMail, "pdf").content)).toContain("CANCELADA")
          expect(mailbox.to(to)).toHaveLength(2)
        }))

      it.effect("the tenant's switch off sends nothing (disabled); a taker without an e-mail is no_address", () =>
        Effect.gen(function*() {
          const mailbox = yield* TestMailbox
          const { owner, token } = yield* tenantWithKey("semmail")
          const off = yield* patchTenant(owner, { note_mail: { enabled: false } })
          expect(off.status, off.text).toBe(200)
          expect(off.json?.["note_mail"]).toEqual({ enabled: false, sender_name: null })
          const to = yield* teamAddress(owner, "desligado")
          const disabled = yield* issued(token, { email: to })
          const noAddress = yield* issued(token, {})
          yield* mailStatus(token, disabled, "disabled")
          yield* mailStatus(token, noAddress, "no_address")

          // Back on: the next note goes out, and nothing was queued for the one before.
          const on = yield* patchTenant(owner, { note_mail: { enabled: true } })
          expect(on.status, on.text).toBe(200)
          const later = yield* issued(token, { email: to })
          yield* mailbox.waitFor(to)
          yield* mailStatus(token, later, "sent")
          yield* Effect.sleep(Duration.millis(300))
          expect(mailbox.to(to).map((mail) => mail.messageId)).toEqual([`<${later}.authorized@localhost>`])
        }))

      it.effect("a busy mail server is retried and the mail arrives once; a permanent refusal is failed on the document", () =>
        Effect.gen(function*() {
          const mailbox = yield* TestMailbox
          const { owner, token } = yield* tenantWithKey("retentativa")
          const to = yield* teamAddress(owner, "ocupado")
          mailbox.refuseNext(2)
          const id = yield* issued(token, { email: to })
          yield* mailbox.waitFor(to)
          const sent = yield* mailStatus(token, id, "sent")
          expect(sent.taker_notification).toMatchObject({ attempts: 3, last_error: null })
          yield* Effect.sleep(Duration.millis(300))
          expect(mailbox.to(to)).toHaveLength(1)

          const refused = yield* teamAddress(owner, "recusado")
          mailbox.refuseNext(1, 550)
          const failedId = yield* issued(token, { email: refused })
          const failed = yield* mailStatus(token, failedId, "failed")
          expect(failed.taker_notification?.attempts).toBe(1)
          expect(failed.taker_notification?.sent_at).toBeNull()
          expect(failed.taker_notification?.last_error).toContain("550")
          // The refusal never quotes the address.
          expect(failed.taker_notification?.last_error).not.toContain(refused)
          expect(mailbox.to(refused)).toEqual([])
        }))

      it.effect("a test note is e-mailed only to a confirmed address of the tenant's team (test_recipient otherwise)", () =>
        Effect.gen(function*() {
          const mailbox = yield* TestMailbox
          const { owner, token } = yield* tenantWithKey("sandbox")
          // Anyone may create a test key: a stranger's address, or a member's not yet confirmed, gets nothing.
          const stranger = uniqueEmail("estranho")
          const unconfirmed = yield* teamAddress(owner, "naoconfirmado", false)
          const toStranger = yield* issued(token, { email: stranger })
          const toUnconfirmed = yield* issued(token, { email: unconfirmed })
          for (const id of [toStranger, toUnconfirmed]) {
            // Decided with the authorization itself: no mail is queued only to be withheld.
            const authorized = yield* documentWhen(
              token,
              id,
              (document) => document.status === "authorized",
              "authorized"
            )
            expect(authorized.taker_notification).toMatchObject({
              kind: "authorized",
              status: "test_recipient",
              sent_at: null,
              last_error: null
            })
          }
          expect(yield* mailJobsTo(stranger)).toBe(0)
          expect(yield* mailJobsTo(unconfirmed)).toBe(0)
          // The owner's own address, written in another case, is the team's.
          const own = yield* issued(token, { email: owner.email.toUpperCase() })
          yield* mailStatus(token, own, "sent")
          expect(mailbox.to(stranger)).toEqual([])
          expect(mailbox.to(unconfirmed)).toEqual([])
          expect(mailbox.to(owner.email).map((mail) => mail.messageId)).toContain(`<${own}.authorized@localhost>`)
        }))

      it.effect("turning the switch off stops a mail still being retried (disabled), and nothing is sent", () =>
        Effect.gen(function*() {
          const mailbox = yield* TestMailbox
          const { owner, token } = yield* tenantWithKey("parar")
          const to = yield* teamAddress(owner, "parado")
          const id = yield* issuedWithMailRefused(mailbox, token, to)
          const off = yield* patchTenant(owner, { note_mail: { enabled: false } })
          expect(off.status, off.text).toBe(200)
          const stopped = yield* mailStatus(token, id, "disabled")
          mailbox.refuseNext(0)
          expect(stopped.taker_notification?.sent_at).toBeNull()
          yield* Effect.sleep(Duration.millis(600))
          expect(mailbox.to(to)).toEqual([])
        }))

      it.effect("a note cancelled before its authorization mail went out gets only the cancellation's mail", () =>
        Effect.gen(function*() {
          const mailbox = yield* TestMailbox
          const { owner, token } = yield* tenantWithKey("superado")
          const to = yield* teamAddress(owner, "superado")
          const withheldBefore = yield* withheldJobs
          const id = yield* issuedWithMailRefused(mailbox, token, to)
          const cancel = yield* rawRequest("POST", `/v1/documents/${id}/cancel`, {
            token,
            body: { reason_code: "issue_error", reason: "Valor errado na nota, reemitindo." }
          })
          expect(cancel.status, cancel.text).toBe(202)
          yield* documentWhen(
            token,
            id,
            (document) => document.status === "cancelled" && document.taker_notification?.kind === "cancelled",
            "cancelled"
          )
          // The authorization's job, retried after the cancellation, ends withheld without sending. The
          // mailbox keeps refusing until then: an attempt composed before the cancellation landed and
          // delivered after it would otherwise be accepted (a cancellation during a send, which no
          // check before the send can exclude).
          for (let i = 0; i < 1200 && (yield* withheldJobs) === withheldBefore; i++) {
            yield* Effect.sleep(Duration.millis(25))
          }
          expect(yield* withheldJobs).toBe(withheldBefore + 1)
          mailbox.refuseNext(0)
          yield* mailStatus(token, id, "sent")
          expect(mailbox.to(to).map((mail) => mail.messageId)).toEqual([`<${id}.cancelled@localhost>`])
        }))

      it.effect("hostile tenant and taker names reach neither the mail's HTML nor its headers; a multi-line sender name is refused", () =>
        Effect.gen(function*() {
          const mailbox = yield* TestMailbox
          const { owner, token } = yield* tenantWithKey("hostil")
          for (const sender_name of ["Loja\r\nBcc: vitima@example.com", "Loja\nX-Evil: 1", "", "x".repeat(101)]) {
            const refused = yield* patchTenant(owner, { note_mail: { sender_name } })
            expect(refused.status, sender_name).toBe(400)
            expect(refused.json?.["code"]).toBe("invalid_request")
            expect(JSON.stringify(refused.json)).toContain("sender_name")
          }
          const empty = yield* patchTenant(owner, { note_mail: {} })
          expect(empty.status).toBe(400)
          const hostile = `"Loja" <script>alert(1)</script> & Cia`
          const named = yield* patchTenant(owner, {
            note_mail: { sender_name: hostile },
            registration: { legal_name: "<img src=x onerror=alert(1)> Ltda" }
          })
          expect(named.status, named.text).toBe(200)
          const to = yield* teamAddress(owner, "alvo")
          yield* issued(token, { email: to, name: "<b>Tomador</b> & \"Filho\"" })
          const mail = yield* mailbox.waitFor(to)
          expect(mail.fromName).toBe(hostile)
          expect(mail.fromAddress).toBe("no-reply@localhost")
          expect(mail.headerNames).not.toContain("bcc")
          expect(mail.headerNames).not.toContain("x-evil")
          expect(mail.html).not.toContain("<script>")
          expect(mail.html).not.toContain("<img")
          expect(mail.html).not.toContain("<b>Tomador")
          expect(mail.html).toContain("&lt;b&gt;Tomador&lt;/b&gt; &amp; &quot;Filho&quot;")
          expect(mail.html).toContain("&lt;img src=x onerror=alert(1)&gt; Ltda")
          expect(mail.subject).toContain("<img src=x onerror=alert(1)> Ltda")
        }))
    }
  )
}
