/**
 * The certificate screen in a real browser (SPEC §8, §15): an owner uploads the tenant's A1
 * certificate (a PKCS#12 made at test time for the tenant's CNPJ); a wrong password and another
 * company's certificate are refused with a clear message and store nothing; a valid one shows its
 * metadata and days to expiry and verifies the tenant; a newer one near expiry is shown first with
 * a warning; a developer reads the metadata but has no upload form (and the server refuses them).
 */
import { randomBytes } from "node:crypto"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Redacted } from "../../src/client/index.js"
import { makePkcs12 } from "../support/certificates.js"
import {
  accessibilityViolations,
  type DashboardRun,
  hasChromium,
  joinByInvitation,
  newPerson,
  registerByApi,
  signInPage,
  startDashboard
} from "../support/Dashboard.js"
import { cnpj } from "../support/fixtures.js"

/** The CNPJ as the page writes it: 00.000.000/0000-00. */
const formatted = (taxId: string) => taxId.replace(/^(..)(...)(...)(....)(..)$/, "$1.$2.$3/$4-$5")

const certificateFor = (taxId: string, options: { days?: number } = {}) => {
  const password = `pfx-${randomBytes(6).toString("hex")}`
  return { password, p12: makePkcs12({ cn: `EMPRESA TESTE LTDA:${taxId}`, cnpjOid: taxId, password, ...options }) }
}

const chooseFile = (page: Page, pfx: Uint8Array) =>
  page.getByLabel("Certificate file (.pfx or .p12)").setInputFiles({
    name: "empresa.pfx",
    mimeType: "application/x-pkcs12",
    buffer: Buffer.from(pfx)
  })

describe.runIf(hasChromium)("dashboard certificate", () => {
  let run: DashboardRun
  const owner = newPerson("cert")
  let session: string
  let tenantId: string
  let taxId: string

  const credentials = async () =>
    (await run.api(session).credentials.list({ params: { tenantId }, query: { limit: 10 } })).data

  const openCertificate = async (person: ReturnType<typeof newPerson>) => {
    const watched = await run.open()
    await signInPage(watched.page, person)
    await watched.page.getByRole("navigation").getByRole("link", { name: "Certificate" }).click()
    await watched.page.getByRole("heading", { level: 1, name: "A1 certificate" }).waitFor()
    return watched
  }

  beforeAll(async () => {
    run = await startDashboard({
      loginRateLimit: { perMinute: 100_000 },
      rateLimit: { perSecond: 100_000, burst: 100_000 }
    })
    const registered = await registerByApi(run, owner)
    session = registered.session
    tenantId = registered.tenantId!
    taxId = (await run.api(session).tenants.get({ params: { tenantId } })).tax_id
  }, 120_000)
  afterAll(() => run?.close())

  it("refuses a wrong password and another company's certificate, then uploads the tenant's and verifies it", async () => {
    const { page, problems, screenshot } = await openCertificate(owner)
    await page.getByText("No certificate yet.").waitFor()
    expect(await page.locator("main").textContent()).toContain("signs the NFS-e")
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("certificate-empty")

    const valid = certificateFor(taxId)
    const password = page.getByLabel("Certificate password")
    await chooseFile(page, valid.p12.pfx)
    await password.fill("not the password")
    await page.getByRole("button", { name: "Upload certificate" }).click()
    await page.getByRole("alert").getByText("The password does not open this file.").waitFor()
    expect(await password.inputValue()).toBe("")
    expect(await credentials()).toEqual([])
    expect((await run.api(session).tenants.get({ params: { tenantId } })).verified).toBe(false)
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("certificate-wrong-password")

    const stranger = certificateFor(cnpj())
    await chooseFile(page, stranger.p12.pfx)
    await password.fill(stranger.password)
    await page.getByRole("button", { name: "Upload certificate" }).click()
    await page.getByRole("alert").getByText("This certificate was issued to another CNPJ").waitFor()
    expect(await credentials()).toEqual([])

    // The file stays chosen after a refusal; the password is typed again.
    await chooseFile(page, valid.p12.pfx)
    await password.fill(valid.password)
    await page.getByRole("button", { name: "Upload certificate" }).click()
    const card = page.locator("article.credential").first()
    await card.waitFor()
    expect(await card.locator(".expiry").textContent()).toMatch(/^36[45] days to expiry$/)
    expect(await card.locator(".expiry").getAttribute("class")).toContain("ok")
    const shown = await card.textContent()
    for (
      const fact of [
        valid.p12.fingerprintSha256,
        valid.p12.serialNumber,
        formatted(taxId),
        "EMPRESA TESTE LTDA",
        "active"
      ]
    ) expect(shown).toContain(fact)
    // The form is emptied: no password stays in the page.
    expect(await page.getByLabel("Certificate password").inputValue()).toBe("")
    expect(await page.getByLabel("Certificate file (.pfx or .p12)").inputValue()).toBe("")

    const stored = await credentials()
    expect(stored.map((c) => [c.status, c.fingerprint_sha256])).toEqual([["active", valid.p12.fingerprintSha256]])
    expect((await run.api(session).tenants.get({ params: { tenantId } })).verified).toBe(true)
    await page.locator("main .facts").first().getByText("verified", { exact: true }).waitFor()
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("certificate-uploaded")

    await page.getByRole("navigation").getByRole("link", { name: "Overview" }).click()
    await page.locator("main .facts").getByText("verified", { exact: true }).waitFor()
    expect(problems()).toEqual([])
  })

  it("shows a newer certificate near expiry first, with a warning", async () => {
    const soon = certificateFor(taxId, { days: 20 })
    const { page, problems, screenshot } = await openCertificate(owner)
    await page.locator("article.credential").first().waitFor()
    await chooseFile(page, soon.p12.pfx)
    await page.getByLabel("Certificate password").fill(soon.password)
    await page.getByRole("button", { name: "Upload certificate" }).click()
    const cards = page.locator("article.credential")
    await expect.poll(() => cards.count()).toBe(2)
    const first = cards.first()
    expect(await first.textContent()).toContain(soon.p12.fingerprintSha256)
    // Valid from an hour ago for 20 days: 19 whole days left.
    expect(await first.locator(".expiry").textContent()).toBe("19 days to expiry")
    expect(await first.locator(".expiry").getAttribute("class")).toContain("warn")
    expect(await first.textContent()).toContain("Renew it soon")
    expect(await cards.nth(1).textContent()).toContain("replaced")
    expect((await credentials()).map((c) => c.status)).toEqual(["active", "replaced"])
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("certificate-expiring")
    expect(problems()).toEqual([])
  })

  it("shows a developer the certificates without an upload form", async () => {
    const developer = newPerson("certdev")
    const registered = await registerByApi(run, developer, false)
    await joinByInvitation(run, { session, tenantId }, { ...registered, email: developer.email }, "developer")
    const { page, problems, screenshot } = await openCertificate(developer)
    await page.getByText("Only owners and admins upload certificates").waitFor()
    await page.locator("article.credential").first().waitFor()
    expect(await page.getByRole("button", { name: "Upload certificate" }).count()).toBe(0)
    expect(await page.getByLabel("Certificate password").count()).toBe(0)
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("certificate-developer")
    // The server refuses a developer's upload whatever the page shows.
    const refusal = await run.api(registered.session).credentials.upload({
      params: { tenantId },
      payload: { pkcs12: "AAAA", password: Redacted.make("x") }
    }).then(() => undefined, (error: { code?: string }) => error.code)
    expect(refusal).toBe("forbidden")
    expect(problems()).toEqual([])
  })
})
