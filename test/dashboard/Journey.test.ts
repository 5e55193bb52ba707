/**
 * A person's path through the dashboard, end to end, as the issue lists it: register → create a
 * test key and copy it → issue a document with that key from a backend → see it in the list and
 * open it → download its PDF → add a webhook endpoint → see the delivery → rotate and revoke the
 * key → invite a member, who accepts, and remove them; and that developer member, who can see
 * everything and change nothing.
 * The screens' own files test each screen in depth; this one checks they work together.
 */
import { Duration } from "effect"
import { readFile } from "node:fs/promises"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  accessibilityViolations,
  type DashboardRun,
  hasChromium,
  newPerson,
  refusal,
  registerByApi,
  registerInPage,
  startDashboard
} from "../support/Dashboard.js"
import { consultingService } from "../support/samples.js"

const section = async (page: Page, name: string) => {
  await page.getByRole("navigation").getByRole("link", { name }).click()
  await page.getByRole("heading", { level: 1, name }).waitFor()
}

/** Clicks the screen's Refresh until `done` answers true (the workers run in the background). */
const refreshUntil = async (page: Page, done: () => Promise<boolean>, what: string) => {
  const deadline = Date.now() + 30_000
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await page.getByRole("button", { name: "Refresh" }).first().click()
    await page.waitForTimeout(250)
  }
}

describe.runIf(hasChromium)("dashboard: a person's path", () => {
  let run: DashboardRun
  let receiver: Server
  const received: Array<string> = []
  beforeAll(async () => {
    receiver = createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        received.push(Buffer.concat(chunks).toString("utf8"))
        response.writeHead(204).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    run = await startDashboard({
      webhooks: {
        allowPrivateTargets: true,
        timeout: Duration.seconds(5),
        concurrency: 4,
        pollInterval: Duration.millis(100),
        lease: Duration.seconds(60)
      }
    })
  }, 120_000)
  afterAll(async () => {
    await run?.close()
    receiver?.closeAllConnections()
    await new Promise((resolve) => receiver?.close(resolve))
  })

  it(
    "register, key, document, PDF, webhook delivery, rotate and revoke, members; a developer changes nothing",
    async () => {
      const { page, context, problems, screenshot } = await run.open()
      const owner = newPerson("journey")
      const tenant = await registerInPage(page, owner)
      await page.getByRole("heading", { level: 1, name: tenant.name }).waitFor()
      await screenshot("journey-1-overview")

      // A test key, copied with the button: the clipboard holds what the backend will use.
      await section(page, "API keys")
      await page.getByRole("button", { name: "Create a key" }).first().click()
      const create = page.getByRole("dialog", { name: "Create an API key" })
      await create.getByLabel("Name").fill("erp backend")
      await create.getByRole("checkbox", { name: /documents:read/ }).check()
      await create.getByRole("checkbox", { name: /documents:write/ }).check()
      await create.getByRole("button", { name: "Create key" }).click()
      const shown = page.getByRole("dialog", { name: "Your new key's token" })
      await shown.getByRole("button", { name: "Copy" }).click()
      await shown.getByText("Copied to the clipboard").waitFor()
      const token = await page.evaluate(() => navigator.clipboard.readText())
      expect(token).toMatch(/^etd_test_[a-z2-7]{32}$/)
      await screenshot("journey-2-key-created")
      await shown.getByRole("button", { name: "I have saved it, close" }).click()

      // A webhook endpoint for the test environment, to hear about the document.
      await section(page, "Webhooks")
      await page.getByRole("button", { name: "Add endpoint" }).first().click()
      const addEndpoint = page.getByRole("dialog", { name: "Add a webhook endpoint" })
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/nfse`
      await addEndpoint.getByLabel("URL").fill(url)
      await addEndpoint.getByRole("radio", { name: "Test" }).check()
      await addEndpoint.getByRole("checkbox", { name: "document.authorized" }).check()
      await addEndpoint.getByRole("button", { name: "Add endpoint" }).click()
      expect(await addEndpoint.getByRole("textbox", { name: "Signing secret" }).inputValue()).toMatch(/^whsec_/)
      await addEndpoint.getByRole("button", { name: "Done" }).click()
      await screenshot("journey-3-webhook-added")

      // The company's registration, filled here: a refusal is shown at the field it names, then it saves.
      await section(page, "Company")
      await page.getByLabel("Legal name (razão social)").fill(tenant.name)
      await page.getByLabel("Street").fill("Avenida Paulista")
      await page.getByLabel("Number", { exact: true }).fill("1000")
      await page.getByLabel("District").fill("Bela Vista")
      await page.getByLabel("Municipality (7-digit IBGE code)").fill("3550308")
      await page.getByLabel("State (UF)").fill("RJ")
      await page.getByLabel("CEP").fill("01310-100")
      await page.getByRole("button", { name: "Save registration" }).click()
      await page.locator("#company-address-state-error").filter({ hasText: "3550308" }).waitFor()
      expect(await page.locator("#company-address-state").getAttribute("aria-invalid")).toBe("true")
      await page.locator("#company-address-state").fill("SP")
      await page.getByLabel("Phone (area code and number)").fill("(11) 3333-4444")
      await page.getByRole("button", { name: "Save registration" }).click()
      await page.getByRole("status").filter({ hasText: "Registration saved." }).waitFor()
      expect(await page.getByLabel("Phone (area code and number)").inputValue()).toBe("1133334444")
      expect(await page.locator("#company-address-state-error").count()).toBe(0)
      expect(await accessibilityViolations(page)).toEqual([])
      await screenshot("journey-3-company")

      // The tenant's backend issues a document with the copied token.
      const issued = await run.api(token).documents.issueForKey({
        payload: {
          type: "service_invoice",
          reference: "pedido-1001",
          taker: { tax_id: "52998224725", name: "Maria da Silva" },
          service: consultingService,
          amounts: { services: 150_000, iss_rate: "2.00" }
        },
        headers: {}
      })

      // It is in the list; its detail follows it to authorized; its PDF downloads.
      await section(page, "Documents")
      await page.getByRole("row").filter({ hasText: "pedido-1001" }).waitFor()
      await screenshot("journey-4-documents")
      await page.getByRole("link", { name: `No. ${issued.number} · series ${issued.series}` }).click()
      await page.getByRole("heading", { level: 1, name: `Document no. ${issued.number}, series ${issued.series}` })
        .waitFor()
      const download = page.getByRole("button", { name: "Download PDF (DANFSe)" })
      await download.waitFor({ timeout: 30_000 })
      const [pdf] = await Promise.all([page.waitForEvent("download"), download.click()])
      const pdfBytes = await readFile(await pdf.path())
      expect(pdfBytes.subarray(0, 5).toString("latin1")).toBe("%PDF-")
      await screenshot("journey-5-document")

      // The delivery of document.authorized, on the endpoint's page.
      await expect.poll(() => received.length, { timeout: 30_000 }).toBeGreaterThan(0)
      await section(page, "Webhooks")
      await page.getByRole("link", { name: url }).click()
      await page.getByRole("heading", { level: 1, name: url }).waitFor()
      const delivery = page.getByRole("row").filter({ hasText: "document.authorized" }).filter({ hasText: "succeeded" })
      await refreshUntil(page, async () => (await delivery.count()) > 0, "the delivery")
      await screenshot("journey-6-delivery")

      // Rotate the key with no grace, then revoke the new one: the backend is refused at once.
      await section(page, "API keys")
      const keyRow = page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "erp backend" }) })
      await keyRow.first().getByRole("button", { name: "Rotate erp backend" }).click()
      const rotate = page.getByRole("dialog", { name: "Rotate erp backend" })
      await rotate.getByLabel(/Grace period in days/).fill("0")
      await rotate.getByRole("button", { name: "Rotate key" }).click()
      const rotated = page.getByRole("dialog", { name: "The new token of erp backend" })
      const newToken = await rotated.getByRole("textbox").inputValue()
      await rotated.getByRole("button", { name: /close/i }).click()
      expect(await refusal(run.api(token).documents.listForKey({ query: {} }))).toBe("api_key_expired")
      expect(await refusal(run.api(newToken).documents.listForKey({ query: {} }))).toBe("")
      const active = keyRow.filter({ hasText: "active" })
      await active.getByRole("button", { name: "Revoke" }).click()
      await page.getByRole("dialog", { name: "Revoke erp backend?" }).getByRole("button", { name: "Revoke key" })
        .click()
      await page.getByRole("status").filter({ hasText: "Key erp backend revoked." }).waitFor()
      expect(await refusal(run.api(newToken).documents.listForKey({ query: {} }))).toBe("api_key_revoked")
      await screenshot("journey-7-keys")

      // A colleague joins as developer: they see every screen and can change nothing.
      const colleague = newPerson("colleague")
      const colleagueAccount = await registerByApi(run, colleague, false)
      await section(page, "Members")
      await page.getByLabel("Their email").fill(colleague.email)
      await page.getByRole("combobox", { name: /^Role/ }).selectOption("developer")
      await page.getByRole("button", { name: "Send invitation" }).click()
      await page.getByRole("row").filter({ hasText: colleague.email }).getByText("developer", { exact: true }).waitFor()
      await screenshot("journey-8-members")

      // The colleague signs in, finds the invitation sent to their address and accepts it.
      const developerPage = await context.browser()!.newContext({
        viewport: { width: 1280, height: 900 },
        locale: "en-GB"
      })
      const developer = await developerPage.newPage()
      await developer.goto(run.base)
      await developer.getByLabel(/^(Email|E-mail)$/).fill(colleague.email)
      await developer.getByLabel(/^(Password|Senha)/).fill(colleague.password)
      await developer.getByRole("button", { name: "Sign in" }).last().click()
      await developer.getByRole("heading", { level: 2, name: "Invitations for you" }).waitFor()
      await developer.getByRole("button", { name: `Accept invitation ${tenant.name}` }).click()
      await developer.getByRole("heading", { level: 1, name: tenant.name }).waitFor()
      await page.reload()
      await section(page, "Members")
      await page.getByRole("table").first().getByRole("row").filter({ hasText: colleague.email }).getByText(
        "developer",
        { exact: true }
      ).waitFor()
      await section(developer, "API keys")
      await developer.getByRole("row").filter({ hasText: "erp backend" }).first().waitFor()
      expect(await developer.getByRole("button", { name: /Create a key|Rotate|Revoke/ }).count()).toBe(0)
      await section(developer, "Documents")
      await developer.getByRole("link", { name: `No. ${issued.number} · series ${issued.series}` }).click()
      await developer.getByRole("button", { name: "Download PDF (DANFSe)" }).waitFor()
      expect(await developer.getByRole("button", { name: "Cancel document" }).count()).toBe(0)
      await section(developer, "Webhooks")
      await developer.getByRole("link", { name: url }).waitFor()
      expect(await developer.getByRole("button", { name: "Add endpoint" }).count()).toBe(0)
      await section(developer, "Members")
      expect(await developer.getByRole("button", { name: /Send invitation|Change role|^Remove|Resend|Revoke/ }).count())
        .toBe(0)
      await section(developer, "Company")
      expect(await developer.locator("#company-legal_name").inputValue()).toBe(tenant.name)
      expect(await developer.locator("#company-legal_name").isDisabled()).toBe(true)
      expect(await developer.getByRole("button", { name: "Save registration" }).count()).toBe(0)
      await section(developer, "Certificate")
      expect(await developer.getByLabel("Certificate password").count()).toBe(0)
      expect(await accessibilityViolations(developer)).toEqual([])
      await developer.screenshot({ path: "test-results/dashboard/journey-9-developer.png", fullPage: true })
      // The server agrees: a developer's session may not manage.
      const [membership] = (await run.api(colleagueAccount.session).auth.myTenants({ query: {} })).data
      expect(
        await refusal(
          run.api(colleagueAccount.session).apiKeys.create({
            params: { tenantId: membership!.tenant.id },
            payload: { name: "sneaky", environment: "test", scopes: ["documents:read"] }
          })
        )
      ).toBe("forbidden")

      // The owner removes them; their access ends at once.
      const colleagueRow = page.getByRole("table").first().getByRole("row").filter({ hasText: colleague.email })
      await colleagueRow.getByRole("button", { name: `Remove ${colleague.name}` }).click()
      await page.getByRole("dialog", { name: `Remove ${colleague.name}?` }).getByRole("button", { name: /^Remove/ })
        .click()
      await colleagueRow.waitFor({ state: "detached" })
      expect(
        await refusal(run.api(colleagueAccount.session).tenants.get({ params: { tenantId: membership!.tenant.id } }))
      ).toBe("not_found")
      await developerPage.close()
      expect(problems()).toEqual([])
      // Longer than the default: the whole path of a person, through every screen, in one browser.
    },
    120_000
  )
})
