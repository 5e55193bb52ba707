/**
 * The mailed links in a real browser, with real mail (a test SMTP server): a new account sees the
 * banner, asks for the link again, follows it and the banner is gone; "Forgot password?" mails a
 * reset link whose page sets a new password (in Portuguese), after which the old session is over
 * and the new password signs in. The token never stays in the address bar.
 */
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  accessibilityViolations,
  type DashboardRun,
  hasChromium,
  newPerson,
  registerInPage,
  signInPage,
  startDashboard
} from "../support/Dashboard.js"
import { type Mailbox, mailSettings, startMailbox } from "../support/Mailbox.js"

describe.runIf(hasChromium)("dashboard: e-mail verification and password reset", () => {
  let run: DashboardRun
  let mailbox: Mailbox
  const scope = Effect.runSync(Scope.make())
  beforeAll(async () => {
    mailbox = await Effect.runPromise(Scope.provide(startMailbox, scope))
    run = await startDashboard({ mail: mailSettings(mailbox.url) })
  }, 120_000)
  afterAll(async () => {
    await run?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("a new account confirms its address through the mailed link; the banner offers a new one until then", async () => {
    const { page, problems, screenshot } = await run.open()
    const person = newPerson("verify")
    await registerInPage(page, person, undefined, false)
    const banner = page.getByRole("region", { name: "Confirm your e-mail address" })
    await banner.waitFor()
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("verify-banner")
    const first = await Effect.runPromise(mailbox.waitFor(person.email))
    await banner.getByRole("button", { name: "Send the link again" }).click()
    await banner.getByText(`A new link is on its way to ${person.email}.`).waitFor()
    const second = await Effect.runPromise(
      mailbox.waitFor(person.email, (mail) => mailbox.linkIn(mail) !== mailbox.linkIn(first))
    )
    const link = mailbox.linkIn(second).replace(/^http:\/\/localhost:\d+/u, run.base)

    await page.goto(link)
    await page.getByText("Your e-mail address is confirmed.").waitFor()
    expect(page.url()).not.toContain("etd_verify_")
    await page.getByRole("link", { name: "Continue to the dashboard" }).click()
    await page.getByRole("navigation").waitFor()
    expect(await banner.count()).toBe(0)

    // The superseded link says so.
    await page.goto(mailbox.linkIn(first).replace(/^http:\/\/localhost:\d+/u, run.base))
    await page.getByText(/This link is no longer valid/).waitFor()
    expect(problems()).toEqual([])
  })

  it("\"Esqueceu a senha?\" mails a link whose page sets a new password and ends the old session", async () => {
    const { page, context, problems, screenshot } = await run.open({ lang: "pt" })
    const person = newPerson("reset")
    await registerInPage(page, person)
    const oldSession = await page.evaluate(() => sessionStorage.getItem("etd.session"))
    expect(oldSession).not.toBeNull()

    const other = await context.newPage()
    await other.goto(run.base)
    await other.getByRole("button", { name: "Esqueceu a senha?" }).click()
    await other.getByLabel("E-mail").fill(person.email)
    await other.getByRole("button", { name: "Enviar link" }).click()
    await other.getByText(`Se houver uma conta com ${person.email}, um link está a caminho.`, { exact: false })
      .waitFor()
    const mail = await Effect.runPromise(mailbox.waitFor(person.email, (m) => m.subject === "Redefinição de senha"))

    await other.goto(mailbox.linkIn(mail).replace(/^http:\/\/localhost:\d+/u, run.base))
    await other.getByRole("heading", { name: "Defina uma nova senha" }).waitFor()
    expect(other.url()).not.toContain("etd_reset_")
    expect(await accessibilityViolations(other)).toEqual([])
    await screenshot("reset-form")
    await other.getByLabel(/^Nova senha/).fill("uma senha novinha em folha")
    await other.getByRole("button", { name: "Definir senha" }).click()
    await other.getByText(/Sua senha foi alterada/).waitFor()

    // The first tab's session ended with the reset: it is sent back to sign in.
    await page.reload()
    await page.getByRole("button", { name: /^Entrar$/ }).first().waitFor()
    await signInPage(page, { ...person, password: "uma senha novinha em folha" })
    expect(problems()).toEqual([])
  })
})
