/**
 * The members screen in a real browser (SPEC §5, §15): inviting people by email with a role (the
 * pending invitations listed, resent and revoked; a second invitation refused with a clear message;
 * the person a member only once they accept), changing a role, removing
 * a member behind a confirmation that can be cancelled, the last owner kept (neither demoted nor
 * removed), an admin offered nothing about owners, a developer's read-only view (of the keys too)
 * from which they may still leave the tenant, Portuguese, a phone-width screen and accessibility.
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

const openMembers = async (page: Page, label = "Members") => {
  await page.getByRole("navigation").getByRole("link", { name: label }).click()
  await page.getByRole("heading", { level: 1, name: label }).waitFor()
  await page.getByRole("table").waitFor()
}

const rowOf = (page: Page, email: string) => page.getByRole("row").filter({ hasText: email })

const sessionOf = (page: Page) =>
  page.evaluate(() => (JSON.parse(sessionStorage.getItem("etd.session")!) as { token: string }).token)

describe.runIf(hasChromium)("dashboard: members", () => {
  let run: DashboardRun
  beforeAll(async () => {
    run = await startDashboard()
  }, 120_000)
  afterAll(() => run?.close())

  it("invites a member who joins on accepting, changes their role, removes them after a cancelled confirmation, and keeps the last owner", async () => {
    const { page, problems, screenshot } = await run.open()
    const owner = newPerson("boss")
    await registerInPage(page, owner)
    const api = run.api(await sessionOf(page))
    const tenantId = (await api.auth.myTenants({ query: {} })).data[0]!.tenant.id
    const alice = newPerson("alice")
    const aliceAccount = await registerByApi(run, alice, false)

    await openMembers(page)
    const me = rowOf(page, owner.email)
    await me.getByText("you", { exact: true }).waitFor()
    await me.getByText("owner", { exact: true }).waitFor()
    await page.getByText("No pending invitations.").waitFor()
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("members-list")

    // An address nobody registered is invited all the same; the invitation can be resent and revoked.
    const unknown = newPerson("nobody").email
    await page.getByLabel("Their email").fill(unknown)
    await page.getByRole("button", { name: "Send invitation" }).click()
    await page.getByRole("status").filter({ hasText: `Invitation sent to ${unknown}.` }).waitFor()
    const pending = rowOf(page, unknown)
    await pending.getByText("developer", { exact: true }).waitFor()
    await pending.getByRole("button", { name: `Resend ${unknown}` }).click()
    await page.getByRole("status").filter({ hasText: `A new link was sent to ${unknown}` }).waitFor()
    await pending.getByRole("button", { name: `Revoke ${unknown}` }).click()
    const revoke = page.getByRole("dialog", { name: `Revoke the invitation to ${unknown}?` })
    await revoke.getByRole("button", { name: "Revoke invitation" }).click()
    await pending.waitFor({ state: "detached" })
    await screenshot("members-invitations")

    // The owner may invite owners: the option is there.
    expect(await page.getByRole("combobox", { name: /^Role/ }).locator("option").allInnerTexts()).toEqual([
      "owner",
      "admin",
      "developer"
    ])
    await page.getByLabel("Their email").fill(alice.email)
    await page.getByRole("combobox", { name: /^Role/ }).selectOption("developer")
    await page.getByRole("button", { name: "Send invitation" }).click()
    await page.getByRole("status").filter({ hasText: `Invitation sent to ${alice.email}.` }).waitFor()
    expect(await page.getByLabel("Their email").inputValue()).toBe("")
    await rowOf(page, alice.email).getByRole("button", { name: `Revoke ${alice.email}` }).waitFor()
    // Invited is not joined.
    expect((await run.api(aliceAccount.session).auth.myTenants({ query: {} })).data).toEqual([])

    // Twice: a clear refusal.
    await page.getByLabel("Their email").fill(alice.email)
    await page.getByRole("button", { name: "Send invitation" }).click()
    await page.getByRole("alert").filter({
      hasText: `${alice.email} is already a member, or already has a pending invitation`
    })
      .waitFor()

    // Alice accepts; the page read again shows her as a member.
    const [invitation] = (await run.api(aliceAccount.session).invitationAcceptance.listMine({ query: {} })).data
    await run.api(aliceAccount.session).invitationAcceptance.acceptMine({ params: { invitationId: invitation!.id } })
    expect((await run.api(aliceAccount.session).auth.myTenants({ query: {} })).data.map((m) => [m.tenant.id, m.role]))
      .toEqual([[tenantId, "developer"]])
    await page.reload()
    await openMembers(page)
    const aliceRow = page.getByRole("table").first().getByRole("row").filter({ hasText: alice.email })
    await aliceRow.getByText("developer", { exact: true }).waitFor()
    await page.getByText("No pending invitations.").waitFor()

    // Change the role in a dialog.
    await aliceRow.getByRole("button", { name: "Change role" }).click()
    const change = page.getByRole("dialog", { name: "Change alice's role" })
    await change.waitFor()
    expect(await change.getByRole("radio", { name: /^developer/ }).isChecked()).toBe(true)
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("members-change-role")
    await change.getByRole("radio", { name: /^admin/ }).check()
    await change.getByRole("button", { name: "Save role" }).click()
    await change.waitFor({ state: "detached" })
    await aliceRow.getByText("admin", { exact: true }).waitFor()
    const listed = await api.tenants.listMembers({ params: { tenantId }, query: {} })
    expect(listed.data.find((m) => m.user.email === alice.email)?.role).toBe("admin")

    // Remove: cancelling the confirmation keeps her.
    await aliceRow.getByRole("button", { name: "Remove alice" }).click()
    const confirm = page.getByRole("dialog", { name: "Remove alice?" })
    await confirm.getByText(/loses access to .* at once/).waitFor()
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("members-remove")
    await confirm.getByRole("button", { name: "Cancel" }).click()
    await confirm.waitFor({ state: "detached" })
    expect((await run.api(aliceAccount.session).auth.myTenants({ query: {} })).data).toHaveLength(1)
    await aliceRow.getByRole("button", { name: "Remove alice" }).click()
    await page.getByRole("dialog", { name: "Remove alice?" }).getByRole("button", { name: "Remove member" }).click()
    await aliceRow.waitFor({ state: "detached" })
    await page.getByRole("status").filter({ hasText: "alice removed." }).waitFor()
    expect((await run.api(aliceAccount.session).auth.myTenants({ query: {} })).data).toEqual([])

    // The last owner can be neither demoted nor removed: the server's 409, said plainly.
    await me.getByRole("button", { name: "Change role" }).click()
    const demote = page.getByRole("dialog", { name: "Change boss's role" })
    await demote.getByRole("radio", { name: /^admin/ }).check()
    await demote.getByRole("button", { name: "Save role" }).click()
    await demote.getByRole("alert").filter({
      hasText: "This is the tenant's last owner: make another member an owner first."
    }).waitFor()
    await demote.getByRole("button", { name: "Cancel" }).click()
    await me.getByRole("button", { name: "Leave tenant" }).click()
    const leave = page.getByRole("dialog", { name: /^Leave boss Ltda\?/ })
    await leave.getByRole("button", { name: "Leave tenant" }).click()
    await leave.getByRole("alert").filter({ hasText: "This is the tenant's last owner" }).waitFor()
    await screenshot("members-last-owner")
    await leave.getByRole("button", { name: "Cancel" }).click()
    const members = await api.tenants.listMembers({ params: { tenantId }, query: {} })
    expect(members.data.map((m) => [m.user.email, m.role])).toEqual([[owner.email, "owner"]])
    expect(problems()).toEqual([])
  })

  it("shows an admin no owner role to give and no control over owners; the server refuses if forced", async () => {
    const owner = newPerson("founder")
    const ownerAccount = await registerByApi(run, owner)
    const tenantId = ownerAccount.tenantId!
    const admin = newPerson("admin")
    const adminAccount = await registerByApi(run, admin, false)
    await joinByInvitation(
      run,
      { session: ownerAccount.session, tenantId },
      { ...adminAccount, email: admin.email },
      "admin"
    )

    const { page, problems } = await run.open()
    await signInPage(page, admin)
    await openMembers(page)
    expect(await page.getByRole("combobox", { name: /^Role/ }).locator("option").allInnerTexts()).toEqual([
      "admin",
      "developer"
    ])
    const ownerRow = rowOf(page, owner.email)
    await ownerRow.getByText("Only an owner can change or remove an owner.").waitFor()
    expect(await ownerRow.getByRole("button").count()).toBe(0)
    await rowOf(page, admin.email).getByRole("button", { name: "Change role" }).waitFor()
    expect(
      await refusal(
        run.api(adminAccount.session).tenants.removeMember({ params: { tenantId, userId: ownerAccount.userId } })
      )
    )
      .toBe("forbidden")
    expect(problems()).toEqual([])
  })

  it("shows a developer the members and the keys read-only, and lets them leave the tenant", async () => {
    const owner = newPerson("lead")
    const ownerAccount = await registerByApi(run, owner)
    const tenantId = ownerAccount.tenantId!
    await run.api(ownerAccount.session).apiKeys.create({
      params: { tenantId },
      payload: { name: "ci runner", environment: "test", scopes: ["documents:read"] }
    })
    const developer = newPerson("dev")
    // The developer has a tenant of their own too, so the switcher has two entries.
    const devAccount = await registerByApi(run, developer, true)
    await joinByInvitation(
      run,
      { session: ownerAccount.session, tenantId },
      { ...devAccount, email: developer.email },
      "developer"
    )

    const { page, problems, screenshot } = await run.open()
    await signInPage(page, developer)
    await page.getByLabel("Tenant").selectOption({ label: "lead Ltda (developer)" })
    await page.getByRole("heading", { level: 1, name: "lead Ltda" }).waitFor()

    await page.getByRole("navigation").getByRole("link", { name: "API keys" }).click()
    await page.getByRole("rowheader", { name: "ci runner" }).waitFor()
    await page.getByText(/only owners and admins create, rotate or revoke them/).waitFor()
    expect(await page.getByRole("button", { name: /Create a key|Rotate|Revoke/ }).count()).toBe(0)

    await openMembers(page)
    await page.getByText(
      /only owners and admins invite, change or remove members\. You may leave the tenant yourself\./
    )
      .waitFor()
    expect(await page.getByRole("button", { name: /Send invitation|Change role|Remove|Resend|Revoke/ }).count()).toBe(0)
    expect(await page.getByLabel("Their email").count()).toBe(0)
    expect(await rowOf(page, owner.email).getByRole("button").count()).toBe(0)
    expect(await accessibilityViolations(page)).toEqual([])
    await screenshot("members-developer")
    // What the page does not offer, the server refuses.
    expect(
      await refusal(
        run.api(devAccount.session).tenants.addMember({
          params: { tenantId },
          payload: { email: newPerson("x").email, role: "developer" }
        })
      )
    ).toBe("forbidden")

    // Leaving: confirmed, then the page starts again without that tenant.
    await rowOf(page, developer.email).getByRole("button", { name: "Leave tenant" }).click()
    const leave = page.getByRole("dialog", { name: "Leave lead Ltda?" })
    await leave.getByText(/To come back, an owner or admin must invite you again\./).waitFor()
    await leave.getByRole("button", { name: "Leave tenant" }).click()
    // The reloaded page stays on the members screen, now of the developer's own tenant.
    await expect.poll(() => page.getByLabel("Tenant").locator("option").allInnerTexts(), { timeout: 10_000 })
      .toEqual(["dev Ltda (owner)"])
    await rowOf(page, developer.email).getByText("owner", { exact: true }).waitFor()
    const left = await run.api(ownerAccount.session).tenants.listMembers({ params: { tenantId }, query: {} })
    expect(left.data.map((m) => m.user.email)).toEqual([owner.email])
    expect(problems()).toEqual([])
  })

  it("speaks Portuguese, on a phone-width screen too", async () => {
    const { page, problems, screenshot } = await run.open({ phone: true, lang: "pt" })
    await registerInPage(page, newPerson("socia"))
    await openMembers(page, "Membros")
    await page.getByRole("columnheader", { name: "Membro desde" }).waitFor({ state: "attached" })
    await page.getByRole("heading", { level: 2, name: "Convidar um membro" }).waitFor()
    const invited = newPerson("convidada").email
    await page.getByLabel("E-mail da pessoa").fill(invited)
    await page.getByRole("combobox", { name: /^Papel/ }).selectOption("admin")
    await page.getByRole("button", { name: "Enviar convite" }).click()
    await page.getByRole("status").filter({ hasText: `Convite enviado para ${invited}.` }).waitFor()
    await rowOf(page, invited).getByText("administrador", { exact: true }).waitFor()
    expect(await accessibilityViolations(page)).toEqual([])
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    await screenshot("members-phone-pt")
    expect(problems()).toEqual([])
  })
})
