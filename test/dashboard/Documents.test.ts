/**
 * The documents screen in a real browser (SPEC §6, §15): documents issued by a backend with a test
 * key appear in the list; the status and reference filters narrow it; the detail follows a
 * document still in progress until the authority authorizes it, downloads its XML and PDF, shows a
 * rejection, and cancels through a dialog that asks first (its own cancel changes nothing); a
 * developer reads everything but has no cancel control (and the server refuses them anyway).
 */
import { Duration } from "effect"
import { readFileSync } from "node:fs"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { NewDocument } from "../../src/documents/Api.js"
import { allScopes } from "../../src/domain/Principal.js"
import {
  accessibilityViolations,
  type DashboardDocument,
  type DashboardRun,
  documentWhen,
  hasChromium,
  joinByInvitation,
  newPerson,
  registerByApi,
  signInPage,
  startDashboard
} from "../support/Dashboard.js"
import { consultingService, sampleTaker } from "../support/samples.js"
import { asServiceDocument } from "../support/serviceDocument.js"

type Document = DashboardDocument

const invoice = (overrides: Partial<NewDocument> = {}): NewDocument => ({
  type: "service_invoice",
  taker: sampleTaker,
  service: consultingService,
  amounts: { services: 150000, deductions: 10000, iss_rate: "2.00" },
  ...overrides
})

const unique = (label: string) => `${label}-${Math.random().toString(36).slice(2, 8)}`

describe.runIf(hasChromium)("dashboard documents", () => {
  let run: DashboardRun
  let owner: Awaited<ReturnType<typeof registerByApi>> & { person: ReturnType<typeof newPerson>; tenantId: string }
  let keyToken: string
  let authorized: Document
  let rejected: Document

  /** Reads a document as its backend does until it reaches one of `until`. */
  const settled = (id: string, until: ReadonlyArray<Document["status"]>) =>
    documentWhen(run, keyToken, id, (document) => until.includes(document.status), until.join("/"))

  const issue = async (overrides: Partial<NewDocument>) =>
    asServiceDocument(await run.api(keyToken).documents.issueForKey({ payload: invoice(overrides), headers: {} }))

  /** The status badge of the detail's first facts. */
  const detailStatus = (page: Page) => page.locator("dl.facts").first().locator(".badge").first()

  /** Opens a document as a person does: the Documents section, then its row's link. */
  const openDocument = async (page: Page, document: Document) => {
    await page.getByRole("navigation").getByRole("link", { name: "Documents" }).click()
    await page.getByRole("link", { name: `No. ${document.number} · series ${document.series}` }).click()
    await page.getByRole("heading", { level: 1, name: `Document no. ${document.number}, series ${document.series}` })
      .waitFor()
  }

  const signedIn = async (
    person: ReturnType<typeof newPerson>,
    options: { phone?: boolean; lang?: "en" | "pt" } = {}
  ) => {
    const watched = await run.open(options)
    await signInPage(watched.page, person)
    return watched
  }

  beforeAll(async () => {
    run = await startDashboard({
      loginRateLimit: { perMinute: 100_000 },
      rateLimit: { perSecond: 100_000, burst: 100_000 },
      issuance: { concurrency: 4, pollInterval: Duration.millis(50), lease: Duration.seconds(60) },
      // Slow enough that a `simulate:unavailable` document is seen in progress before it is authorized.
      retry: { baseDelay: Duration.seconds(2), maxDelay: Duration.seconds(4), window: Duration.seconds(60) }
    })
    const person = newPerson("docs")
    const registered = await registerByApi(run, person)
    owner = { ...registered, person, tenantId: registered.tenantId! }
    const key = await run.api(owner.session).apiKeys.create({
      params: { tenantId: owner.tenantId },
      payload: { name: "backend", environment: "test", scopes: allScopes }
    })
    keyToken = key.token
    const first = await issue({ reference: unique("pedido-a") })
    const second = await issue({ reference: unique("pedido-r"), notes: "simulate:reject" })
    authorized = await settled(first.id, ["authorized"])
    rejected = await settled(second.id, ["rejected"])
  }, 120_000)
  afterAll(() => run?.close())

  it("lists the documents and filters them by status and reference", async () => {
    const { page, problems, screenshot } = await signedIn(owner.person)
    await page.getByRole("navigation").getByRole("link", { name: "Documents" }).click()
    await page.getByRole("heading", { level: 1, name: "Documents" }).waitFor()
    const rows = page.locator("table.documents tbody tr")
    await expect.poll(() => rows.count()).toBe(2)
    const authorizedRow = rows.filter({ hasText: authorized.reference! })
    await expect.poll(() => authorizedRow.textContent()).toContain("authorized")
    expect(await authorizedRow.textContent()).toContain("Maria da Silva")
    expect(await authorizedRow.textContent()).toContain("R$1,500.00")
    expect(await authorizedRow.getByRole("link").getAttribute("href")).toBe(`#/documents/${authorized.id}`)
    expect(await rows.filter({ hasText: rejected.reference! }).textContent()).toContain("rejected")
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("documents-list")

    await page.getByLabel("Status").selectOption("rejected")
    // Nothing changes until the filters are applied.
    expect(await rows.count()).toBe(2)
    await page.getByRole("button", { name: "Apply filters" }).click()
    await expect.poll(() => rows.count()).toBe(1)
    expect(await rows.first().textContent()).toContain(rejected.reference!)

    await page.getByLabel("Status").selectOption("")
    await page.getByLabel("Reference").fill(authorized.reference!)
    await page.getByRole("button", { name: "Apply filters" }).click()
    await expect.poll(async () =>
      (await rows.count()) === 1 && (await rows.first().textContent())?.includes(authorized.reference!)
    ).toBe(true)

    // Live only: this tenant has test documents only.
    await page.getByRole("button", { name: "Clear filters" }).first().click()
    await page.getByLabel("Environment").selectOption("live")
    await page.getByRole("button", { name: "Apply filters" }).click()
    await page.getByText("No documents match these filters.").waitFor()

    // Created until yesterday: both documents were created today (in Brasília, UTC−3, as the filter reads days).
    await page.getByRole("button", { name: "Clear filters" }).first().click()
    const yesterday = new Date(Date.now() - 3 * 3_600_000 - 86_400_000).toISOString().slice(0, 10)
    await page.getByLabel("Created until (inclusive)").fill(yesterday)
    await page.getByRole("button", { name: "Apply filters" }).click()
    await page.getByText("No documents match these filters.").waitFor()
    await page.getByRole("button", { name: "Clear filters" }).first().click()
    await expect.poll(() => rows.count()).toBe(2)
    expect(problems()).toEqual([])
  })

  it("shows a phone-width list as cards, in Portuguese", async () => {
    const { page, problems, screenshot } = await signedIn(owner.person, { phone: true, lang: "pt" })
    await page.getByRole("navigation").getByRole("link", { name: "Documentos" }).click()
    const rows = page.locator("table.documents tbody tr")
    await expect.poll(() => rows.count()).toBe(2)
    const row = await rows.filter({ hasText: authorized.reference! }).textContent()
    expect(row).toContain("autorizado")
    expect(row).toContain("R$\u00a01.500,00")
    await page.getByLabel("Situação").waitFor()
    await screenshot("documents-list-phone")
    expect(await accessibilityViolations(page)).toEqual([])
    expect(problems()).toEqual([])
  })

  it("pages through a long list with Load more", async () => {
    const person = newPerson("manydocs")
    const registered = await registerByApi(run, person)
    const key = await run.api(registered.session).apiKeys.create({
      params: { tenantId: registered.tenantId! },
      payload: { name: "backend", environment: "test", scopes: ["documents:write"] }
    })
    for (let i = 0; i < 27; i++) {
      await run.api(key.token).documents.issueForKey({ payload: invoice({ reference: `lote-${i}` }), headers: {} })
    }
    const { page, problems } = await signedIn(person)
    await page.getByRole("navigation").getByRole("link", { name: "Documents" }).click()
    const rows = page.locator("table.documents tbody tr")
    await expect.poll(() => rows.count()).toBe(25)
    // Newest first: the first page ends at the third document issued.
    expect(await rows.last().textContent()).toContain("lote-2")
    await page.getByRole("button", { name: "Load more" }).click()
    await expect.poll(() => rows.count()).toBe(27)
    expect(await rows.last().textContent()).toContain("lote-0")
    expect(await page.getByRole("button", { name: "Load more" }).count()).toBe(0)
    expect(problems()).toEqual([])
  })

  it("drops a next page that answers after the filters changed instead of appending it to the new list", async () => {
    const person = newPerson("latepage")
    const registered = await registerByApi(run, person)
    const key = await run.api(registered.session).apiKeys.create({
      params: { tenantId: registered.tenantId! },
      payload: { name: "backend", environment: "test", scopes: ["documents:write"] }
    })
    for (let i = 0; i < 27; i++) {
      await run.api(key.token).documents.issueForKey({ payload: invoice({ reference: `late-${i}` }), headers: {} })
    }
    const { page, problems } = await signedIn(person)
    // The second page is held until the filtered list is on screen.
    let release = () => {}
    const released = new Promise<void>((resolve) => (release = resolve))
    let held = false
    await page.route(/\/documents\?.*starting_after=/, async (route) => {
      held = true
      await released
      await route.continue()
    })
    await page.getByRole("navigation").getByRole("link", { name: "Documents" }).click()
    const rows = page.locator("table.documents tbody tr")
    await expect.poll(() => rows.count()).toBe(25)
    await page.getByRole("button", { name: "Load more" }).click()
    await expect.poll(() => held).toBe(true)
    await page.getByLabel("Reference").fill("late-5")
    await page.getByRole("button", { name: "Apply filters" }).click()
    await expect.poll(() => rows.count()).toBe(1)
    const lateAnswer = page.waitForResponse(/starting_after=/)
    release()
    await lateAnswer
    // Give the page the moment it needs to render whatever the late answer would change.
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))))
    expect(await rows.count()).toBe(1)
    expect(await rows.first().textContent()).toContain("late-5")
    expect(problems()).toEqual([])
  })

  it("explains an empty tenant how documents are issued", async () => {
    const person = newPerson("nodocs")
    await registerByApi(run, person)
    const { page, problems, screenshot } = await signedIn(person)
    await page.getByRole("navigation").getByRole("link", { name: "Documents" }).click()
    await page.getByText("No documents yet.").waitFor()
    const example = await page.locator("pre").textContent()
    expect(example).toContain("/v1/documents")
    expect(example).toContain("Bearer etd_test_…")
    expect(await page.getByRole("link", { name: "Create an API key" }).getAttribute("href")).toBe("#/keys")
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("documents-empty")
    expect(problems()).toEqual([])
  })

  it("follows a document until authorized and downloads its PDF and XML", async () => {
    const { page, problems, screenshot } = await signedIn(owner.person)
    // The authority is unavailable twice first: the document stays in progress for seconds.
    const document = await issue({ reference: unique("pedido-p"), notes: "simulate:unavailable" })
    await openDocument(page, document)
    expect(["queued", "submitting"]).toContain(await detailStatus(page).textContent())
    await page.getByText("Still being processed").waitFor()
    expect(await page.getByRole("button", { name: /^Download/ }).count()).toBe(0)
    // No click: the page polls while the document is in progress.
    await expect.poll(() => detailStatus(page).textContent(), { timeout: 20_000 }).toBe("authorized")
    // Final: the polling stops (nothing more is read in over one polling interval).
    const reads: Array<string> = []
    page.on("request", (request) => request.url().endsWith(`/documents/${document.id}`) && reads.push(request.url()))
    await page.waitForTimeout(3500)
    expect(reads).toEqual([])
    const server = asServiceDocument(await run.api(keyToken).documents.getForKey({ params: { docId: document.id } }))
    expect(server.status).toBe("authorized")
    const accessKey = server.authority!.access_key
    await page.getByText(accessKey).waitFor()
    const facts = await page.locator("main").textContent()
    for (
      const fact of [
        "Maria da Silva",
        "529.982.247-25",
        "maria@example.com",
        "Avenida Paulista, 1000",
        "CEP 01310-100",
        "010101",
        "Consultoria em sistemas",
        "R$1,500.00",
        "R$100.00",
        "R$1,400.00",
        "2.00 %",
        "R$28.00",
        // The taxation kind, the retentions and the net value, as the authorized note states them.
        "Taxable, not withheld",
        "as stated on the authorized note",
        "Total withheld",
        "Net value",
        server.authority!.protocol
      ]
    ) {
      expect(facts).toContain(fact)
    }
    expect(
      // The processing facts' count, not the taker mail's.
      Number(
        await page.locator(
          "xpath=//h2[.='Processing']/following-sibling::dl[1]//dt[.='Attempts']/following-sibling::dd[1]"
        )
          .textContent()
      )
    ).toBe(server.attempts)
    expect(server.attempts).toBeGreaterThanOrEqual(3)

    const [pdf] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download PDF (DANFSe)" }).click()
    ])
    expect(pdf.suggestedFilename()).toBe(`NFSe-${accessKey}.pdf`)
    expect(readFileSync((await pdf.path())!).subarray(0, 5).toString("latin1")).toBe("%PDF-")
    const [xml] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download XML" }).click()
    ])
    expect(xml.suggestedFilename()).toBe(`NFSe-${accessKey}.xml`)
    const xmlText = readFileSync((await xml.path())!, "utf8")
    expect(xmlText.startsWith("<")).toBe(true)
    expect(xmlText).toContain(accessKey)

    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("document-detail")
    expect(problems()).toEqual([])
  })

  it("shows a rejected document's rejection, without files or cancellation", async () => {
    const { page, problems, screenshot } = await signedIn(owner.person, { phone: true })
    await openDocument(page, rejected)
    await page.getByRole("heading", { level: 2, name: "Rejection" }).waitFor()
    expect(await detailStatus(page).textContent()).toBe("rejected")
    const notice = await page.locator(".notice.error").textContent()
    expect(notice).toContain(rejected.rejection!.code)
    expect(notice).toContain(rejected.rejection!.message)
    expect(await page.getByRole("button", { name: /^Download/ }).count()).toBe(0)
    expect(await page.getByRole("button", { name: "Cancel document" }).count()).toBe(0)
    await screenshot("document-detail-phone")
    expect(await accessibilityViolations(page)).toEqual([])
    expect(problems()).toEqual([])
  })

  it("cancels only after confirmation with a valid reason, then shows the authority's answer", async () => {
    const { page, problems, screenshot } = await signedIn(owner.person)
    const document = await settled((await issue({ reference: unique("pedido-c") })).id, ["authorized"])
    await openDocument(page, document)
    await expect.poll(() => detailStatus(page).textContent()).toBe("authorized")

    // Backing out of the dialog changes nothing.
    await page.getByRole("button", { name: "Cancel document" }).click()
    const dialog = page.getByRole("dialog", { name: `Cancel document no. ${document.number}` })
    await dialog.waitFor()
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("document-cancel-dialog")
    await dialog.getByRole("button", { name: "Keep the document" }).click()
    await dialog.waitFor({ state: "hidden" })
    await page.getByRole("button", { name: "Cancel document" }).click()
    await dialog.waitFor()
    await page.keyboard.press("Escape")
    await dialog.waitFor({ state: "hidden" })
    expect((await run.api(keyToken).documents.getForKey({ params: { docId: document.id } })).status).toBe("authorized")

    // Too short a reason is refused before anything is sent; the counter follows the text.
    await page.getByRole("button", { name: "Cancel document" }).click()
    await dialog.getByLabel("Reason").selectOption("service_not_provided")
    await dialog.getByLabel("Explanation").fill("Too short")
    await dialog.getByText("9 of 255 characters").waitFor()
    await dialog.getByRole("button", { name: "Request cancellation" }).click()
    await dialog.getByText("Write at least 15 characters.").waitFor()
    expect((await run.api(keyToken).documents.getForKey({ params: { docId: document.id } })).status).toBe("authorized")

    const reason = "The service was not provided to the customer."
    await dialog.getByLabel("Explanation").fill(reason)
    await dialog.getByRole("button", { name: "Request cancellation" }).click()
    await dialog.waitFor({ state: "hidden" })
    await page.locator("main").getByText("Cancellation requested. The authority's answer appears here").waitFor()
    const afterRequest = await detailStatus(page).textContent()
    expect(["cancellation requested", "cancelled"]).toContain(afterRequest)

    // The authority's answer: the person refreshes (the page also polls while it waits).
    await expect.poll(async () => {
      const refresh = page.getByRole("button", { name: "Refresh" })
      if (await refresh.isEnabled()) await refresh.click()
      return detailStatus(page).textContent()
    }, { timeout: 15_000 }).toBe("cancelled")
    const server = asServiceDocument(await run.api(keyToken).documents.getForKey({ params: { docId: document.id } }))
    expect(server.status).toBe("cancelled")
    expect(server.cancellation).toMatchObject({ reason_code: "service_not_provided", reason })
    const text = await page.locator("main").textContent()
    expect(text).toContain("Service not provided")
    expect(text).toContain(reason)
    expect(await page.getByRole("button", { name: "Cancel document" }).count()).toBe(0)
    // A cancelled note's files stay available.
    expect(await page.getByRole("button", { name: "Download PDF (DANFSe)" }).count()).toBe(1)
    await screenshot("document-cancelled")
    expect(problems()).toEqual([])
  })

  it("gives a developer the documents and their files, but no cancel control", async () => {
    const developer = newPerson("dev")
    const registered = await registerByApi(run, developer, false)
    await joinByInvitation(run, owner, { ...registered, email: developer.email }, "developer")
    const { page, problems } = await signedIn(developer)
    await openDocument(page, authorized)
    await page.getByText("Only owners and admins cancel documents").waitFor()
    expect(await page.getByRole("button", { name: "Cancel document" }).count()).toBe(0)
    expect(await page.getByRole("button", { name: "Download XML" }).count()).toBe(1)
    // The server refuses a developer's cancellation whatever the page shows.
    const refusal = await run.api(registered.session).documents.cancel({
      params: { tenantId: owner.tenantId, docId: authorized.id },
      payload: { reason_code: "other", reason: "A developer trying to cancel." }
    }).then(() => undefined, (error: { code?: string }) => error.code)
    expect(refusal).toBe("forbidden")
    expect((await run.api(keyToken).documents.getForKey({ params: { docId: authorized.id } })).status).toBe(
      "authorized"
    )
    expect(problems()).toEqual([])
  })
})
