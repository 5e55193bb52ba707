/**
 * The interactive API reference at /docs, opened in a real browser (headless Chromium): it renders
 * the contract without reaching the internet, without script errors or Content-Security-Policy
 * violations, and it never lets an API key leave the browser (SPEC §4: a key sent from a browser is
 * refused and treated as exposed). Its files are sent compressed, with an ETag and the dashboard's
 * security headers.
 */
import type { Page, Request } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { REFERENCE_CSP } from "../../src/http/ReferencePage.js"
import { type DashboardRun, hasChromium, newPerson, registerByApi, startDashboard } from "../support/Dashboard.js"

const API_KEY = /etd_(live|test)_/i

/** Where a request would carry an API key (URL, any header, body), or undefined. */
const keyIn = async (request: Request): Promise<string | undefined> => {
  if (API_KEY.test(request.url())) return `URL of ${request.url()}`
  const header = Object.entries(await request.allHeaders()).find(([, value]) => API_KEY.test(value))
  if (header !== undefined) return `header ${header[0]} of ${request.url()}`
  return API_KEY.test(request.postData() ?? "") ? `body of ${request.url()}` : undefined
}

/** The text of an operation's rendered request example (Scalar shows curl first). */
const requestExample = (page: Page, operation: string) =>
  page.locator(`[id$='${operation}']`).locator("pre, code").filter({ hasText: "curl" }).first().textContent()

/** Opens Scalar's client on an operation (typing the token its scheme asks for, if given) and sends it. */
const tryOperation = async (page: Page, operation: string, token?: string) => {
  await page.locator(`[id$='${operation}']`).getByRole("button", { name: /test request/i }).first().click()
  if (token !== undefined) await page.getByRole("dialog").getByPlaceholder("Token").first().fill(token)
  await page.getByText("Send", { exact: true }).first().click()
}

const closeClient = (page: Page) => page.keyboard.press("Escape")

describe.runIf(hasChromium)("API reference page", () => {
  let run: DashboardRun
  beforeAll(async () => {
    run = await startDashboard()
  }, 60_000)
  afterAll(() => run?.close())

  it("is sent compressed, revalidated by ETag, with the dashboard's security headers and a strict CSP", async () => {
    const page = await fetch(`${run.base}/docs`, { headers: { "accept-encoding": "br" } })
    expect(page.status).toBe(200)
    expect(page.headers.get("content-encoding")).toBe("br")
    expect(page.headers.get("content-security-policy")).toBe(REFERENCE_CSP)
    expect(REFERENCE_CSP).toContain("script-src 'self';")
    expect(page.headers.get("x-content-type-options")).toBe("nosniff")
    expect(page.headers.get("x-frame-options")).toBe("DENY")
    expect(page.headers.get("referrer-policy")).toBe("no-referrer")
    expect(page.headers.get("cache-control")).toBe("no-cache")
    const html = await page.text()
    expect(html).not.toMatch(/<script>/)
    const etag = page.headers.get("etag")!
    // A browser revalidates with the Accept-Encoding it fetched with: the brotli body's own tag.
    const revalidated = await fetch(`${run.base}/docs`, { headers: { "accept-encoding": "br", "if-none-match": etag } })
    expect(revalidated.status).toBe(304)

    // Scalar's bundle, the bulk of the page: named by its content, cached for a year, compressed.
    const bundlePath = /src="(\/docs\/assets\/scalar\.[\w-]+\.js)"/.exec(html)?.[1]
    expect(bundlePath).toBeDefined()
    const sizes: Record<string, number> = {}
    for (const coding of ["identity", "gzip", "br"]) {
      const response = await fetch(`${run.base}${bundlePath}`, { headers: { "accept-encoding": coding } })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-encoding") ?? "identity").toBe(coding)
      expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
      expect(response.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
      sizes[coding] = Number(response.headers.get("content-length"))
    }
    console.info(`reference bundle bytes: ${JSON.stringify(sizes)}`)
    expect(sizes["br"]!).toBeLessThan(sizes["identity"]! / 3)
    expect(sizes["gzip"]!).toBeLessThan(sizes["identity"]! / 3)
    expect((await fetch(`${run.base}/docs/assets/scalar.unknown.js`)).status).toBe(404)
  })

  it("renders the contract offline, with no CSP violation, and an injected inline script does not run", async () => {
    const { page, problems } = await run.open()
    const violations: Array<string> = []
    page.on("console", (message) => {
      if (message.text().includes("Content Security Policy")) violations.push(message.text())
    })
    expect((await page.goto(`${run.base}/docs`, { waitUntil: "load" }))?.status()).toBe(200)
    await page.getByText("Electronic tax-document issuing API").first().waitFor({ timeout: 30_000 })
    await page.getByText("/v1/tenants/{tenantId}/documents").first().waitFor({ timeout: 30_000 })
    await page.getByText("API keys stay on your servers.").first().waitFor()
    expect(problems()).toEqual([])
    expect(violations).toEqual([])

    // The debugging protocol's evaluate is outside the page's CSP; the script element it adds is not.
    await page.evaluate(`(() => {
      const script = document.createElement("script")
      script.textContent = "window.injectedRan = true"
      document.body.append(script)
    })()`)
    await expect.poll(() => violations.length).toBe(1)
    expect(violations[0]).toContain("script-src")
    expect(await page.evaluate("window.injectedRan")).toBeUndefined()
  }, 60_000)

  it("never sends an API key, tries an operation with the member's session, and shows Bearer in curl", async () => {
    const person = newPerson("reference")
    const { session, tenantId } = await registerByApi(run, person)
    const owner = run.api(session)
    const key = await owner.apiKeys.create({
      params: { tenantId: tenantId! },
      payload: { name: "typed into the docs", environment: "test", scopes: ["documents:read"] }
    })
    const { page, problems } = await run.open()
    const inspected: Array<Promise<string | undefined>> = []
    page.on("request", (request) => inspected.push(keyIn(request)))
    await page.goto(`${run.base}/docs`, { waitUntil: "load" })
    await page.getByText("/v1/tenants/{tenantId}/documents").first().waitFor({ timeout: 30_000 })

    // The request example of a session operation and of a key operation authenticate with Bearer.
    await page.getByText("Users and sessions").first().click()
    await page.getByText("Documents", { exact: true }).first().click()
    for (const operation of ["GET/v1/me", "GET/v1/documents"]) {
      const example = await requestExample(page, operation)
      expect(example).toContain("Authorization: Bearer")
      expect(example).not.toContain("Basic")
    }

    // A key typed into the page, as the session's token or in the client as the key it asks for: each
    // request is refused in the browser, with the reason shown.
    const refusal = page.getByText("Try the endpoint with a session token").first()
    const token = page.getByPlaceholder("Token").first()
    await token.fill(key.token)
    await tryOperation(page, "GET/v1/me")
    await refusal.waitFor()
    await closeClient(page)
    await refusal.waitFor({ state: "detached" })
    await tryOperation(page, "GET/v1/documents", key.token)
    await refusal.waitFor()
    await closeClient(page)

    // The member's session works from the page.
    await token.fill(session)
    const answer = page.waitForResponse((response) => response.url().endsWith("/v1/me"))
    await tryOperation(page, "GET/v1/me")
    expect((await answer).status()).toBe(200)
    await page.getByText(person.email).first().waitFor()
    await closeClient(page)

    expect((await Promise.all(inspected)).filter((where) => where !== undefined)).toEqual([])
    // Neither the key nor the session typed into the page was written to the browser's storage.
    const stored = await page.evaluate("JSON.stringify({ ...localStorage, ...sessionStorage })")
    expect(stored).not.toMatch(/etd_(live|test|sess)_/)
    // The refusal is reported by Scalar on the console; nothing else went wrong.
    expect(problems().filter((problem) => !problem.includes("This page never sends an API key"))).toEqual([])
    // The service saw no key from a browser: none was raised as exposed.
    const keys = await owner.apiKeys.list({ params: { tenantId: tenantId! }, query: {} })
    expect(keys.data.find((listed) => listed.id === key.api_key.id)?.exposure).toBeNull()
  }, 180_000)
})
