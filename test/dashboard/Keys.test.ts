/**
 * The API keys screen in a real browser (SPEC §4, §15): the empty state, creating a key whose
 * token is shown once (copied to the clipboard, gone from the page once the dialog is closed, and
 * working from a backend), rotation with a grace period, revocation behind a confirmation that can
 * be cancelled, an exposure alert on the key after its token was sent in a URL, pagination, a
 * developer's read-only view, Portuguese, a phone-width screen and accessibility.
 */
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  accessibilityViolations,
  type DashboardRun,
  hasChromium,
  joinByInvitation,
  newPerson,
  refusal,
  registerByApi,
  registerInPage,
  signInPage,
  startDashboard
} from "../support/Dashboard.js"

const openKeys = async (page: Page, label: RegExp | string = "API keys") => {
  await page.getByRole("navigation").getByRole("link", { name: label }).click()
  await page.getByRole("heading", { level: 1, name: label }).waitFor()
}

/** The table row of the key with that name (the first when there are several). */
const rowOf = (page: Page, name: string, nth = 0) =>
  page.getByRole("row").filter({ has: page.getByRole("rowheader", { name }) }).nth(nth)

describe.runIf(hasChromium)("dashboard: API keys", () => {
  let run: DashboardRun
  beforeAll(async () => {
    run = await startDashboard()
  }, 120_000)
  afterAll(() => run?.close())

  it("creates a key shown once, rotates it with no grace and revokes it after a cancelled confirmation", async () => {
    const { page, problems, screenshot } = await run.open()
    await registerInPage(page, newPerson("keys"))
    await openKeys(page)
    await page.getByText("This tenant has no API keys yet.").waitFor()
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("keys-empty")

    await page.getByRole("button", { name: "Create a key" }).first().click()
    const create = page.getByRole("dialog", { name: "Create an API key" })
    await create.waitFor()
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("keys-create")
    // Both environments are explained in plain words; test is the one chosen by default.
    await create.getByText(/production system.*quota/).waitFor()
    await create.getByText(/homologation sandbox/).waitFor()
    expect(await create.getByRole("radio", { name: /test/ }).isChecked()).toBe(true)

    // No scope: refused on the page, nothing created.
    await create.getByLabel("Name").fill("billing backend")
    await create.getByRole("button", { name: "Create key" }).click()
    await create.getByRole("alert").filter({ hasText: "Choose at least one scope." }).waitFor()

    await create.getByRole("checkbox", { name: /documents:read/ }).check()
    await create.getByRole("checkbox", { name: /documents:write/ }).check()
    await create.getByRole("button", { name: "Create key" }).click()
    const shown = page.getByRole("dialog", { name: "Your new key's token" })
    await shown.waitFor()
    const token = await shown.getByRole("textbox", { name: "Token of billing backend" }).inputValue()
    expect(token).toMatch(/^etd_test_/)
    await shown.getByText(/shown only this once/).waitFor()
    await shown.getByRole("button", { name: "Copy" }).click()
    await shown.getByText("Copied to the clipboard").waitFor()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token)
    await screenshot("keys-token")
    // The token works from a backend, with the scopes chosen and no others.
    await run.api(token).documents.listForKey({ query: {} })
    const session = await page.evaluate(() =>
      (JSON.parse(sessionStorage.getItem("etd.session")!) as { token: string }).token
    )
    const [membership] = (await run.api(session).auth.myTenants({ query: {} })).data
    const tenantId = membership!.tenant.id
    expect(await refusal(run.api(token).credentials.list({ params: { tenantId }, query: {} }))).toBe(
      "insufficient_scope"
    )

    await shown.getByRole("button", { name: "I have saved it, close" }).click()
    await shown.waitFor({ state: "detached" })
    expect(await page.content()).not.toContain(token)
    const row = rowOf(page, "billing backend")
    await row.getByText("active").waitFor()
    expect(await row.getByRole("cell").allInnerTexts()).toEqual(
      expect.arrayContaining(["test", "documents:read\ndocuments:write", "never"])
    )
    expect(await row.getByText(`etd_test_…${token.slice(-4)}`, { exact: true }).count()).toBe(1)
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("keys-list")

    // Rotation with no grace: the new token works at once, the old one is refused.
    await row.getByRole("button", { name: "Rotate billing backend" }).click()
    const rotate = page.getByRole("dialog", { name: "Rotate billing backend" })
    await rotate.getByText(/old token keeps working during the grace period/).waitFor()
    const grace = rotate.getByLabel(/Grace period in days/)
    expect(await grace.inputValue()).toBe("7")
    await grace.fill("31")
    await rotate.getByRole("button", { name: "Rotate key" }).click()
    await rotate.getByRole("alert").filter({ hasText: "from 0 to 30" }).waitFor()
    await screenshot("keys-rotate")
    expect(await accessibilityViolations(page)).toEqual([])
    await grace.fill("0")
    await rotate.getByRole("button", { name: "Rotate key" }).click()
    const rotated = page.getByRole("dialog", { name: "The new token of billing backend" })
    await rotated.getByText("The old token no longer works.").waitFor()
    const newToken = await rotated.getByRole("textbox").inputValue()
    expect(newToken).toMatch(/^etd_test_/)
    expect(newToken).not.toBe(token)
    await run.api(newToken).documents.listForKey({ query: {} })
    expect(await refusal(run.api(token).documents.listForKey({ query: {} }))).toBe("api_key_expired")
    await rotated.getByRole("button", { name: "I have saved it, close" }).click()
    await rotated.waitFor({ state: "detached" })
    expect(await page.content()).not.toContain(newToken)

    // The old key: expired, replaced, muted and without controls; the new one active.
    const old = rowOf(page, "billing backend", 1)
    await old.getByText("expired").waitFor()
    await old.getByText("Replaced by billing backend").waitFor()
    expect(await old.getAttribute("class")).toContain("inactive")
    expect(await old.getByRole("button").filter({ hasNotText: "Copy" }).count()).toBe(0)
    const current = rowOf(page, "billing backend", 0)
    await current.getByText("active").waitFor()

    // Revoke: a cancelled confirmation changes nothing.
    await current.getByRole("button", { name: "Revoke" }).click()
    const confirm = page.getByRole("dialog", { name: "Revoke billing backend?" })
    await confirm.getByText(/refused at once, on every server/).waitFor()
    await confirm.getByRole("button", { name: "Cancel" }).click()
    await confirm.waitFor({ state: "detached" })
    await run.api(newToken).documents.listForKey({ query: {} })
    await current.getByText("active").waitFor()

    await current.getByRole("button", { name: "Revoke" }).click()
    await page.getByRole("dialog", { name: "Revoke billing backend?" }).getByRole("button", { name: "Revoke key" })
      .click()
    await rowOf(page, "billing backend", 0).getByText("revoked").waitFor()
    expect(await page.getByRole("button", { name: /^(Rotate|Revoke)/ }).count()).toBe(0)
    await page.getByRole("status").filter({ hasText: "Key billing backend revoked." }).waitFor()
    await screenshot("keys-list-revoked")
    expect(await refusal(run.api(newToken).documents.listForKey({ query: {} }))).toBe("api_key_revoked")
    expect(problems()).toEqual([])
  })

  it("keeps the create dialog open while the key is being created, so its token is not lost to Escape", async () => {
    const { page, problems } = await run.open()
    await registerInPage(page, newPerson("slowkey"))
    await openKeys(page)
    let release = () => {}
    const released = new Promise<void>((resolve) => (release = resolve))
    let held = false
    await page.route(/\/api-keys$/, async (route) => {
      if (route.request().method() !== "POST") return route.continue()
      held = true
      await released
      await route.continue()
    })
    await page.getByRole("button", { name: "Create a key" }).first().click()
    const create = page.getByRole("dialog", { name: "Create an API key" })
    await create.getByLabel("Name").fill("slow backend")
    await create.getByRole("checkbox", { name: /documents:read/ }).check()
    await create.getByRole("button", { name: "Create key" }).click()
    await expect.poll(() => held).toBe(true)
    // While the key is created, neither Escape nor Cancel closes the dialog that will show its token.
    expect(await create.getByRole("button", { name: "Cancel" }).isDisabled()).toBe(true)
    await page.keyboard.press("Escape")
    expect(await create.isVisible()).toBe(true)
    release()
    const shown = page.getByRole("dialog", { name: "Your new key's token" })
    expect(await shown.getByRole("textbox", { name: "Token of slow backend" }).inputValue()).toMatch(/^etd_test_/)
    // A reflexive Escape does not lose the token either: only the explicit button closes it.
    await page.keyboard.press("Escape")
    expect(await shown.isVisible()).toBe(true)
    await shown.getByRole("button", { name: "I have saved it, close" }).click()
    await shown.waitFor({ state: "detached" })
    expect(problems()).toEqual([])
  })

  it("shows an exposure alert on a key whose token was sent in a URL, also on a phone-width screen", async () => {
    const owner = newPerson("exposed")
    const { session, tenantId } = await registerByApi(run, owner)
    const api = run.api(session)
    const leaked = await api.apiKeys.create({
      params: { tenantId: tenantId! },
      payload: { name: "leaky worker", environment: "live", scopes: ["documents:read"] }
    })
    await api.apiKeys.create({
      params: { tenantId: tenantId! },
      payload: { name: "careful worker", environment: "test", scopes: ["webhooks:read"] }
    })
    // A backend puts the token in a query string: refused, and reported by the exposure monitor.
    const response = await fetch(`${run.base}/v1/documents?key=${leaked.token}`)
    expect(response.status).toBe(400)
    expect(((await response.json()) as { code: string }).code).toBe("api_key_in_url")
    // The monitor looks the token up on its own fiber: wait until the key carries the alert.
    await expect.poll(async () => {
      const keys = await api.apiKeys.list({ params: { tenantId: tenantId! }, query: {} })
      return keys.data.find((key) => key.id === leaked.api_key.id)?.exposure?.last_source
    }, { timeout: 15_000, interval: 200 }).toBe("url")

    for (const phone of [false, true]) {
      const { page, problems, screenshot } = await run.open({ phone })
      await signInPage(page, owner)
      await openKeys(page)
      const row = rowOf(page, "leaky worker")
      await row.getByText("Exposed", { exact: true }).waitFor()
      await row.getByText(/Exposure alerts: 1; the last on .*, the token was sent in a request URL\./).waitFor()
      await row.getByText(/rotate this key now/).waitFor()
      await page.getByText("Exposed keys still in use: 1.").waitFor()
      expect(await rowOf(page, "careful worker").getByText("Exposed").count()).toBe(0)
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot(phone ? "keys-list-phone" : "keys-exposed")
      if (phone) {
        // Stacked cards: the whole row fits the screen's width.
        const box = await row.boundingBox()
        expect(box!.x + box!.width).toBeLessThanOrEqual(390)
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
      }
      expect(problems()).toEqual([])
    }
  })

  it("shows a developer the keys page by page, without create, rotate or revoke, and says why", async () => {
    const owner = await registerByApi(run, newPerson("keyowner"))
    const developer = newPerson("keydev")
    const dev = await registerByApi(run, developer, false)
    const tenantId = owner.tenantId!
    const ownerApi = run.api(owner.session)
    await joinByInvitation(run, { session: owner.session, tenantId }, { ...dev, email: developer.email }, "developer")
    for (let index = 1; index <= 21; index++) {
      await ownerApi.apiKeys.create({
        params: { tenantId },
        payload: { name: `worker ${String(index).padStart(2, "0")}`, environment: "test", scopes: ["documents:read"] }
      })
    }
    const { page, problems, screenshot } = await run.open()
    await signInPage(page, developer)
    await openKeys(page)
    await page.getByText(/Your role in this tenant is developer: you can see the keys, but only owners and admins/)
      .waitFor()
    await page.getByRole("rowheader", { name: "worker 21" }).or(page.getByRole("rowheader", { name: "worker 01" }))
      .first().waitFor()
    expect(await page.getByRole("table").getByRole("rowheader").count()).toBe(20)
    await page.getByRole("button", { name: "Load more" }).click()
    await expect.poll(() => page.getByRole("table").getByRole("rowheader").count()).toBe(21)
    expect(await page.getByRole("button", { name: "Load more" }).count()).toBe(0)
    expect(await page.getByRole("button", { name: /Create a key|Rotate|Revoke/ }).count()).toBe(0)
    expect(await page.getByRole("columnheader", { name: "Actions" }).count()).toBe(0)
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("keys-developer")
    // The server refuses what the page does not offer.
    expect(
      await refusal(
        run.api(dev.session).apiKeys.create({
          params: { tenantId },
          payload: { name: "sneaky", environment: "test", scopes: ["documents:read"] }
        })
      )
    ).toBe("forbidden")
    expect(problems()).toEqual([])
  })

  it("speaks Portuguese, checks the form, and explains a rotation the server refuses", async () => {
    const { page, problems, screenshot } = await run.open({ lang: "pt" })
    await registerInPage(page, newPerson("chaves"))
    await openKeys(page, "Chaves de API")
    await page.getByText("Esta conta ainda não tem chaves de API.").waitFor()
    await page.getByRole("button", { name: "Criar uma chave" }).first().click()
    const create = page.getByRole("dialog", { name: "Criar uma chave de API" })
    await create.getByRole("group", { name: "Ambiente" }).waitFor()
    await create.getByText(/homologação do fisco/).waitFor()
    await create.getByText("Emitir documentos.").waitFor()
    await screenshot("keys-create-pt")
    // A name of blanks and no scope: both said on the page, nothing sent.
    await create.getByLabel("Nome").fill("   ")
    await create.getByRole("button", { name: "Criar chave" }).click()
    await create.getByRole("alert").filter({ hasText: "Dê um nome à chave." }).waitFor()
    await create.getByRole("alert").filter({ hasText: "Escolha pelo menos um escopo." }).waitFor()
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("keys-create-pt-refused")
    await create.getByLabel("Nome").fill("  integração  ")
    await create.getByRole("radio", { name: /produção/ }).check()
    await create.getByRole("checkbox", { name: /webhooks:read/ }).check()
    await create.getByRole("button", { name: "Criar chave" }).click()
    const shown = page.getByRole("dialog", { name: "O token da sua nova chave" })
    expect(await shown.getByRole("textbox", { name: "Token de integração" }).inputValue()).toMatch(/^etd_live_/)
    await shown.getByText(/exibido só desta vez/).waitFor()
    await shown.getByRole("button", { name: "Já guardei, fechar" }).click()
    const row = rowOf(page, "integração")
    await row.getByText("produção").waitFor()
    await row.getByText("ativa").waitFor()

    // Someone revokes the key elsewhere while this page still shows it active: rotating it is
    // refused, said in the person's language, and the list catches up.
    const api = run.api(
      await page.evaluate(() => (JSON.parse(sessionStorage.getItem("etd.session")!) as { token: string }).token)
    )
    const tenantId = (await api.auth.myTenants({ query: {} })).data[0]!.tenant.id
    const [key] = (await api.apiKeys.list({ params: { tenantId }, query: {} })).data
    await api.apiKeys.revoke({ params: { tenantId, keyId: key!.id } })
    await row.getByRole("button", { name: "Rotacionar integração" }).click()
    const rotate = page.getByRole("dialog", { name: "Rotacionar integração" })
    await rotate.getByRole("button", { name: "Rotacionar chave" }).click()
    await rotate.getByRole("alert").filter({ hasText: "Esta chave não está mais ativa" }).waitFor()
    await rotate.getByRole("button", { name: "Cancelar" }).click()
    await row.getByText("revogada").waitFor()
    // Only the copy buttons are left: nothing that would change the key.
    expect(await row.getByRole("button").filter({ hasNotText: "Copiar" }).count()).toBe(0)
    expect(problems()).toEqual([])
  })
})
