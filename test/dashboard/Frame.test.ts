/**
 * The dashboard's frame in a real browser (SPEC §15): registration with a tenant, the session kept
 * in this tab's sessionStorage only (never localStorage, never the URL), the Content-Security-Policy
 * really enforced, both languages, the tenant switcher, the overview's quota and chart, a
 * phone-width screen, signing out, and a session ended elsewhere sending the person back to sign in.
 */
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  accessibilityViolations,
  type DashboardRun,
  hasChromium,
  joinByInvitation,
  newPerson,
  registerByApi,
  registerInPage,
  signInPage,
  startDashboard
} from "../support/Dashboard.js"
import { cnpj } from "../support/fixtures.js"
import { completeRegistration } from "../support/registration.js"

const sessionToken = (page: Page) =>
  page.evaluate(() => JSON.parse(sessionStorage.getItem("etd.session") ?? "null")?.token as string | undefined)

const storedEverywhere = (page: Page) =>
  page.evaluate(() => ({
    local: Object.keys(localStorage).map((key) => `${key}=${localStorage.getItem(key)}`),
    session: Object.keys(sessionStorage),
    url: location.href
  }))

describe.runIf(hasChromium)("dashboard frame", () => {
  let run: DashboardRun
  beforeAll(async () => {
    run = await startDashboard()
  }, 120_000)
  afterAll(() => run?.close())

  it("registers a tenant and signs in; the session lives in sessionStorage only and survives a reload, not a new tab", async () => {
    const { page, context, problems, screenshot } = await run.open()
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("sign-in")
    const person = newPerson("frame")
    const tenant = await registerInPage(page, person)
    await page.getByRole("heading", { level: 1, name: tenant.name }).waitFor()
    expect(await accessibilityViolations(page)).toEqual([])

    const token = await sessionToken(page)
    expect(token).toMatch(/^etd_sess_/)
    const stored = await storedEverywhere(page)
    expect(stored.local.join(" ")).not.toContain("etd_")
    expect(stored.local.every((entry) => entry.startsWith("etd.lang="))).toBe(true)
    expect(stored.url).not.toContain("etd_")
    // The token works for this person, as the page uses it.
    expect((await run.api(token).auth.me()).email).toBe(person.email)

    await page.reload()
    await page.getByRole("heading", { level: 1, name: tenant.name }).waitFor()
    const otherTab = await context.newPage()
    await otherTab.goto(run.base)
    await otherTab.getByRole("button", { name: "Sign in" }).last().waitFor()
    expect(problems()).toEqual([])
  })

  it("enforces its Content-Security-Policy: an injected inline script does not run", async () => {
    const { page } = await run.open()
    const violations: Array<string> = []
    page.on("console", (message) => violations.push(message.text()))
    const ran = await page.evaluate(() => {
      const script = document.createElement("script")
      script.textContent = "window.__injected = true"
      document.body.append(script)
      return (window as unknown as { __injected?: boolean }).__injected === true
    })
    expect(ran).toBe(false)
    await expect.poll(() => violations.join(" ")).toContain("Content Security Policy")
  })

  it("speaks Portuguese and English, and remembers the choice", async () => {
    const { page, problems, screenshot } = await run.open({ lang: "pt" })
    // A Brazilian browser gets Portuguese first.
    await page.getByRole("button", { name: "Criar conta" }).first().waitFor()
    expect(await page.evaluate(() => document.documentElement.lang)).toBe("pt-BR")
    const person = newPerson("idioma")
    const tenant = await registerInPage(page, person)
    await page.getByRole("link", { name: "Chaves de API" }).waitFor()
    await screenshot("overview-pt")
    await page.getByLabel("Idioma", { exact: true }).selectOption("en")
    await page.getByRole("link", { name: "API keys" }).waitFor()
    expect(await page.evaluate(() => document.documentElement.lang)).toBe("en")
    await page.reload()
    await page.getByRole("heading", { level: 1, name: tenant.name }).waitFor()
    await page.getByRole("link", { name: "API keys" }).waitFor()
    expect(problems()).toEqual([])
  })

  it("switches between the tenants a person belongs to, with their role in each", async () => {
    const { page, problems } = await run.open()
    const person = newPerson("switcher")
    const own = await registerInPage(page, person)
    const other = await registerByApi(run, newPerson("othercompany"))
    const me = await run.api(await sessionToken(page)).auth.me()
    await joinByInvitation(
      run,
      { session: other.session, tenantId: other.tenantId! },
      { email: person.email, session: (await sessionToken(page))! },
      "developer"
    )
    const otherTenant = await run.api(other.session).tenants.get({ params: { tenantId: other.tenantId! } })
    await page.reload()
    const switcher = page.getByLabel("Tenant", { exact: true })
    await expect.poll(() => switcher.locator("option").count()).toBe(2)
    await switcher.selectOption(other.tenantId!)
    await page.getByRole("heading", { level: 1, name: otherTenant.name }).waitFor()
    expect(await switcher.locator("option:checked").textContent()).toContain("developer")
    await switcher.selectOption({ label: `${own.name} (owner)` })
    await page.getByRole("heading", { level: 1, name: own.name }).waitFor()
    expect(me.email).toBe(person.email)
    expect(problems()).toEqual([])
  })

  it("shows this month's quota and documents per day, live and test, as a chart and a table", async () => {
    const { page, problems, screenshot } = await run.open()
    const person = newPerson("overview")
    await registerInPage(page, person)
    await page.getByText("No documents in the last 30 days.").waitFor()
    await screenshot("overview-empty")
    const session = await sessionToken(page)
    const memberships = await run.api(session).auth.myTenants({ query: {} })
    const tenantId = memberships.data[0]!.tenant.id
    await run.api(session).tenants.update({ params: { tenantId }, payload: { registration: completeRegistration } })
    const key = await run.api(session).apiKeys.create({
      params: { tenantId },
      payload: { name: "backend", environment: "test", scopes: ["documents:write"] }
    })
    for (let index = 0; index < 3; index++) {
      await run.api(key.token).documents.issueForKey({ payload: sampleDocument(`overview-${index}`), headers: {} })
    }
    await page.reload()
    await page.getByText("0 live and 3 test documents in the last 30 days.").waitFor()
    // uPlot draws after the render, in an effect.
    await expect.poll(() => page.locator(".chart canvas").count()).toBeGreaterThan(0)
    await page.getByText("Show the figures as a table").click()
    const lastRow = page.locator("details table tbody tr").last()
    expect(await lastRow.locator("td").allTextContents()).toEqual(["0", "3"])
    await expect.poll(() => page.locator("meter").getAttribute("max")).toBe("100")
    await screenshot("overview")
    expect(await accessibilityViolations(page)).toEqual([])
    expect(problems()).toEqual([])
  })

  it("shows hostile names as text: markup in a tenant's or a person's name never runs", async () => {
    const { page, problems } = await run.open()
    const hostile = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`
    const person = { ...newPerson("hostile"), name: hostile }
    await registerInPage(page, person, { name: hostile, taxId: cnpj() })
    await page.getByRole("heading", { level: 1, name: hostile }).waitFor()
    await page.getByText(`Signed in as ${hostile}`).waitFor()
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined()
    expect(await page.locator("main img, main script").count()).toBe(0)
    expect(problems()).toEqual([])
  })

  it("fits a phone-width screen without sideways scrolling", async () => {
    const { page, problems, screenshot } = await run.open({ phone: true })
    await registerInPage(page, newPerson("phone"))
    await page.getByText("No documents in the last 30 days.").waitFor()
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
    expect(overflow).toBeLessThanOrEqual(0)
    await screenshot("overview-phone")
    expect(await accessibilityViolations(page)).toEqual([])
    expect(problems()).toEqual([])
  })

  it("signs out (the server forgets the session), and a session ended elsewhere sends the person back to sign in", async () => {
    const { page, problems } = await run.open()
    const person = newPerson("signout")
    await registerInPage(page, person)
    const first = await sessionToken(page)
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("button", { name: "Sign in" }).last().waitFor()
    expect(await sessionToken(page)).toBeUndefined()
    await expect(run.api(first).auth.me()).rejects.toMatchObject({ code: "invalid_session" })

    await signInPage(page, person)
    // The overview's own requests must be answered first: ended before they are, the session's end
    // would be noticed by them, and the Members link would be gone before the click.
    await page.getByText("No documents in the last 30 days.").waitFor()
    const second = await sessionToken(page)
    await run.api(second).auth.logout()
    await page.getByRole("link", { name: "Members" }).click()
    await page.getByText("Your session has ended. Sign in again.").waitFor()
    expect(await sessionToken(page)).toBeUndefined()
    expect(problems()).toEqual([])
  })

  it("follows an address changed while the signed-in screen first appears", async () => {
    const { page, problems } = await run.open()
    const person = newPerson("early-link")
    await registerByApi(run, person)
    await page.getByLabel("Email").fill(person.email)
    await page.getByLabel(/^Password/).fill(person.password)
    // The address changes in the very task that renders the frame, before the page's effects run
    // (a link followed at once, a test's navigation): the screen must still follow it.
    await page.evaluate(() =>
      new Promise<void>((resolve) => {
        const observer = new MutationObserver(() => {
          if (document.querySelector("nav") === null) return
          observer.disconnect()
          location.hash = "#/keys"
          resolve()
        })
        observer.observe(document.body, { childList: true, subtree: true })
        const buttons = [...document.querySelectorAll("button")].filter((button) => button.textContent === "Sign in")
        buttons[buttons.length - 1]!.click()
      })
    )
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor({ timeout: 10_000 })
    expect(problems()).toEqual([])
  })

  it("refuses a wrong password with a message that does not say which part was wrong", async () => {
    const { page, problems } = await run.open()
    const person = newPerson("wrongpassword")
    await registerByApi(run, person)
    await signInAttempt(page, person.email, "not the right password")
    await page.getByRole("alert").getByText("Email or password is incorrect.").waitFor()
    await signInAttempt(page, "nobody@example.com", person.password)
    await page.getByRole("alert").getByText("Email or password is incorrect.").waitFor()
    expect(problems()).toEqual([])
  })
})

const signInAttempt = async (page: Page, email: string, password: string) => {
  await page.getByLabel("Email").fill(email)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Sign in" }).last().click()
}

const sampleDocument = (reference: string) => ({
  type: "service_invoice" as const,
  reference,
  taker: { tax_id: "11222333000181", name: "Cliente Exemplo Ltda" },
  service: {
    code: "010101",
    nbs_code: "115013000",
    description: "Desenvolvimento de software",
    municipality_code: "3550308"
  },
  amounts: { services: 100_000, iss_rate: "2.00" }
})
