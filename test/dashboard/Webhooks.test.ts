/**
 * The webhooks screen in a real browser (SPEC §9, §15), against real HTTP receivers on 127.0.0.1:
 * an owner adds a test endpoint and sees its signing secret once; a document issued by a backend
 * reaches the receiver signed with that secret (checked with the standardwebhooks package); the
 * page shows the delivery with its attempt, replays it, shows a failing receiver's 500, disables
 * the endpoint after a confirmation, rotates the secret (later deliveries verify with the new
 * one) and deletes an endpoint; a developer sees everything and can change nothing.
 */
import { Duration } from "effect"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Locator, Page } from "playwright-core"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  accessibilityViolations,
  type DashboardRun,
  hasChromium,
  joinByInvitation,
  newPerson,
  registerByApi,
  signInPage,
  startDashboard,
  type WatchedPage
} from "../support/Dashboard.js"
import { consultingService } from "../support/samples.js"

interface Received {
  readonly headers: Record<string, string>
  readonly body: string
}

/** A receiver that records every request and answers `status` with a short body. */
const startReceiver = (status: number, body: string) =>
  new Promise<{ readonly url: string; readonly received: Array<Received>; readonly close: () => Promise<void> }>(
    (resolve) => {
      const received: Array<Received> = []
      const flat = (headers: IncomingHttpHeaders) =>
        Object.fromEntries(
          Object.entries(headers).flatMap(([name, value]) =>
            value === undefined ? [] : [[name, Array.isArray(value) ? value.join(", ") : value]]
          )
        )
      const server: Server = createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          received.push({ headers: flat(request.headers), body: Buffer.concat(chunks).toString("utf8") })
          response.writeHead(status, { "content-type": "text/plain" }).end(body)
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resolve({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/nfse`,
          received,
          close: () =>
            new Promise<void>((done) => {
              server.closeAllConnections()
              server.close(() => done())
            })
        }))
    }
  )

type Receiver = Awaited<ReturnType<typeof startReceiver>>

const invoice = (reference: string) => ({
  type: "service_invoice" as const,
  reference,
  taker: { tax_id: "52998224725", name: "Maria da Silva" },
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" }
})

const until = async <A>(
  read: () => A | undefined | Promise<A | undefined>,
  what: string,
  timeoutMs = 30_000
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** The delivery of event `eventId` as the receiver got it, the `nth` time (0 = first). */
const receivedEvent = (receiver: Receiver, eventId: string, nth = 0) =>
  until(
    () => receiver.received.filter((request) => request.headers["webhook-id"] === eventId)[nth],
    `delivery ${nth + 1} of ${eventId}`
  )

/** The event the receiver got about document `documentId`. */
const eventAbout = (receiver: Receiver, documentId: string) =>
  until(() =>
    receiver.received.find((request) => {
      const body = JSON.parse(request.body) as { data: { object: { id?: string } } }
      return body.data.object.id === documentId
    }), `the event of ${documentId}`)

/** Presses the deliveries' Refresh button until `locator` shows (the dispatcher works in the background). */
const refreshUntil = async (page: Page, locator: Locator, what: string) => {
  await until(async () => {
    if (await locator.count() > 0) return true
    await page.getByRole("button", { name: "Refresh" }).click()
    await page.getByRole("heading", { name: "Deliveries" }).waitFor()
    return undefined
  }, what)
}

const verify = (secret: string, request: Received) =>
  new Webhook(secret).verify(request.body, request.headers) as { id: string; type: string }

describe.runIf(hasChromium)("dashboard webhooks", () => {
  let run: DashboardRun
  let ok: Receiver
  let failing: Receiver
  let owner: { readonly session: string; readonly tenantId: string; readonly person: ReturnType<typeof newPerson> }
  let watched: WatchedPage
  let testKey: string
  let secret = ""
  let endpointId = ""
  let failingEndpointId = ""

  beforeAll(async () => {
    ok = await startReceiver(200, "thanks, received")
    failing = await startReceiver(500, "failing on purpose")
    run = await startDashboard({
      webhooks: {
        allowPrivateTargets: true,
        timeout: Duration.seconds(5),
        concurrency: 4,
        pollInterval: Duration.millis(100),
        lease: Duration.seconds(60)
      }
    })
    const person = newPerson("hooks")
    const registered = await registerByApi(run, person)
    owner = { session: registered.session, tenantId: registered.tenantId!, person }
    const key = await run.api(owner.session).apiKeys.create({
      params: { tenantId: owner.tenantId },
      payload: { name: "backend", environment: "test", scopes: ["documents:write", "documents:read"] }
    })
    testKey = key.token
    watched = await run.open()
    await signInPage(watched.page, person)
  }, 120_000)

  afterAll(async () => {
    await run?.close()
    await ok?.close()
    await failing?.close()
  })

  const issue = (reference: string) =>
    run.api(testKey).documents.issueForKey({ payload: invoice(reference), headers: {} })

  it("adds a test endpoint, shows its secret once, and the receiver's delivery verifies with it", async () => {
    const { page, screenshot } = watched
    await page.getByRole("link", { name: "Webhooks" }).click()
    await page.getByRole("heading", { level: 1, name: "Webhooks" }).waitFor()
    await page.getByText("No webhook endpoints yet").waitFor()
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("webhooks-empty")

    await page.getByRole("button", { name: "Add endpoint" }).first().click()
    const dialog = page.getByRole("dialog", { name: "Add a webhook endpoint" })
    await dialog.waitFor()
    // Every event type of the contract is offered, and "all events" besides.
    for (const type of ["document.authorized", "document.rejected", "api_key.exposed", "quota.threshold"]) {
      expect(await dialog.getByRole("checkbox", { name: type }).count()).toBe(1)
    }
    // No event chosen: the form says so before anything is sent.
    await dialog.getByLabel("URL").fill(ok.url)
    await dialog.getByRole("button", { name: "Add endpoint" }).click()
    await dialog.getByRole("alert").filter({ hasText: "Choose at least one event type" }).waitFor()

    await dialog.getByRole("radio", { name: "Test" }).check()
    await dialog.getByRole("checkbox", { name: "document.authorized" }).check()
    await dialog.getByLabel("Description (optional)").fill("ERP receiver")
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("webhooks-create")
    await dialog.getByRole("button", { name: "Add endpoint" }).click()

    const secretInput = dialog.getByRole("textbox", { name: "Signing secret" })
    await secretInput.waitFor()
    secret = await secretInput.inputValue()
    expect(secret).toMatch(/^whsec_/)
    await dialog.getByText("Standard Webhooks library").waitFor()
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("webhooks-secret")
    await dialog.getByRole("button", { name: "Done" }).click()

    const listed = await run.api(owner.session).webhooks.listEndpoints({
      params: { tenantId: owner.tenantId },
      query: {}
    })
    expect(listed.data).toHaveLength(1)
    expect(listed.data[0]).toMatchObject({
      environment: "test",
      url: ok.url,
      events: ["document.authorized"],
      enabled: true,
      description: "ERP receiver"
    })
    endpointId = listed.data[0]!.id

    const row = page.getByRole("row").filter({ hasText: ok.url })
    await row.waitFor()
    expect(await row.getByText("Test", { exact: true }).count()).toBe(1)
    expect(await row.getByText("Enabled").count()).toBe(1)
    expect(await row.getByText("document.authorized").count()).toBe(1)
    // The environment filter: nothing live, the endpoint under test.
    await page.getByLabel("Environment").selectOption("live")
    await page.getByText("No endpoints in this environment.").waitFor()
    await page.getByLabel("Environment").selectOption("test")
    await row.waitFor()
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("webhooks-list")
    // The secret is nowhere else: not in the list, not on the endpoint's page.
    expect(await page.getByRole("textbox", { name: "Signing secret" }).count()).toBe(0)

    await row.getByRole("link", { name: ok.url }).click()
    await page.getByRole("heading", { level: 1, name: ok.url }).waitFor()
    await page.getByText("No deliveries yet").waitFor()
    expect(await page.getByRole("textbox", { name: "Signing secret" }).count()).toBe(0)
    expect(await page.content()).not.toContain(secret)

    const issued = await issue("hook-1")
    const delivered = await eventAbout(ok, issued.id)
    const event = verify(secret, delivered)
    expect(event.type).toBe("document.authorized")
    // A different secret does not verify it: the check above means something.
    expect(() => verify(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, delivered)).toThrow()
    const eventId = delivered.headers["webhook-id"]!

    // The page shows the delivery once the dispatcher has recorded its outcome.
    const deliveryRow = page.getByRole("row").filter({ hasText: eventId }).filter({ hasText: "succeeded" })
    await refreshUntil(page, deliveryRow, "the succeeded delivery")
    expect(await deliveryRow.getByText("document.authorized").count()).toBe(1)
    expect(await deliveryRow.getByRole("cell", { name: "200", exact: true }).count()).toBe(1)
    await deliveryRow.getByRole("button", { name: "Show attempts" }).click()
    const attempts = page.getByRole("table", { name: "Attempts, first to last" })
    await attempts.waitFor()
    expect(await attempts.getByRole("row").count()).toBe(2) // header + one attempt
    expect(await attempts.getByRole("cell", { name: "200", exact: true }).count()).toBe(1)
    expect(await attempts.locator("pre").textContent()).toBe("thanks, received")
    // What was sent, as the receiver got it, and a link to the document it is about.
    expect(JSON.parse((await page.locator("pre.webhook-payload").textContent())!)).toEqual(event)
    const documentLink = page.getByRole("link", { name: "Open document" })
    expect(await documentLink.getAttribute("href")).toBe(`#/documents/${issued.id}`)
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("webhook-detail")

    // Replay: no confirmation, a notification, and the receiver gets the same event again.
    await deliveryRow.getByRole("button", { name: "Replay" }).click()
    await page.locator(".announcer", { hasText: "Replay queued." }).waitFor()
    const again = await receivedEvent(ok, eventId, 1)
    expect(verify(secret, again).id).toBe(eventId)
    await refreshUntil(page, attempts.getByRole("row").nth(2), "the replay's attempt")
    expect(await attempts.getByRole("cell", { name: "200", exact: true }).count()).toBe(2)
    await documentLink.click()
    await page.getByRole("heading", { level: 1, name: `Document no. ${issued.number}, series ${issued.series}` })
      .waitFor()
    expect(watched.problems()).toEqual([])
  })

  it("shows the server's refusal of a private address in the dialog, and adds nothing", async () => {
    const refused = await run.open()
    await signInPage(refused.page, owner.person)
    await refused.page.getByRole("link", { name: "Webhooks" }).click()
    await refused.page.getByRole("row").filter({ hasText: ok.url }).waitFor()
    await refused.page.getByRole("button", { name: "Add endpoint" }).first().click()
    const dialog = refused.page.getByRole("dialog", { name: "Add a webhook endpoint" })
    await dialog.getByLabel("URL").fill("http://10.1.2.3/hooks")
    await dialog.getByRole("checkbox", { name: "All events" }).check()
    await dialog.getByRole("button", { name: "Add endpoint" }).click()
    await dialog.getByRole("alert").filter({ hasText: "url:" }).waitFor()
    expect(await dialog.getByRole("textbox", { name: "Signing secret" }).count()).toBe(0)
    const listed = await run.api(owner.session).webhooks.listEndpoints({
      params: { tenantId: owner.tenantId },
      query: {}
    })
    expect(listed.data.map((endpoint) => endpoint.url)).toEqual([ok.url])
    expect(refused.problems()).toEqual([])
    await refused.context.close()
  })

  it("shows a failing receiver's attempt with its status 500 and response", async () => {
    const { page, screenshot } = watched
    const created = await run.api(owner.session).webhooks.createEndpoint({
      params: { tenantId: owner.tenantId },
      payload: { url: failing.url, events: ["*"], environment: "test", description: "Broken receiver" }
    })
    failingEndpointId = created.id
    const issued = await issue("hook-fail")
    const delivered = await eventAbout(failing, issued.id)
    const eventId = delivered.headers["webhook-id"]!

    await page.goto(`${run.base}/#/webhooks/${failingEndpointId}`)
    await page.getByRole("heading", { level: 1, name: failing.url }).waitFor()
    const deliveryRow = page.getByRole("row").filter({ hasText: eventId }).filter({ hasText: "500" })
    await refreshUntil(page, deliveryRow, "the failed attempt")
    // Retried later: still pending, with a next attempt scheduled.
    expect(await deliveryRow.getByText("pending").count()).toBe(1)
    await deliveryRow.getByRole("button", { name: "Show attempts" }).click()
    const attempts = page.getByRole("table", { name: "Attempts, first to last" })
    await attempts.waitFor()
    expect(await attempts.getByRole("cell", { name: "500", exact: true }).first().isVisible()).toBe(true)
    expect(await attempts.locator("pre").first().textContent()).toBe("failing on purpose")
    // Every delivery sent failed: the endpoint shows as failing, in words, not by colour alone.
    const copied = () => page.evaluate(() => navigator.clipboard.readText())
    await page.getByRole("button", { name: "Copy the delivery id" }).click()
    const deliveries = await run.api(owner.session).webhooks.listDeliveries({
      params: { tenantId: owner.tenantId, endpointId: failingEndpointId },
      query: {}
    })
    await expect.poll(copied).toBe(deliveries.data.find((listed) => listed.event_id === eventId)?.id)
    await deliveryRow.getByRole("button", { name: `Copy the event id ${eventId}` }).click()
    await expect.poll(copied).toBe(eventId)
    await page.reload()
    const status = page.getByRole("definition").filter({ hasText: /^(Enabled|Failing)/ })
    await status.waitFor()
    expect(await status.locator(".badge.bad").textContent()).toBe("Failing")
    expect(await status.textContent()).toMatch(/failed deliveries in a row: [1-9]/)
    await page.getByRole("button", { name: "Copy the endpoint id" }).click()
    await expect.poll(copied).toBe(failingEndpointId)
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("webhook-detail-failing")
    await page.getByRole("link", { name: "All endpoints" }).click()
    const failingRow = page.getByRole("row").filter({ hasText: failing.url })
    await failingRow.getByText("Failing", { exact: true }).waitFor()
    expect(await page.getByRole("row").filter({ hasText: ok.url }).getByText("Failing").count()).toBe(0)

    // The same page at phone width, in Portuguese: the tables become cards, nothing overflows.
    const phone = await run.open({ phone: true, lang: "pt" })
    await signInPage(phone.page, owner.person)
    await phone.page.goto(`${run.base}/#/webhooks/${failingEndpointId}`)
    await phone.page.getByRole("heading", { level: 1, name: failing.url }).waitFor()
    const phoneRow = phone.page.getByRole("row").filter({ hasText: eventId })
    await phoneRow.waitFor()
    await phoneRow.getByRole("button", { name: "Ver tentativas" }).click()
    await phone.page.getByRole("table", { name: "Tentativas, da primeira à última" }).waitFor()
    await phone.page.getByRole("heading", { name: "Entregas" }).waitFor()
    expect(await phone.page.getByRole("definition").locator(".badge.bad").textContent()).toBe("Com falhas")
    // Nothing is wider than the screen, and no table needs sideways scrolling to be read.
    const overflowing = await phone.page.evaluate(() =>
      [document.documentElement, ...document.querySelectorAll(".table-wrap")]
        .filter((element) => element.scrollWidth > element.clientWidth)
        .map((element) => element.className || element.tagName)
    )
    expect(overflowing).toEqual([])
    expect(await accessibilityViolations(phone.page)).toEqual([])
    await phone.screenshot("webhook-detail-phone")
    expect(phone.problems()).toEqual([])
    await phone.context.close()
    expect(watched.problems()).toEqual([])
  })

  it("disables the endpoint only after confirmation, and enables it again", async () => {
    const { page, screenshot } = watched
    await page.goto(`${run.base}/#/webhooks/${endpointId}`)
    await page.getByRole("heading", { level: 1, name: ok.url }).waitFor()
    const facts = page.getByRole("definition").filter({ hasText: /^(Enabled|Disabled)/ })

    await page.getByRole("button", { name: "Disable" }).click()
    const confirm = page.getByRole("dialog", { name: "Disable this endpoint?" })
    await confirm.waitFor()
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("webhook-disable-confirm")
    await confirm.getByRole("button", { name: "Cancel" }).click()
    await confirm.waitFor({ state: "detached" })
    expect(await facts.textContent()).toBe("Enabled")
    const params = { tenantId: owner.tenantId, endpointId }
    expect((await run.api(owner.session).webhooks.getEndpoint({ params })).enabled).toBe(true)

    await page.getByRole("button", { name: "Disable" }).click()
    await confirm.getByRole("button", { name: "Disable endpoint" }).click()
    await page.getByRole("button", { name: "Enable" }).waitFor()
    expect(await facts.textContent()).toContain("Disabled")
    expect(await facts.textContent()).toContain("disabled by a member")
    expect(await run.api(owner.session).webhooks.getEndpoint({ params })).toMatchObject({
      enabled: false,
      disabled_reason: "manual"
    })

    // Enabling asks nothing: it starts deliveries again.
    await page.getByRole("button", { name: "Enable" }).click()
    await page.getByRole("button", { name: "Disable" }).waitFor()
    expect((await run.api(owner.session).webhooks.getEndpoint({ params })).enabled).toBe(true)
    expect(watched.problems()).toEqual([])
  })

  it("rotates the secret after a confirmation; later deliveries verify with the new secret", async () => {
    const { page, screenshot } = watched
    await page.getByRole("button", { name: "Rotate secret" }).click()
    const confirm = page.getByRole("dialog", { name: "Rotate the signing secret?" })
    await confirm.getByText("For 24 hours every delivery carries two signatures").waitFor()
    await confirm.getByRole("button", { name: "Rotate secret" }).click()
    const shown = page.getByRole("dialog", { name: "New signing secret" })
    const input = shown.getByRole("textbox", { name: "Signing secret" })
    await input.waitFor()
    const rotated = await input.inputValue()
    expect(rotated).toMatch(/^whsec_/)
    expect(rotated).not.toBe(secret)
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("webhook-rotated")
    await shown.getByRole("button", { name: "Done" }).click()
    await shown.waitFor({ state: "detached" })
    await page.getByText("Previous secret also signs until").waitFor()
    expect(await page.getByRole("textbox", { name: "Signing secret" }).count()).toBe(0)

    const issued = await issue("hook-rotated")
    const delivered = await eventAbout(ok, issued.id)
    expect(verify(rotated, delivered).type).toBe("document.authorized")
    // For 24 hours the old secret still signs alongside it (SPEC §9).
    expect(verify(secret, delivered).type).toBe("document.authorized")
    expect(delivered.headers["webhook-signature"]!.split(" ")).toHaveLength(2)
    expect(watched.problems()).toEqual([])
  })

  it("shows a developer every endpoint and delivery, with no control that changes them", async () => {
    const person = newPerson("hooks-dev")
    const developer = await registerByApi(run, person, false)
    await joinByInvitation(run, owner, { ...developer, email: person.email }, "developer")
    const dev = await run.open({ lang: "en" })
    await signInPage(dev.page, person)
    await dev.page.getByRole("link", { name: "Webhooks" }).click()
    await dev.page.getByRole("row").filter({ hasText: ok.url }).waitFor()
    await dev.page.getByText("Your role (developer) can read webhook endpoints").waitFor()
    expect(await dev.page.getByRole("button", { name: "Add endpoint" }).count()).toBe(0)

    await dev.page.getByRole("link", { name: ok.url }).click()
    await dev.page.getByRole("heading", { level: 1, name: ok.url }).waitFor()
    await dev.page.getByRole("button", { name: "Show attempts" }).first().waitFor()
    for (const name of ["Disable", "Enable", "Edit", "Rotate secret", "Delete", "Replay"]) {
      expect(await dev.page.getByRole("button", { name }).count(), name).toBe(0)
    }
    await dev.page.getByRole("button", { name: "Show attempts" }).first().click()
    await dev.page.getByRole("table", { name: "Attempts, first to last" }).waitFor()
    expect(await accessibilityViolations(dev.page)).toEqual([])
    await dev.screenshot("webhook-detail-developer")
    // The server refuses a developer anyway.
    await expect(run.api(developer.session).webhooks.rotateSecret({ params: { tenantId: owner.tenantId, endpointId } }))
      .rejects.toMatchObject({ code: "forbidden" })
    expect(dev.problems()).toEqual([])
    await dev.context.close()
  })

  it("edits an endpoint's events and deletes one after a confirmation", async () => {
    const { page } = watched
    await page.goto(`${run.base}/#/webhooks/${failingEndpointId}`)
    await page.getByRole("heading", { level: 1, name: failing.url }).waitFor()
    await page.getByRole("button", { name: "Edit" }).click()
    const edit = page.getByRole("dialog", { name: "Edit the endpoint" })
    await edit.getByRole("checkbox", { name: "All events" }).uncheck()
    await edit.getByRole("checkbox", { name: "document.rejected" }).check()
    await edit.getByRole("checkbox", { name: "document.failed" }).check()
    await edit.getByRole("button", { name: "Save changes" }).click()
    await edit.waitFor({ state: "detached" })
    const params = { tenantId: owner.tenantId, endpointId: failingEndpointId }
    expect((await run.api(owner.session).webhooks.getEndpoint({ params })).events).toEqual([
      "document.rejected",
      "document.failed"
    ])

    await page.getByRole("button", { name: "Delete" }).click()
    const confirm = page.getByRole("dialog", { name: "Delete this endpoint?" })
    await confirm.getByRole("button", { name: "Cancel" }).click()
    expect((await run.api(owner.session).webhooks.getEndpoint({ params })).id).toBe(failingEndpointId)
    await page.getByRole("button", { name: "Delete" }).click()
    await confirm.getByRole("button", { name: "Delete endpoint" }).click()
    await page.getByRole("heading", { level: 1, name: "Webhooks" }).waitFor()
    await page.getByRole("row").filter({ hasText: ok.url }).waitFor()
    expect(await page.getByRole("row").filter({ hasText: failing.url }).count()).toBe(0)
    await expect(run.api(owner.session).webhooks.getEndpoint({ params })).rejects.toMatchObject({ code: "not_found" })
    expect(watched.problems()).toEqual([])
  })
})
