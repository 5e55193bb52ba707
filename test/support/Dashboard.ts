/**
 * The web dashboard in a real browser: the service on a real port (on PostgreSQL when
 * TEST_DATABASE_URL is set, else the embedded database), Debian's Chromium driven by playwright-core,
 * and pages that record every script error, Content-Security-Policy violation and request that
 * leaves the service. Screenshots go to test-results/dashboard/ (not committed).
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { createServer } from "node:http"
import { createRequire } from "node:module"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { makeApp } from "../../src/App.js"
import { createClient, type PromiseClient, Redacted } from "../../src/client/index.js"
import type { AppConfigShape } from "../../src/Config.js"
import { databaseLayer, testDatabases } from "./Databases.js"
import { cnpj, PASSWORD, uniqueEmail } from "./fixtures.js"
import { completeRegistration } from "./registration.js"
import { asServiceDocument } from "./serviceDocument.js"
import { testConfig } from "./TestApp.js"

export const CHROMIUM = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"

/** CI installs Chromium (.ci/run); a developer machine without it skips the browser tests, saying so. */
export const hasChromium = existsSync(CHROMIUM)
if (!hasChromium) {
  console.warn(
    `Chromium not found at ${CHROMIUM} (install Debian's chromium or set CHROMIUM_PATH): the dashboard's browser tests are skipped`
  )
}

export const SCREENSHOTS = "test-results/dashboard"

export interface WatchedPage {
  readonly page: Page
  readonly context: BrowserContext
  /** Script errors, console errors (CSP violations among them) and requests outside the service. */
  readonly problems: () => ReadonlyArray<string>
  /** Writes test-results/dashboard/<name>.png. */
  readonly screenshot: (name: string) => Promise<void>
}

export interface DashboardRun {
  readonly base: string
  readonly browser: Browser
  /** A typed client of the same service, as a tenant's backend would use it (no browser marks). */
  readonly api: (token?: string) => PromiseClient
  /** A fresh browser context (its own sessionStorage) at the dashboard, phone-sized when asked. */
  readonly open: (options?: { readonly phone?: boolean; readonly lang?: "en" | "pt" }) => Promise<WatchedPage>
  /** Marks the address verified in the database, as following the mailed link would. */
  readonly verifyEmail: (email: string) => Promise<void>
  readonly close: () => Promise<void>
}

/** The running dashboard's `verifyEmail`, for the helpers that take only a page. */
let verifyActive: ((email: string) => Promise<void>) | undefined

export const startDashboard = async (overrides: Partial<AppConfigShape> = {}): Promise<DashboardRun> => {
  const database = testDatabases.includes("postgres") ? "postgres" : "embedded"
  const runtime = ManagedRuntime.make(
    makeApp(testConfig(overrides), databaseLayer(database)).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0 }))
    )
  )
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
  const base = `http://127.0.0.1:${"port" in address ? address.port : 0}`
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
  mkdirSync(SCREENSHOTS, { recursive: true })
  const open = async (
    options: { readonly phone?: boolean; readonly lang?: "en" | "pt" } = {}
  ): Promise<WatchedPage> => {
    const context = await browser.newContext({
      viewport: options.phone ? { width: 390, height: 844 } : { width: 1280, height: 900 },
      locale: options.lang === "pt" ? "pt-BR" : "en-GB",
      acceptDownloads: true
    })
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base })
    const page = await context.newPage()
    const problems: Array<string> = []
    page.on("pageerror", (error) => problems.push(`script error: ${error.message}`))
    page.on("console", (message) => {
      // Chromium logs every 4xx answer; a refusal the test provokes on purpose is not a problem.
      // A 5xx, a script error or a CSP violation is.
      if (
        message.type() === "error" &&
        !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())
      ) {
        problems.push(`console: ${message.text()}`)
      }
    })
    page.on("request", (request) => {
      const url = request.url()
      if (!url.startsWith(base) && !url.startsWith("blob:") && !url.startsWith("data:")) {
        problems.push(`offsite request: ${url}`)
      }
    })
    await page.goto(base, { waitUntil: "load" })
    return {
      page,
      context,
      problems: () => [...problems],
      screenshot: async (name) => {
        await page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true })
      }
    }
  }
  const verifyEmail = (email: string) =>
    runtime.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`UPDATE users SET email_verified_at = now() WHERE email_normalized = ${email.trim().toLowerCase()}`).pipe(
          Effect.orDie,
          Effect.asVoid
        )
    )
  verifyActive = verifyEmail
  return {
    base,
    browser,
    api: (token) => createClient({ baseUrl: base, token }),
    open,
    verifyEmail,
    close: async () => {
      await browser.close()
      await runtime.dispose()
    }
  }
}

/** The code a typed-client call was refused with ("" when it succeeded). */
export const refusal = (call: Promise<unknown>) =>
  call.then(() => "", (error: unknown) => String((error as { code?: unknown }).code))

export interface Person {
  readonly email: string
  readonly password: string
  readonly name: string
}

export const newPerson = (label = "person"): Person => ({ email: uniqueEmail(label), password: PASSWORD, name: label })

/**
 * Registers through the dashboard's form, with a new tenant; the page ends signed in, the address
 * verified (as its mailed link would) unless `verified` is false.
 */
export const registerInPage = async (
  page: Page,
  person: Person,
  tenant = { name: `${person.name} Ltda`, taxId: cnpj() },
  verified = true
) => {
  await page.getByRole("button", { name: /^(Create an account|Criar conta)$/ }).click()
  await page.getByLabel(/^(Email|E-mail)$/).fill(person.email)
  await page.getByLabel(/^(Password|Senha)/).fill(person.password)
  await page.getByLabel(/^(Your name|Seu nome)$/).fill(person.name)
  await page.getByLabel(/^(Company name|Nome da empresa)$/).fill(tenant.name)
  await page.getByLabel(/(Company tax id|CNPJ ou CPF da empresa)/).fill(tenant.taxId)
  await page.getByRole("button", { name: /^(Create account|Criar conta)$/ }).last().click()
  await page.getByRole("navigation").waitFor()
  if (verified) {
    await verifyActive!(person.email)
    // Read again: the page no longer asks to confirm the address.
    await page.reload()
    await page.getByRole("navigation").waitFor()
  }
  return tenant
}

export const signInPage = async (page: Page, person: Person) => {
  await page.getByLabel(/^(Email|E-mail)$/).fill(person.email)
  await page.getByLabel(/^(Password|Senha)/).fill(person.password)
  await page.getByRole("button", { name: /^(Sign in|Entrar)$/ }).last().click()
  await page.getByRole("navigation").waitFor()
}

/** A user registered through the API (with or without a tenant of their own), for members' tests. */
export const registerByApi = async (run: DashboardRun, person: Person, withTenant = true) => {
  const registration = await run.api().auth.register({
    payload: {
      email: person.email,
      password: Redacted.make(person.password),
      name: person.name,
      ...(withTenant ? { tenant: { name: `${person.name} Ltda`, tax_id: cnpj() } } : {})
    }
  })
  await run.verifyEmail(person.email)
  const login = await run.api().auth.login({
    payload: { email: person.email, password: Redacted.make(person.password) }
  })
  if (registration.tenant !== undefined) {
    // A tenant that declared its registration issues.
    await run.api(login.token).tenants.update({
      params: { tenantId: registration.tenant.id },
      payload: { registration: completeRegistration }
    })
  }
  return { userId: registration.user.id, tenantId: registration.tenant?.id, session: login.token }
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

/**
 * axe-core's WCAG 2 A/AA rules on the page as it is now; the serious and critical violations,
 * each as "rule: target". The script is evaluated through the debugging protocol, which the page's
 * CSP does not govern, so the page under test keeps its real policy.
 */
/** A document as the API answers it to a backend. */
/** A service invoice as the dashboard tests read it back through the API. */
export type DashboardDocument = Extract<
  Awaited<ReturnType<ReturnType<DashboardRun["api"]>["documents"]["getForKey"]>>,
  { readonly type: "service_invoice" }
>

/**
 * Reads a document as its backend does (with the key `token`) until `until` holds of it: the
 * simulator and the mail sender settle it in the background. Twenty seconds at most.
 */
export const documentWhen = async (
  run: DashboardRun,
  token: string,
  id: string,
  until: (document: DashboardDocument) => boolean,
  what: string
): Promise<DashboardDocument> => {
  for (let i = 0; i < 400; i++) {
    const document = asServiceDocument(await run.api(token).documents.getForKey({ params: { docId: id } }))
    if (until(document)) return document
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`document ${id}: ${what} never held`)
}

/** At phone width nothing may be wider than the screen (the page would scroll sideways). */
export const fitsTheScreen = (page: Page) =>
  page.evaluate<boolean>("document.documentElement.scrollWidth <= document.documentElement.clientWidth")

export const accessibilityViolations = async (page: Page): Promise<ReadonlyArray<string>> => {
  await page.evaluate(axeSource)
  // A string, not a function: this module is also compiled without the DOM's types.
  const violations = await page.evaluate<
    ReadonlyArray<{ id: string; impact: string | null; targets: ReadonlyArray<string> }>
  >(`
    axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } }).then((result) =>
      result.violations.map((violation) => ({
        id: violation.id,
        impact: violation.impact,
        targets: violation.nodes.map((node) => JSON.stringify(node.target))
      })))
  `)
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${violation.id}: ${violation.targets.join(", ")}`)
}

/**
 * A registered user joins the inviter's tenant with `role` through the API, as people do: invited,
 * then accepting from their own list (their address marked verified first, as its link would).
 */
export const joinByInvitation = async (
  run: DashboardRun,
  inviter: { readonly session: string; readonly tenantId: string },
  member: { readonly email: string; readonly session: string },
  role: "owner" | "admin" | "developer"
) => {
  await run.verifyEmail(member.email)
  const invitation = await run.api(inviter.session).invitations.create({
    params: { tenantId: inviter.tenantId },
    payload: { email: member.email, role }
  })
  await run.api(member.session).invitationAcceptance.acceptMine({ params: { invitationId: invitation.id } })
}
