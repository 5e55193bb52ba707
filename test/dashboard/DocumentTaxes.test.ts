/**
 * A document's whole tax content on the dashboard's detail, in a real browser (SPEC §6, §15): the
 * contract's B2B note with retentions (ISSQN, federal and totals groups), its export (foreign trade),
 * a note with an intermediary that withholds the ISS and the IBS/CBS group, a substitution's links
 * both ways, and a late cancellation refused with E0822 followed by the municipality's analysis,
 * in English and in Portuguese, on a desktop and at phone width.
 *
 * One service, one browser and one tenant for every case: the notes are issued together before the
 * first case, and each case only reads them (but the last, which asks for the analysis).
 */
import { Duration } from "effect"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { NewDocument } from "../../src/documents/Api.js"
import { b2bWithRetentionsExample, exportExample } from "../../src/domain/DocumentExamples.js"
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
  startDashboard,
  type WatchedPage
} from "../support/Dashboard.js"
import { consultingService, sampleTaker } from "../support/samples.js"
import { asServiceDocument } from "../support/serviceDocument.js"

type Document = DashboardDocument
type Lang = "en" | "pt"

const taker = sampleTaker
const service = consultingService

/** Centavos as the page writes them: "R$1,234.56" in English, "R$ 1.234,56" in Portuguese. */
const brl = (cents: number, lang: Lang) =>
  new Intl.NumberFormat(lang === "pt" ? "pt-BR" : "en-GB", { style: "currency", currency: "BRL" }).format(cents / 100)

/** A group of the detail (a region named by its heading) as label → value. */
const group = async (page: Page, name: string): Promise<Record<string, string>> => {
  const region = page.getByRole("region", { name, exact: true })
  await region.waitFor()
  const labels = await region.locator("th").allTextContents()
  const values = await region.locator("td").allTextContents()
  return Object.fromEntries(labels.map((label, i) => [label, values[i]]))
}

const regions = (page: Page) => page.locator("main section section h2").allTextContents()

describe.runIf(hasChromium)("dashboard: a document's tax content", () => {
  let run: DashboardRun
  let person: ReturnType<typeof newPerson>
  let keyToken: string
  let b2b: Document
  let exported: Document
  let intermediated: Document
  let original: Document
  let substitute: Document
  let late: Document

  const settled = (id: string, until: (document: Document) => boolean) =>
    documentWhen(run, keyToken, id, until, "settling")
  const authorized = (document: Document) => document.status === "authorized"
  const issue = async (payload: NewDocument) =>
    settled((await run.api(keyToken).documents.issueForKey({ payload, headers: {} })).id, authorized)

  // Two signed-in pages for every case: English on a desktop, Portuguese at phone width.
  const pages: Partial<Record<Lang, WatchedPage>> = {}
  const open = async (document: Document, options: { phone?: boolean; lang?: Lang } = {}) => {
    const lang = options.lang ?? "en"
    let watched = pages[lang]
    if (watched === undefined) {
      watched = await run.open(options)
      await signInPage(watched.page, person)
      pages[lang] = watched
    }
    await watched.page.goto(`${run.base}/#/documents/${document.id}`)
    const title = lang === "pt"
      ? `Documento nº ${document.number}, série ${document.series}`
      : `Document no. ${document.number}, series ${document.series}`
    await watched.page.getByRole("heading", { level: 1, name: title, exact: true }).waitFor()
    return watched
  }

  beforeAll(async () => {
    run = await startDashboard({
      rateLimit: { perSecond: 100_000, burst: 100_000 },
      issuance: { concurrency: 4, pollInterval: Duration.millis(50), lease: Duration.seconds(60) },
      // The municipality's analysis is asked about every `maxDelay`: long enough for the page (which
      // reads every 3 s) to show the request in analysis before the decision comes.
      retry: { baseDelay: Duration.seconds(1), maxDelay: Duration.seconds(7), window: Duration.seconds(60) }
    })
    person = newPerson("taxes")
    const registered = await registerByApi(run, person)
    const key = await run.api(registered.session).apiKeys.create({
      params: { tenantId: registered.tenantId! },
      payload: { name: "backend", environment: "test", scopes: allScopes }
    })
    keyToken = key.token
    ;[b2b, exported, intermediated, original, late] = await Promise.all([
      issue(b2bWithRetentionsExample),
      issue(exportExample),
      issue({
        type: "service_invoice",
        taker,
        intermediary: {
          tax_id: "60701190000104",
          name: "Agência Intermediária Ltda",
          municipal_registration: "12345678",
          phone: "1133335555"
        },
        service,
        amounts: { services: 100_000, iss_rate: "5" },
        iss: { withheld_by: "intermediary" },
        ibs_cbs: { operation_indicator: "100301", personal_use: true, cst: "000", class_code: "000001" },
        approximate_taxes: { amounts: { federal: 13_450, state: 0, municipal: 5_000 } }
      }),
      issue({ type: "service_invoice", taker, service, amounts: { services: 150_000, iss_rate: "2.00" } }),
      issue({
        type: "service_invoice",
        taker,
        service,
        amounts: { services: 80_000, iss_rate: "2.00" },
        notes: "simulate:cancel-reject"
      })
    ])
    const replacing = await run.api(keyToken).substitution.substituteForKey({
      params: { docId: original.id },
      headers: {},
      payload: {
        document: { type: "service_invoice", taker, service, amounts: { services: 160_000, iss_rate: "2.00" } },
        reason_code: "other",
        reason: "Valor do serviço informado a menor"
      }
    })
    await run.api(keyToken).documents.cancelForKey({
      params: { docId: late.id },
      payload: { reason_code: "service_not_provided", reason: "O serviço não foi prestado ao cliente." }
    })
    ;[substitute, original, late] = await Promise.all([
      settled(replacing.id, authorized),
      settled(original.id, (document) => document.status === "substituted"),
      settled(late.id, (document) => authorized(document) && document.cancellation?.error !== null)
    ])
  }, 120_000)
  afterAll(() => run?.close())

  it("shows a B2B note's ISSQN, federal retentions, totals and approximate taxes, in English and Portuguese", async () => {
    const { amounts } = b2b
    const en = await open(b2b)
    expect(await regions(en.page)).toEqual([
      "Municipal taxation (ISSQN)",
      "Federal taxation",
      "Amounts",
      "Approximate taxes (Law 12,741/2012)"
    ])
    expect(await group(en.page, "Municipal taxation (ISSQN)")).toEqual({
      "ISS taxation": "Taxable, withheld by the taker",
      "Tax base": brl(amounts.base, "en"),
      "ISS rate": "2.00 %",
      "ISS amount": "R$198.00",
      "ISS withheld": brl(amounts.iss_withheld, "en")
    })
    expect(await group(en.page, "Federal taxation")).toEqual({
      "PIS/COFINS tax situation (CST)": "01",
      "PIS/COFINS base": "R$10,000.00",
      "PIS rate": "0.65 %",
      "PIS": "R$65.00",
      "COFINS rate": "3.00 %",
      "COFINS": "R$300.00",
      "PIS/COFINS withholding": "PIS, COFINS, CSLL: withheld",
      "Social security (CP/INSS) withheld": "R$1,100.00",
      "Income tax (IRRF) withheld": "R$150.00",
      "CSLL withheld": "R$100.00",
      "Federal taxes withheld": brl(amounts.federal_withheld, "en")
    })
    expect(await group(en.page, "Amounts")).toEqual({
      "Figures": "as stated on the authorized note",
      "Services": "R$10,000.00",
      "Unconditional discount": "R$100.00",
      "Deductions": "R$0.00",
      "ISS withheld": brl(amounts.iss_withheld, "en"),
      "Federal taxes withheld": brl(amounts.federal_withheld, "en"),
      "Total withheld": brl(amounts.total_withheld, "en"),
      "Net value": brl(amounts.net, "en"),
      "Total": "R$10,000.00"
    })
    expect(await group(en.page, "Approximate taxes (Law 12,741/2012)")).toEqual({
      Federal: "13.45 %",
      State: "0 %",
      Municipal: "2.00 %"
    })
    expect(await accessibilityViolations(en.page)).toEqual([])
    await en.screenshot("document-taxes-b2b")
    expect(en.problems()).toEqual([])

    const pt = await open(b2b, { phone: true, lang: "pt" })
    expect(await group(pt.page, "Tributação municipal (ISSQN)")).toMatchObject({
      "Tributação do ISS": "Tributável, retido pelo tomador",
      "Alíquota do ISS": "2,00 %",
      "Valor do ISS": "R$\u00a0198,00"
    })
    expect(await group(pt.page, "Tributação federal")).toMatchObject({
      "Situação tributária do PIS/COFINS (CST)": "01",
      "Alíquota do PIS": "0,65 %",
      "PIS": "R$\u00a065,00",
      "Alíquota da COFINS": "3,00 %",
      "COFINS": "R$\u00a0300,00",
      "Retenção do PIS/COFINS": "PIS, COFINS, CSLL: retido",
      "Contribuição previdenciária (CP/INSS) retida": "R$\u00a01.100,00",
      "IRRF retido": "R$\u00a0150,00",
      "CSLL retida": "R$\u00a0100,00"
    })
    expect(await group(pt.page, "Valor total da NFS-e")).toMatchObject({
      "Valores": "conforme a nota autorizada",
      "Valor do serviço": "R$\u00a010.000,00",
      "Desconto incondicionado": "R$\u00a0100,00",
      "Total de retenções": brl(amounts.total_withheld, "pt"),
      "Valor líquido": brl(amounts.net, "pt")
    })
    expect(await group(pt.page, "Totais aproximados dos tributos (Lei 12.741/2012)")).toEqual({
      Federais: "13,45 %",
      Estaduais: "0 %",
      Municipais: "2,00 %"
    })
    expect(await fitsTheScreen(pt.page)).toBe(true)
    expect(await accessibilityViolations(pt.page)).toEqual([])
    await pt.screenshot("document-taxes-b2b-phone")
    expect(pt.problems()).toEqual([])
  })

  it("shows an export's foreign trade and its untaxed ISS, with no federal group", async () => {
    const en = await open(exported)
    expect(await regions(en.page)).toEqual(["Foreign trade", "Municipal taxation (ISSQN)", "Amounts"])
    expect(await group(en.page, "Foreign trade")).toEqual({
      "Mode of provision": "cross-border",
      "Relationship between the parties": "none",
      "Currency (BACEN code)": "220",
      "Value in that currency": "5,000.00",
      "Shared with the foreign-trade secretariat (MDIC)": "yes"
    })
    expect(await group(en.page, "Municipal taxation (ISSQN)")).toMatchObject({
      "ISS taxation": "Export, not withheld",
      "Country of the result": "US",
      "ISS amount": "—"
    })
    expect(await group(en.page, "Amounts")).toMatchObject({ "Net value": "R$25,000.00", "Total withheld": "R$0.00" })
    const taker = await en.page.locator("main").textContent()
    expect(taker).toContain("94-1234567")
    expect(taker).toContain("Market Street, 525, San Francisco, US")
    expect(en.problems()).toEqual([])

    const pt = await open(exported, { phone: true, lang: "pt" })
    expect(await group(pt.page, "Comércio exterior")).toEqual({
      "Modo de prestação": "transfronteiriço",
      "Vínculo entre as partes": "sem vínculo",
      "Moeda (código BACEN)": "220",
      "Valor na moeda": "5.000,00",
      "Compartilhada com a SECEX/MDIC": "sim"
    })
    expect(await group(pt.page, "Tributação municipal (ISSQN)")).toMatchObject({
      "Tributação do ISS": "Exportação, não retido"
    })
    expect(await fitsTheScreen(pt.page)).toBe(true)
    expect(await accessibilityViolations(pt.page)).toEqual([])
    expect(pt.problems()).toEqual([])
  })

  it("shows the intermediary that withholds the ISS, the IBS/CBS group and approximate amounts", async () => {
    const en = await open(intermediated)
    expect(await regions(en.page)).toEqual([
      "Municipal taxation (ISSQN)",
      "Amounts",
      "Approximate taxes (Law 12,741/2012)",
      "IBS and CBS (tax reform)"
    ])
    const intermediary = en.page.locator(
      "xpath=//h2[.='Intermediary']/following-sibling::dl[1]"
    )
    const parties = await intermediary.textContent()
    expect(parties).toContain("Agência Intermediária Ltda")
    expect(parties).toContain("60.701.190/0001-04")
    expect(parties).toContain("12345678")
    expect(parties).toContain("1133335555")
    expect(await group(en.page, "Municipal taxation (ISSQN)")).toMatchObject({
      "ISS taxation": "Taxable, withheld by the intermediary",
      "ISS withheld": brl(intermediated.amounts.iss_withheld, "en")
    })
    const figures = intermediated.amounts.ibs_cbs!
    expect(await group(en.page, "IBS and CBS (tax reform)")).toMatchObject({
      "Operation indicator (cIndOp)": "100301",
      "For the acquirer's personal use": "yes",
      "Tax situation (CST)": "000",
      "Tax classification (cClassTrib)": "000001",
      "IBS/CBS base (vBC)": brl(figures.base, "en"),
      "CBS rate": "0.90 %",
      "CBS": brl(figures.cbs, "en"),
      "State IBS": brl(figures.state_ibs, "en"),
      "IBS total": brl(figures.ibs_total, "en"),
      "Note total (vTotNF)": brl(figures.note_total, "en")
    })
    expect(figures.cbs).toBeGreaterThan(0)
    expect(await group(en.page, "Approximate taxes (Law 12,741/2012)")).toEqual({
      Federal: "R$134.50",
      State: "R$0.00",
      Municipal: "R$50.00"
    })
    expect(en.problems()).toEqual([])

    const pt = await open(intermediated, { phone: true, lang: "pt" })
    expect(await pt.page.locator("xpath=//h2[.='Intermediário']/following-sibling::dl[1]").textContent())
      .toContain("Inscrição municipal12345678")
    expect(await group(pt.page, "IBS e CBS (reforma tributária)")).toMatchObject({
      "Indicador da operação (cIndOp)": "100301",
      "Uso ou consumo pessoal do adquirente": "sim",
      "Situação tributária (CST)": "000",
      "Classificação tributária (cClassTrib)": "000001",
      "CBS": brl(figures.cbs, "pt"),
      "Alíquota da CBS": "0,90 %"
    })
    expect(await group(pt.page, "Tributação municipal (ISSQN)")).toMatchObject({
      "Tributação do ISS": "Tributável, retido pelo intermediário"
    })
    expect(await group(pt.page, "Totais aproximados dos tributos (Lei 12.741/2012)")).toMatchObject({
      Federais: "R$\u00a0134,50"
    })
    expect(await fitsTheScreen(pt.page)).toBe(true)
    expect(await accessibilityViolations(pt.page)).toEqual([])
    await pt.screenshot("document-taxes-intermediary-phone")
    expect(pt.problems()).toEqual([])
  })

  it("links a substituted note and its substitute both ways, the reason in words", async () => {
    const { page, problems, screenshot } = await open(original)
    expect(await page.locator("dl.facts .badge").first().textContent()).toBe("substituted")
    await page.getByRole("heading", { level: 2, name: "Substitution" }).waitFor()
    const forward = page.getByRole("link", { name: substitute.id })
    expect(await forward.getAttribute("href")).toBe(`#/documents/${substitute.id}`)
    // The replaced note offers no cancellation: it is final.
    expect(await page.getByRole("button", { name: "Cancel document" }).count()).toBe(0)
    await forward.click()
    await page.getByRole("heading", { level: 1, name: `Document no. ${substitute.number}, series 1` }).waitFor()
    const facts = await page.locator("xpath=//h2[.='Substitution']/following-sibling::dl[1]").textContent()
    expect(facts).toContain("other — Valor do serviço informado a menor")
    expect(facts).toContain(original.authority!.access_key)
    const back = page.getByRole("link", { name: original.id })
    expect(await back.getAttribute("href")).toBe(`#/documents/${original.id}`)
    expect(await group(page, "Amounts")).toMatchObject({ Services: "R$1,600.00" })
    await screenshot("document-substitute")
    expect(problems()).toEqual([])

    const pt = await open(substitute, { lang: "pt", phone: true })
    const ptFacts = await pt.page.locator("xpath=//h2[.='Substituição']/following-sibling::dl[1]").textContent()
    expect(ptFacts).toContain("Substitui")
    expect(ptFacts).toContain("outros — Valor do serviço informado a menor")
    expect(ptFacts).toContain("Chave de acesso da nota substituída")
    expect(pt.problems()).toEqual([])
  })

  it("after a late cancellation is refused (E0822), asks for the municipality's analysis and follows it", async () => {
    const { page, problems, screenshot } = await open(late)
    const cancellation = page.locator("xpath=//h2[.='Cancellation']/following-sibling::dl[1]")
    const state = cancellation.locator(".badge")
    expect(await state.textContent()).toBe("refused by the authority")
    expect(await cancellation.textContent()).toContain("E0822")
    await page.getByText("because the municipality's deadline for it has passed (E0822)").waitFor()
    // A plain cancellation would be refused again: the analysis takes its place.
    expect(await page.getByRole("button", { name: "Cancel document" }).count()).toBe(0)
    await page.getByRole("button", { name: "Ask for the municipality's analysis" }).click()
    const dialog = page.getByRole("dialog", {
      name: `Ask for the analysis of the cancellation of document no. ${late.number}`
    })
    await dialog.waitFor()
    // The refused request's reason is offered again.
    expect(await dialog.getByLabel("Explanation").inputValue()).toBe(late.cancellation!.reason)
    expect(await dialog.getByLabel("Reason").inputValue()).toBe("service_not_provided")
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("document-analysis-dialog")
    await dialog.getByRole("button", { name: "Request analysis" }).click()
    await dialog.waitFor({ state: "hidden" })
    await page.locator("main").getByText("Analysis requested.").waitFor()
    const server = asServiceDocument(await run.api(keyToken).documents.getForKey({ params: { docId: late.id } }))
    expect(server.cancellation).toMatchObject({ analysis: true, reason_code: "service_not_provided" })
    expect(await cancellation.textContent()).toContain("analysis by the municipality (e101103)")

    // The page reads the document while it is in progress: in analysis, then the decision.
    await expect.poll(() => page.locator("dl.facts .badge").first().textContent(), { timeout: 15_000 })
      .toBe("cancellation in analysis")
    expect(await state.textContent()).toBe("in analysis")
    await screenshot("document-in-analysis")
    await expect.poll(() => page.locator("dl.facts .badge").first().textContent(), { timeout: 20_000 })
      .toBe("cancelled")
    expect(await state.textContent()).toBe("cancelled")
    expect(await cancellation.textContent()).toContain("analysis by the municipality (e101103)")
    expect(problems()).toEqual([])

    const pt = await open(late, { lang: "pt", phone: true })
    const ptFacts = await pt.page.locator("xpath=//h2[.='Cancelamento']/following-sibling::dl[1]").textContent()
    expect(ptFacts).toContain("análise fiscal pelo município (e101103)")
    expect(ptFacts).toContain("Serviço não prestado")
    expect(await fitsTheScreen(pt.page)).toBe(true)
    expect(pt.problems()).toEqual([])
  })
})
