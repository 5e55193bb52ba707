/**
 * The note mail in a real browser, in both languages: the Company screen turns it off and names
 * the sender (a name over 100 characters is refused next to its field), and a document's detail
 * shows its e-mail to the taker: not delivered, with the mail server's answer, or not sent because
 * the taker has no e-mail or because a test note is mailed only to the team's confirmed addresses.
 * The mail server is unreachable here and one attempt is allowed, so the mail is given up at once.
 */
import { Duration } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { NewDocument } from "../../src/documents/Api.js"
import { allScopes } from "../../src/domain/Principal.js"
import {
  accessibilityViolations,
  type DashboardDocument,
  type DashboardRun,
  documentWhen,
  fitsTheScreen,
  hasChromium,
  newPerson,
  registerByApi,
  signInPage,
  startDashboard
} from "../support/Dashboard.js"
import { mailSettings } from "../support/Mailbox.js"
import { consultingService } from "../support/samples.js"

type Document = DashboardDocument

const invoice = (email: string | undefined): NewDocument => ({
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria da Silva", ...(email === undefined ? {} : { email }) },
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" }
})

describe.runIf(hasChromium)("dashboard: the note's e-mail to the taker", () => {
  let run: DashboardRun
  let person: ReturnType<typeof newPerson>
  let tenantId: string
  let session: string
  let undelivered: Document
  let noAddress: Document
  let toStranger: Document

  beforeAll(async () => {
    run = await startDashboard({
      loginRateLimit: { perMinute: 100_000 },
      rateLimit: { perSecond: 100_000, burst: 100_000 },
      issuance: { concurrency: 4, pollInterval: Duration.millis(50), lease: Duration.seconds(60) },
      // Nothing listens on port 9 of the loopback: the one attempt allowed is refused.
      mail: mailSettings("smtp://127.0.0.1:9", { maxAttempts: 1 })
    })
    person = newPerson("notamail")
    const registered = await registerByApi(run, person)
    tenantId = registered.tenantId!
    session = registered.session
    const key = await run.api(session).apiKeys.create({
      params: { tenantId },
      payload: { name: "backend", environment: "test", scopes: allScopes }
    })
    const mailed = await run.api(key.token).documents.issueForKey({
      // A test note is e-mailed only to the team's confirmed addresses: the member's own.
      payload: invoice(person.email),
      headers: {}
    })
    const unmailed = await run.api(key.token).documents.issueForKey({ payload: invoice(undefined), headers: {} })
    const stranger = await run.api(key.token).documents.issueForKey({
      payload: invoice("maria@example.com"),
      headers: {}
    })
    const until = (id: string, status: string) =>
      documentWhen(run, key.token, id, (document) => document.taker_notification?.status === status, `mail ${status}`)
    undelivered = await until(mailed.id, "failed")
    noAddress = await until(unmailed.id, "no_address")
    toStranger = await until(stranger.id, "test_recipient")
  }, 120_000)
  afterAll(() => run?.close())

  it("Company: the switch and the sender name are saved; a name too long is refused at its field (English)", async () => {
    const { page, problems, screenshot } = await run.open({ lang: "en" })
    await signInPage(page, person)
    await page.getByRole("navigation").getByRole("link", { name: "Company" }).click()
    const enabled = page.getByRole("checkbox", { name: /E-mail each authorized or cancelled note/ })
    expect(await enabled.isChecked()).toBe(true)
    const sender = page.getByLabel("Sender name")
    await sender.fill("x".repeat(101))
    await page.getByRole("button", { name: "Save registration" }).click()
    await expect.poll(() => sender.getAttribute("aria-invalid")).toBe("true")
    expect(await page.locator("#company-note_mail-sender_name-error").textContent()).toBeTruthy()

    await enabled.uncheck()
    await sender.fill("Clínica Exemplo")
    await page.getByRole("button", { name: "Save registration" }).click()
    await page.getByText("Registration saved.").waitFor()
    const tenant = await run.api(session).tenants.get({ params: { tenantId } })
    expect(tenant.note_mail).toEqual({ enabled: false, sender_name: "Clínica Exemplo" })
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("company-note-mail")
    expect(problems()).toEqual([])
  })

  it("a document's detail shows its mail to the taker, not delivered with the server's answer (English)", async () => {
    const { page, problems, screenshot } = await run.open({ lang: "en" })
    await signInPage(page, person)
    await page.goto(`${run.base}/#/documents/${undelivered.id}`)
    await page.getByRole("heading", { level: 2, name: "E-mail to the taker" }).waitFor()
    const facts = page.locator("h2:text('E-mail to the taker') + dl.facts")
    expect(await facts.locator(".badge").textContent()).toBe("not delivered")
    expect(await facts.textContent()).toContain(person.email)
    expect(await facts.textContent()).toContain("the authorized note")
    expect(await facts.textContent()).toContain(undelivered.taker_notification!.last_error!)
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("document-taker-mail-failed")
    expect(problems()).toEqual([])
  })

  it("in Portuguese, on a phone: not delivered, not sent for a taker without an e-mail, nor for a test note to a stranger", async () => {
    const { page, problems, screenshot } = await run.open({ lang: "pt", phone: true })
    await signInPage(page, person)
    await page.goto(`${run.base}/#/documents/${undelivered.id}`)
    await page.getByRole("heading", { level: 2, name: "E-mail ao tomador" }).waitFor()
    const facts = page.locator("h2:text('E-mail ao tomador') + dl.facts")
    expect(await facts.locator(".badge").textContent()).toBe("não entregue")
    expect(await facts.textContent()).toContain("Resposta do servidor de e-mail")

    await page.goto(`${run.base}/#/documents/${noAddress.id}`)
    const notSent = async (why: string) => {
      await expect.poll(() => facts.locator(".badge").textContent()).toBe("não enviado")
      await expect.poll(() => facts.textContent()).toContain(`Motivo${why}`)
      expect(await fitsTheScreen(page)).toBe(true)
    }
    await notSent("o tomador não tem e-mail")
    await page.goto(`${run.base}/#/documents/${toStranger.id}`)
    await notSent("uma nota de teste só é enviada aos e-mails confirmados da sua equipe")
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("document-taker-mail-pt")
    expect(problems()).toEqual([])
  })
})
