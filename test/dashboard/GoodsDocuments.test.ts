/**
 * Goods invoices in the dashboard, in a real browser: an NF-e and an NFC-e issued by a backend
 * appear in the documents list beside a service invoice, each with its type, recipient and total,
 * and the list filters by type;
 * an NFC-e's detail shows its items, totals and the authority's 44-character key, downloads its
 * XML and its DANFE NFC-e (PDF), and is cancelled from the dashboard, in English on a desktop;
 * an NF-e in Portuguese on a phone.
 */
import { Duration } from "effect"
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { consumerInvoiceExample, productInvoiceExample } from "../../src/domain/GoodsExamples.js"
import { allScopes } from "../../src/domain/Principal.js"
import {
  accessibilityViolations,
  type DashboardRun,
  fitsTheScreen,
  hasChromium,
  newPerson,
  registerByApi,
  signInPage,
  startDashboard
} from "../support/Dashboard.js"
import { completeRegistration } from "../support/registration.js"
import { consultingService, sampleTaker } from "../support/samples.js"

type AnyDocument = Awaited<ReturnType<ReturnType<DashboardRun["api"]>["documents"]["getForKey"]>>

describe.runIf(hasChromium)("dashboard goods documents", () => {
  let run: DashboardRun
  let person: ReturnType<typeof newPerson>
  let keyToken: string
  let nfe: AnyDocument
  let nfce: AnyDocument

  const authorized = async (id: string): Promise<AnyDocument> => {
    for (let i = 0; i < 400; i++) {
      const document = await run.api(keyToken).documents.getForKey({ params: { docId: id } })
      if (document.status === "authorized") return document
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`document ${id} was not authorized`)
  }

  beforeAll(async () => {
    run = await startDashboard({
      loginRateLimit: { perMinute: 100_000 },
      rateLimit: { perSecond: 100_000, burst: 100_000 },
      issuance: { concurrency: 4, pollInterval: Duration.millis(50), lease: Duration.seconds(60) }
    })
    person = newPerson("goods")
    const owner = await registerByApi(run, person)
    const tenantId = owner.tenantId!
    await run.api(owner.session).tenants.update({
      params: { tenantId },
      payload: { registration: { ...completeRegistration, state_registration: "110042490114", crt: "normal" } }
    })
    const key = await run.api(owner.session).apiKeys.create({
      params: { tenantId },
      payload: { name: "backend", environment: "test", scopes: allScopes }
    })
    keyToken = key.token
    const issue = (payload: Parameters<ReturnType<DashboardRun["api"]>["documents"]["issueForKey"]>[0]["payload"]) =>
      run.api(keyToken).documents.issueForKey({ payload, headers: {} })
    nfe = await authorized((await issue(productInvoiceExample)).id)
    nfce = await authorized((await issue(consumerInvoiceExample)).id)
    await issue({
      type: "service_invoice",
      taker: sampleTaker,
      service: consultingService,
      amounts: { services: 150000, iss_rate: "2.00" }
    })
  }, 120_000)
  afterAll(() => run?.close())

  it("lists goods invoices beside a service invoice, each with its type, recipient and total", async () => {
    const { page, problems, screenshot } = await run.open()
    await signInPage(page, person)
    await page.getByRole("navigation").getByRole("link", { name: "Documents" }).click()
    const rows = page.locator("table.documents tbody tr")
    await expect.poll(() => rows.count()).toBe(3)
    const nfeRow = rows.filter({ hasText: productInvoiceExample.reference })
    expect(await nfeRow.textContent()).toContain("NF-e (goods)")
    expect(await nfeRow.textContent()).toContain("Auto Peças Carioca S.A.")
    expect(await nfeRow.textContent()).toContain("R$178.22")
    const nfceRow = rows.filter({ hasText: consumerInvoiceExample.reference })
    expect(await nfceRow.textContent()).toContain("NFC-e (consumer)")
    // An NFC-e to an unnamed consumer; vNF 250,00 − 6,31 of change = 243,69.
    expect(await nfceRow.textContent()).toContain("R$243.69")
    // The type filter narrows the list to the NF-e.
    await page.locator("form.filters").getByLabel("Type").selectOption("product_invoice")
    await page.locator("form.filters").getByRole("button", { name: "Apply filters" }).click()
    await expect.poll(() => rows.count()).toBe(1)
    expect(await rows.first().textContent()).toContain(productInvoiceExample.reference)
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("goods-documents-list")
    expect(problems()).toEqual([])
  })

  it("shows an NFC-e's items, totals and access key, downloads its XML and its DANFE", async () => {
    const { page, problems, screenshot } = await run.open()
    await signInPage(page, person)
    await page.goto(`${run.base}/#/documents/${nfce.id}`)
    await page.getByRole("heading", { level: 1, name: `Document no. ${nfce.number}, series ${nfce.series}` }).waitFor()
    const main = page.locator("main")
    const text = await main.textContent()
    expect(text).toContain("NFC-e (consumer)")
    expect(text).toContain("Consumer not identified.")
    expect(text).toContain(nfce.authority!.access_key)
    const items = main.locator("table tbody tr")
    expect(await items.count()).toBe(2)
    expect(await items.nth(0).textContent()).toContain("27101259")
    expect(await items.nth(1).textContent()).toContain("Água mineral 500 ml")
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      main.getByRole("button", { name: "Download XML" }).click()
    ])
    expect(download.suggestedFilename()).toBe(`NFCe-${nfce.authority!.access_key}.xml`)
    const xml = readFileSync((await download.path())!, "utf8")
    expect(xml).toContain(`<chNFe>${nfce.authority!.access_key}</chNFe>`)
    const [pdf] = await Promise.all([
      page.waitForEvent("download"),
      main.getByRole("button", { name: "Download PDF (DANFE)" }).click()
    ])
    expect(pdf.suggestedFilename()).toBe(`NFCe-${nfce.authority!.access_key}.pdf`)
    expect(readFileSync((await pdf.path())!).subarray(0, 5).toString("latin1")).toBe("%PDF-")
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("goods-document-detail")
    expect(problems()).toEqual([])
  })

  it("cancels an NFC-e from its detail: the explanation only, then cancelled with the event's protocol", async () => {
    const { page, problems } = await run.open()
    await signInPage(page, person)
    await page.goto(`${run.base}/#/documents/${nfce.id}`)
    await page.getByRole("heading", { level: 1, name: `Document no. ${nfce.number}, series ${nfce.series}` }).waitFor()
    await page.getByRole("button", { name: "Cancel document" }).click()
    const dialog = page.getByRole("dialog", { name: `Cancel document no. ${nfce.number}` })
    // A goods invoice's event has no reason code: the dialog asks for the explanation only.
    expect(await dialog.getByLabel("Reason").count()).toBe(0)
    const reason = "Venda registrada em duplicidade no caixa."
    await dialog.getByLabel("Explanation").fill(reason)
    await dialog.getByRole("button", { name: "Request cancellation" }).click()
    await dialog.waitFor({ state: "hidden" })
    const status = page.locator("dl.facts").first().locator(".badge").first()
    await expect.poll(async () => {
      const refresh = page.getByRole("button", { name: "Refresh" })
      if (await refresh.isEnabled()) await refresh.click()
      return status.textContent()
    }, { timeout: 15_000 }).toBe("cancelled")
    const server = await run.api(keyToken).documents.getForKey({ params: { docId: nfce.id } })
    expect(server.status).toBe("cancelled")
    expect(server.type !== "service_invoice" && server.cancellation?.reason).toBe(reason)
    const text = await page.locator("main").textContent()
    expect(text).toContain("cancellation by the issuer (event 110111)")
    expect(text).toContain(reason)
    expect(problems()).toEqual([])
  })

  it("shows an NF-e in Portuguese on a phone, fitting the screen", async () => {
    const { page, problems } = await run.open({ phone: true, lang: "pt" })
    await signInPage(page, person)
    await page.goto(`${run.base}/#/documents/${nfe.id}`)
    // The detail's own heading, not the one shown while the document loads.
    await page.getByRole("heading", { level: 1, name: `Documento nº ${nfe.number}, série ${nfe.series}` }).waitFor()
    const text = await page.locator("main").textContent()
    expect(text).toContain("NF-e (mercadorias)")
    expect(text).toContain("Destinatário")
    expect(text).toContain("Auto Peças Carioca S.A.")
    expect(await fitsTheScreen(page)).toBe(true)
    expect(problems()).toEqual([])
  })
})
