/**
 * Finding and copying in a real browser, in both languages (SPEC §6, §15): the documents list
 * searched by taker (CPF/CNPJ with or without punctuation, a part of the name whatever its case
 * and accents), by NFS-e number and by DPS number, the search kept in the address; the list's
 * NFS-e number column; the navigation link showing the whole list again; copying a document's
 * access key and id, an API key's token hint and id; the test badge's one colour; one sign-in button.
 */
import { Duration } from "effect"
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
  newPerson,
  registerByApi,
  signInPage,
  startDashboard
} from "../support/Dashboard.js"
import { consultingService } from "../support/samples.js"
import { cnpj } from "../support/taxIds.js"

type Document = DashboardDocument
type Lang = "en" | "pt"

const words = {
  en: {
    documents: "Documents",
    keys: "API keys",
    test: "Test",
    search: "Search documents",
    searchBy: "Search by",
    nfse: "NFS-e number",
    dps: "DPS number",
    digitsOnly: "Type the number's digits only.",
    copyAccessKey: "Copy access key",
    copyId: "Copy document id",
    copied: "Copied to the clipboard",
    copyHint: "Copy the token hint of backend",
    copyKeyId: "Copy the key id of backend",
    signIn: "Sign in",
    detail: (document: Document) => `Document no. ${document.number}, series ${document.series}`,
    row: (document: Document) => `No. ${document.number} · series ${document.series}`
  },
  pt: {
    documents: "Documentos",
    keys: "Chaves de API",
    test: "Teste",
    search: "Buscar documentos",
    searchBy: "Buscar por",
    nfse: "Número da NFS-e",
    dps: "Número da DPS",
    digitsOnly: "Digite apenas os algarismos do número.",
    copyAccessKey: "Copiar chave de acesso",
    copyId: "Copiar id do documento",
    copied: "Copiado para a área de transferência",
    copyHint: "Copiar o final do token de backend",
    copyKeyId: "Copiar o id da chave backend",
    signIn: "Entrar",
    detail: (document: Document) => `Documento nº ${document.number}, série ${document.series}`,
    row: (document: Document) => `Nº ${document.number} · série ${document.series}`
  }
} as const

const invoice = (taker: { readonly tax_id: string; readonly name: string }): NewDocument => ({
  type: "service_invoice",
  taker,
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" }
})

describe.runIf(hasChromium)("dashboard finding and copying", () => {
  let run: DashboardRun
  let person: ReturnType<typeof newPerson>
  let maria: Document
  let joao: Document
  let backendKey: { readonly id: string; readonly hint: string }
  const company = cnpj()

  beforeAll(async () => {
    run = await startDashboard({
      loginRateLimit: { perMinute: 100_000 },
      rateLimit: { perSecond: 100_000, burst: 100_000 },
      issuance: { concurrency: 4, pollInterval: Duration.millis(50), lease: Duration.seconds(60) }
    })
    person = newPerson("finder")
    const owner = await registerByApi(run, person)
    const key = await run.api(owner.session).apiKeys.create({
      params: { tenantId: owner.tenantId! },
      payload: { name: "backend", environment: "test", scopes: allScopes }
    })
    backendKey = key.api_key
    const backend = run.api(key.token)
    const authorized = async (body: NewDocument) => {
      const { id } = await backend.documents.issueForKey({ payload: body, headers: {} })
      return documentWhen(run, key.token, id, (document) => document.status === "authorized", "authorized")
    }
    maria = await authorized(invoice({ tax_id: "52998224725", name: "Maria da Silva" }))
    joao = await authorized(invoice({ tax_id: company, name: "João Comércio Ltda" }))
    // A test endpoint, for its badge; the documents above were settled before it existed, so it gets no delivery.
    await run.api(owner.session).webhooks.createEndpoint({
      params: { tenantId: owner.tenantId! },
      payload: { url: "https://erp.example.com/hooks", events: ["document.authorized"], environment: "test" }
    })
  }, 120_000)
  afterAll(() => run?.close())

  const documentsPage = async (lang: Lang, phone = false) => {
    const watched = await run.open({ lang, phone })
    await signInPage(watched.page, person)
    await watched.page.getByRole("navigation").getByRole("link", { name: words[lang].documents }).click()
    await watched.page.getByRole("heading", { level: 1, name: words[lang].documents }).waitFor()
    return watched
  }

  /** The rows' links, once the list shows exactly `expected` (order: newest first). */
  const shows = async (page: Page, lang: Lang, expected: ReadonlyArray<Document>) => {
    const links = page.locator("table.documents tbody tr td:first-child a")
    await expect.poll(() => links.allTextContents()).toEqual(expected.map(words[lang].row))
  }

  /** The search the address holds (`#/documents?by=…&q=…`). */
  const addressQuery = (page: Page) => {
    const query = new URLSearchParams(new URL(page.url()).hash.split("?")[1] ?? "")
    return { by: query.get("by"), q: query.get("q") }
  }

  for (const lang of ["en", "pt"] as const) {
    it(`searches documents by taker, NFS-e number and DPS number (${lang})`, async () => {
      const w = words[lang]
      const { page, problems } = await documentsPage(lang)
      await shows(page, lang, [joao, maria])
      // The list shows each note's NFS-e number.
      const joaoRow = page.locator("table.documents tbody tr").filter({ hasText: w.row(joao) })
      expect(await joaoRow.textContent()).toContain(joao.authority!.nfse_number!)

      const search = page.getByRole("searchbox", { name: w.search })
      /** Types a search, waits until the page applied it (the address says so), then checks the rows. */
      const searchFor = async (typed: string, expected: ReadonlyArray<Document>, by?: "nfse" | "dps") => {
        await search.fill(typed)
        const kept = typed === "" ? { by: null, q: null } : { by: by ?? null, q: typed }
        await expect.poll(() => addressQuery(page)).toEqual(kept)
        await shows(page, lang, expected)
      }
      const punctuated = `${company.slice(0, 2)}.${company.slice(2, 5)}.${company.slice(5, 8)}/${
        company.slice(8, 12)
      }-${company.slice(12)}`
      // Each search finds the other document than the one before, so a stale list cannot pass.
      await searchFor("529.982.247-25", [maria])
      await searchFor(punctuated, [joao])
      await searchFor("52998224725", [maria])
      await searchFor("joao", [joao])
      await searchFor("SILVA", [maria])
      await searchFor("comércio lt", [joao])
      // The search is kept in the address: a reload shows the same search and result.
      await page.reload()
      await shows(page, lang, [joao])
      expect(await page.getByRole("searchbox", { name: w.search }).inputValue()).toBe("comércio lt")

      await page.getByLabel(w.searchBy).selectOption("nfse")
      await searchFor(maria.authority!.nfse_number!, [maria], "nfse")
      await searchFor(joao.authority!.nfse_number!, [joao], "nfse")
      await page.getByLabel(w.searchBy).selectOption("dps")
      await searchFor(String(maria.number), [maria], "dps")
      await searchFor(String(joao.number), [joao], "dps")
      await search.fill("12a")
      await page.getByRole("alert").filter({ hasText: w.digitsOnly }).waitFor()
      await searchFor("", [joao, maria])
      expect(await accessibilityViolations(page)).toEqual([])
      expect(problems()).toEqual([])
    }, 60_000)

    it(`shows the whole list again when the navigation link is followed during a search (${lang})`, async () => {
      const w = words[lang]
      const { page, problems } = await documentsPage(lang)
      const search = page.getByRole("searchbox", { name: w.search })
      await search.fill("joao")
      await expect.poll(() => addressQuery(page)).toEqual({ by: null, q: "joao" })
      await shows(page, lang, [joao])
      await page.getByRole("navigation").getByRole("link", { name: w.documents }).click()
      await expect.poll(() => addressQuery(page)).toEqual({ by: null, q: null })
      await shows(page, lang, [joao, maria])
      expect(await search.inputValue()).toBe("")
      expect(problems()).toEqual([])
    }, 60_000)

    it(`copies an API key's token hint and id (${lang})`, async () => {
      const w = words[lang]
      const { page, problems } = await documentsPage(lang, true)
      await page.getByRole("navigation").getByRole("link", { name: w.keys }).click()
      await page.getByRole("heading", { level: 1, name: w.keys }).waitFor()
      const copied = () => page.evaluate(() => navigator.clipboard.readText())
      await page.getByRole("button", { name: w.copyHint }).click()
      await expect.poll(copied).toBe(backendKey.hint)
      await page.getByRole("status").filter({ hasText: w.copied }).first().waitFor()
      await page.getByRole("button", { name: w.copyKeyId }).click()
      await expect.poll(copied).toBe(backendKey.id)
      expect(await accessibilityViolations(page)).toEqual([])
      expect(problems()).toEqual([])
    }, 60_000)

    it(`copies a document's access key and id (${lang})`, async () => {
      const w = words[lang]
      const { page, problems } = await documentsPage(lang, true)
      await page.getByRole("link", { name: w.row(joao) }).click()
      await page.getByRole("heading", { level: 1, name: w.detail(joao) }).waitFor()

      await page.getByRole("button", { name: w.copyAccessKey }).click()
      await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(joao.authority!.access_key)
      await page.getByRole("status").filter({ hasText: w.copied }).first().waitFor()
      await page.getByRole("button", { name: w.copyId }).click()
      await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(joao.id)
      expect(await accessibilityViolations(page)).toEqual([])
      expect(problems()).toEqual([])
    }, 60_000)

    it(`shows the test badge in one colour on every screen (${lang})`, async () => {
      const w = words[lang]
      const { page, problems } = await documentsPage(lang)
      const testBadgeColours = async () => {
        const badge = page.locator(".badge", { hasText: new RegExp(`^${w.test}$`, "i") }).first()
        await badge.waitFor()
        return badge.evaluate((element) => {
          const style = getComputedStyle(element)
          return { color: style.color, background: style.backgroundColor, border: style.borderColor }
        })
      }
      const onDocuments = await testBadgeColours()
      await page.getByRole("navigation").getByRole("link", { name: w.keys }).click()
      await page.getByRole("heading", { level: 1, name: w.keys }).waitFor()
      expect(await testBadgeColours()).toEqual(onDocuments)
      await page.getByRole("navigation").getByRole("link", { name: "Webhooks" }).click()
      await page.getByRole("heading", { level: 1, name: "Webhooks" }).waitFor()
      expect(await testBadgeColours()).toEqual(onDocuments)
      expect(problems()).toEqual([])
    }, 60_000)

    it(`shows one sign-in button (${lang})`, async () => {
      const { page, problems } = await run.open({ lang })
      const signIn = page.getByRole("button", { name: words[lang].signIn, exact: true })
      await signIn.first().waitFor()
      expect(await signIn.count()).toBe(1)
      expect(await accessibilityViolations(page)).toEqual([])
      expect(problems()).toEqual([])
    })
  }
})
