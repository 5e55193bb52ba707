/**
 * The dashboard speaks the customer's language and time (issue 30), in a real browser: instants as
 * Brasília wall times with the zone said (as the DANFSe prints them), refusals in the page's
 * language with the field named in its words (a registration with a bad CNPJ, a webhook to a
 * private address, a company registration field), municipality names where the API gives IBGE
 * codes, the plan and the quota month in words, and a revoked key showing when it was revoked.
 */
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { NewDocument } from "../../src/documents/Api.js"
import { allScopes } from "../../src/domain/Principal.js"
import { makePkcs12 } from "../support/certificates.js"
import {
  accessibilityViolations,
  type DashboardRun,
  hasChromium,
  newPerson,
  registerByApi,
  signInPage,
  startDashboard
} from "../support/Dashboard.js"
import { consultingService } from "../support/samples.js"

const MONTHS_PT = [
  "janeiro",
  "fevereiro",
  "março",
  "abril",
  "maio",
  "junho",
  "julho",
  "agosto",
  "setembro",
  "outubro",
  "novembro",
  "dezembro"
]
const MONTHS_EN = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December"
]

/** Brasília's wall clock ("16:11") at an instant: three hours behind UTC, with no daylight saving since 2019. */
const brasiliaClock = (instant: Date) => new Date(instant.getTime() - 3 * 3_600_000).toISOString().slice(11, 16)

const SHORT_MONTHS_PT = ["jan", "fev", "mar", "abr", "mai", "jun", "jul", "ago", "set", "out", "nov", "dez"]
const SHORT_MONTHS_EN = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sept", "Oct", "Nov", "Dec"]

/** An instant as the page writes it: "27 de nov. de 2026, 16:11 (Brasília)", "27 Nov 2026, 16:11 (Brasília)". */
const brasiliaDateTime = (instant: Date, lang: "pt" | "en") => {
  const wall = new Date(instant.getTime() - 3 * 3_600_000)
  const [day, month, year] = [wall.getUTCDate(), wall.getUTCMonth(), wall.getUTCFullYear()]
  const date = lang === "pt"
    ? `${day} de ${SHORT_MONTHS_PT[month]}. de ${year}`
    : `${day} ${SHORT_MONTHS_EN[month]} ${year}`
  return `${date}, ${brasiliaClock(instant)} (Brasília)`
}
const utcClock = (instant: Date) => instant.toISOString().slice(11, 16)

/** Anything of the API's English or its field paths that must not reach the Portuguese page. */
const ENGLISH_LEFTOVERS = /tax_id|must be|\["|\bat \[|invalid|is not valid|Expected|private|url:/i

const invoice: NewDocument = {
  type: "service_invoice",
  taker: {
    tax_id: "52998224725",
    name: "Maria da Silva",
    address: {
      street: "Avenida Presidente Vargas",
      number: "100",
      district: "Centro",
      municipality_code: "3304557",
      state: "RJ",
      postal_code: "20071000"
    }
  },
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" }
}

describe.runIf(hasChromium)("dashboard: the customer's language and time", () => {
  let run: DashboardRun
  beforeAll(async () => {
    run = await startDashboard()
  }, 120_000)
  afterAll(() => run?.close())

  /** Fills the register form with a company whose CNPJ's check digits are wrong, and sends it. */
  const registerWithBadCnpj = async (page: Page, labels: {
    readonly open: string
    readonly taxId: string
    readonly submit: string
  }) => {
    const person = newPerson("idioma")
    await page.getByRole("button", { name: labels.open }).click()
    await page.getByLabel(/^E-?mail$/).fill(person.email)
    await page.getByLabel(/^(Password|Senha)/).fill(person.password)
    await page.getByLabel(/^(Company name|Nome da empresa)$/).fill("Padaria Pão Quente Ltda")
    await page.getByLabel(labels.taxId).fill("11.222.333/0001-80")
    await page.getByRole("button", { name: labels.submit }).last().click()
    const alert = page.getByRole("alert")
    await alert.waitFor()
    return alert.innerText()
  }

  it("refuses a registration with an invalid CNPJ in Portuguese, naming the field in Portuguese", async () => {
    const { page, problems, context } = await run.open({ lang: "pt" })
    const text = await registerWithBadCnpj(page, {
      open: "Criar conta",
      taxId: "CNPJ ou CPF da empresa",
      submit: "Criar conta"
    })
    expect(text).toBe(
      "Alguns dados não são válidos. CNPJ ou CPF da empresa: não é um CNPJ ou CPF válido (confira os dígitos verificadores)."
    )
    expect(text).not.toMatch(ENGLISH_LEFTOVERS)
    expect(await accessibilityViolations(page)).toEqual([])
    expect(problems()).toEqual([])
    await context.close()

    // The English page names the same field in English, without the schema's path notation.
    const english = await run.open({ lang: "en" })
    const englishText = await registerWithBadCnpj(english.page, {
      open: "Create an account",
      taxId: "Company tax id",
      submit: "Create account"
    })
    expect(englishText).toMatch(/^Some of the data is not valid\. Company tax id \(CNPJ or CPF\): .*check digits/)
    expect(englishText).not.toContain("[\"")
    expect(english.problems()).toEqual([])
    await english.context.close()
  })

  it("says in Portuguese that another company proved the CNPJ, not that the e-mail is taken", async () => {
    const holder = await registerByApi(run, newPerson("comprovada"))
    const taxId = (await run.api(holder.session).tenants.get({ params: { tenantId: holder.tenantId! } })).tax_id
    const p12 = makePkcs12({ cn: `EMPRESA LTDA:${taxId}`, cnpjOid: taxId, password: "senha-do-certificado" })
    const uploaded = await fetch(`${run.base}/v1/tenants/${holder.tenantId}/credentials`, {
      method: "POST",
      headers: { authorization: `Bearer ${holder.session}`, "content-type": "application/json" },
      body: JSON.stringify({ pkcs12: Buffer.from(p12.pfx).toString("base64"), password: "senha-do-certificado" })
    })
    expect(uploaded.status, await uploaded.text()).toBe(201)

    const { page, problems } = await run.open({ lang: "pt" })
    const person = newPerson("atrasada")
    await page.getByRole("button", { name: "Criar conta" }).click()
    await page.getByLabel("E-mail").fill(person.email)
    await page.getByLabel(/^Senha/).fill(person.password)
    await page.getByLabel("Nome da empresa").fill("Outra Empresa Ltda")
    await page.getByLabel("CNPJ ou CPF da empresa").fill(taxId)
    await page.getByRole("button", { name: "Criar conta" }).last().click()
    const alert = page.getByRole("alert")
    await alert.waitFor()
    const text = await alert.innerText()
    expect(text).toBe(
      "Conflita com um registro que já existe. CNPJ ou CPF da empresa: já foi comprovado por outra empresa com o certificado dela."
    )
    expect(text).not.toContain("e-mail")
    expect(text).not.toMatch(ENGLISH_LEFTOVERS)
    expect(problems()).toEqual([])
  })

  it("shows the plan and the quota month in words, and times, municipalities and refusals in Portuguese", async () => {
    const person = newPerson("brasilia")
    const owner = await registerByApi(run, person)
    const tenantId = owner.tenantId!
    const api = run.api(owner.session)
    const key = await api.apiKeys.create({
      params: { tenantId },
      payload: { name: "retaguarda", environment: "test", scopes: allScopes }
    })
    const issued = await run.api(key.token).documents.issueForKey({ payload: invoice, headers: {} })
    let authorizedAt: Date | undefined
    for (let i = 0; i < 200 && authorizedAt === undefined; i++) {
      const document = await run.api(key.token).documents.getForKey({ params: { docId: issued.id } })
      authorizedAt = document.authority?.authorized_at
      if (authorizedAt === undefined) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(authorizedAt).toBeDefined()

    const { page, problems, screenshot } = await run.open({ lang: "pt" })
    await signInPage(page, person)

    // Overview: the plan and this month's quota in words, never "free" or "2026-11".
    const now = new Date()
    const period = now.toISOString().slice(0, 7)
    const main = page.getByRole("main")
    await main.getByRole("heading", {
      name: `Documentos de produção neste mês (${MONTHS_PT[now.getUTCMonth()]} de ${now.getUTCFullYear()})`
    }).waitFor()
    expect(await main.locator("dt", { hasText: "Plano" }).locator("+ dd").innerText()).toBe("Gratuito")
    const overview = await main.innerText()
    expect(overview).not.toContain(period)
    expect(overview).not.toMatch(/\bfree\b/)
    await screenshot("language-overview-pt")

    // The document: municipalities by name, the authorization time in Brasília.
    await page.goto(`${run.base}/#/documents/${issued.id}`)
    await main.getByRole("heading", { level: 1, name: `Documento nº ${issued.number}, série ${issued.series}` })
      .waitFor()
    await main.getByText("São Paulo/SP").waitFor()
    await main.getByText(/Avenida Presidente Vargas.*Rio de Janeiro\/RJ/).waitFor()
    const detail = await main.innerText()
    expect(detail).toContain(brasiliaDateTime(authorizedAt!, "pt"))
    expect(detail).not.toContain(`${utcClock(authorizedAt!)} (Brasília)`)
    expect(detail).not.toContain("UTC")
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("language-document-pt")

    // The company: the typed code's municipality, and a refused field explained in Portuguese.
    await page.getByRole("navigation").getByRole("link", { name: "Empresa" }).click()
    const code = page.getByLabel("Município (código IBGE de 7 dígitos)")
    await code.fill("3304557")
    await page.locator("#company-address-municipality_code-note").filter({ hasText: "Rio de Janeiro/RJ" }).waitFor()
    await code.fill("1234567")
    await page.locator("#company-address-municipality_code-note")
      .filter({ hasText: "O IBGE não lista nenhum município com este código." })
      .waitFor()
    await code.fill("3550308")
    await page.getByLabel("CEP").fill("123")
    await page.getByRole("button", { name: "Salvar cadastro" }).click()
    const cepError = page.locator("#company-address-postal_code-error")
    await cepError.waitFor()
    expect(await cepError.innerText()).toBe("informe os 8 dígitos do CEP")
    expect(await page.getByLabel("CEP").getAttribute("aria-invalid")).toBe("true")
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("language-company-pt")

    // A webhook to a private address: the refusal in Portuguese, naming the URL field.
    await page.getByRole("navigation").getByRole("link", { name: "Webhooks" }).click()
    await page.getByRole("button", { name: "Adicionar endpoint" }).first().click()
    const dialog = page.getByRole("dialog", { name: "Adicionar um endpoint de webhook" })
    await dialog.getByLabel("URL").fill("http://10.1.2.3/hooks")
    await dialog.getByRole("checkbox", { name: /^Todos os eventos/ }).check()
    await dialog.getByRole("button", { name: "Adicionar endpoint" }).click()
    const refusal = dialog.getByRole("alert")
    await refusal.waitFor()
    const refusalText = await refusal.innerText()
    expect(refusalText).toContain("URL do endpoint: use um endereço https público")
    expect(refusalText).not.toMatch(ENGLISH_LEFTOVERS)
    expect(problems()).toEqual([])
  })

  it("shows a revoked key's revocation time in Brasília, not the grace end of its earlier rotation", async () => {
    const person = newPerson("revogada")
    const owner = await registerByApi(run, person)
    const tenantId = owner.tenantId!
    const api = run.api(owner.session)
    const key = await api.apiKeys.create({
      params: { tenantId },
      payload: { name: "antiga", environment: "test", scopes: ["documents:read"] }
    })
    const rotated = await api.apiKeys.rotate({
      params: { tenantId, keyId: key.api_key.id },
      payload: { grace_days: 7 }
    })
    const revoked = await api.apiKeys.revoke({ params: { tenantId, keyId: key.api_key.id } })
    expect(revoked.revoked_at).not.toBeNull()
    const revokedAt = revoked.revoked_at!
    const graceEnd = rotated.previous.expires_at

    for (const lang of ["pt", "en"] as const) {
      const { page, problems, screenshot, context } = await run.open({ lang })
      await signInPage(page, person)
      // The overview, first: the plan and the month in this language's words.
      const now = new Date()
      const month = lang === "pt"
        ? `Documentos de produção neste mês (${MONTHS_PT[now.getUTCMonth()]} de ${now.getUTCFullYear()})`
        : `Live documents this month (${MONTHS_EN[now.getUTCMonth()]} ${now.getUTCFullYear()})`
      await page.getByRole("heading", { name: month }).waitFor()
      expect(await page.locator("dt", { hasText: lang === "pt" ? "Plano" : "Plan" }).locator("+ dd").innerText())
        .toBe(lang === "pt" ? "Gratuito" : "Free")
      await page.getByRole("navigation").getByRole("link", { name: lang === "pt" ? "Chaves de API" : "API keys" })
        .click()
      const row = page.getByRole("row").filter({ hasText: lang === "pt" ? "revogada" : "revoked" })
      await row.waitFor()
      const text = await row.innerText()
      expect(text).toContain(`${lang === "pt" ? "em" : "on"} ${brasiliaDateTime(revokedAt, lang)}`)
      // The grace period the revocation cut short is not what the row says.
      expect(text).not.toContain(brasiliaDateTime(graceEnd, lang))
      expect(text).not.toMatch(lang === "pt" ? /\b(até|desde)\b/ : /\b(until|since)\b/)
      expect(text).not.toContain("UTC")
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(`language-keys-${lang}`)
      expect(problems()).toEqual([])
      await context.close()
    }
  })
})
