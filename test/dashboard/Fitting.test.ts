/**
 * What must fit on a phone's screen (390 px) as on a desktop's, in both languages: every select is
 * as wide as its longest option (the tenant switcher, the language, the documents' search and
 * filters, the webhooks' environment, an invitation's role), and the overview chart's day labels
 * stand apart from each other (read from the canvas as drawn).
 */
import { Duration } from "effect"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allScopes } from "../../src/domain/Principal.js"
import {
  type DashboardRun,
  hasChromium,
  newPerson,
  registerByApi,
  signInPage,
  startDashboard
} from "../support/Dashboard.js"

/** The chart's axes' font, as dashboard/src/screens/Overview.tsx sets it. */
const AXIS_FONT = "12px system-ui, -apple-system, \"Segoe UI\", Roboto, \"Helvetica Neue\", Arial, sans-serif"

const sections = {
  en: { overview: "Overview", documents: "Documents", webhooks: "Webhooks", members: "Members" },
  pt: { overview: "Visão geral", documents: "Documentos", webhooks: "Webhooks", members: "Membros" }
} as const

/**
 * The selects on the page narrower than their longest option: a copy of each, free to take the
 * width its options need (as a browser sizes a select left alone), is measured beside it.
 */
const cutOffSelects = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll("select")]
      .filter((select) => select.getClientRects().length > 0)
      .flatMap((select) => {
        const probe = select.cloneNode(true) as HTMLSelectElement
        probe.removeAttribute("id")
        probe.style.cssText = "position: absolute; visibility: hidden; width: auto; min-width: 0; max-width: none;"
        select.parentElement!.append(probe)
        const needed = probe.getBoundingClientRect().width
        probe.remove()
        const has = select.getBoundingClientRect().width
        const name = select.labels?.[0]?.firstChild?.textContent ?? select.name
        return has + 0.5 < needed ? [`${name}: ${Math.round(has)} px of ${Math.round(needed)} px`] : []
      })
  )

/**
 * The x axis's labels as drawn: runs of inked pixel columns under the plot's ticks (gaps up to 8 px,
 * as between a label's words, join a run), with the widest label the axis can draw.
 */
const dayLabelRuns = (page: Page) =>
  page.evaluate((font) => {
    const canvas = document.querySelector<HTMLCanvasElement>(".chart canvas")!
    const over = document.querySelector<HTMLElement>(".chart .u-over")!
    const scale = canvas.width / canvas.getBoundingClientRect().width
    // Below the plot, its ticks (10 px) and their gap: only the labels.
    const top = Math.ceil((over.offsetTop + over.offsetHeight + 13) * scale)
    const image = canvas.getContext("2d")!.getImageData(0, top, canvas.width, canvas.height - top)
    const inked = (x: number) => {
      for (let y = 0; y < image.height; y++) if (image.data[(y * image.width + x) * 4 + 3]! > 0) return true
      return false
    }
    const runs: Array<{ start: number; end: number }> = []
    for (let x = 0; x < image.width; x++) {
      if (!inked(x)) continue
      const last = runs.at(-1)
      if (last !== undefined && x - last.end <= 8 * scale) last.end = x
      else runs.push({ start: x, end: x })
    }
    const measure = document.createElement("canvas").getContext("2d")!
    measure.font = font
    const format = new Intl.DateTimeFormat(document.documentElement.lang === "pt-BR" ? "pt-BR" : "en-GB", {
      day: "numeric",
      month: "short",
      timeZone: "UTC"
    })
    const widest = Math.max(
      ...Array.from(
        { length: 40 },
        (_, back) => measure.measureText(format.format(Date.now() - back * 86_400_000)).width
      )
    )
    return { widths: runs.map((run) => (run.end - run.start + 1) / scale), widest }
  }, AXIS_FONT)

describe.runIf(hasChromium)("dashboard fitting on a phone", () => {
  let run: DashboardRun
  // The tenant is named after the person ("Padaria Dourada Ltda"), as long as many real names are.
  const person = { ...newPerson("fitting"), name: "Padaria Dourada" }

  beforeAll(async () => {
    run = await startDashboard({
      loginRateLimit: { perMinute: 100_000 },
      rateLimit: { perSecond: 100_000, burst: 100_000 },
      issuance: { concurrency: 2, pollInterval: Duration.millis(50), lease: Duration.seconds(60) }
    })
    const owner = await registerByApi(run, person)
    const key = await run.api(owner.session).apiKeys.create({
      params: { tenantId: owner.tenantId! },
      payload: { name: "backend", environment: "test", scopes: allScopes }
    })
    // One document, so that the overview draws its chart.
    await run.api(key.token).documents.issueForKey({
      payload: {
        type: "service_invoice",
        taker: { tax_id: "52998224725", name: "Maria da Silva" },
        service: {
          code: "010101",
          nbs_code: "115013000",
          description: "Pão francês",
          municipality_code: "3550308"
        },
        amounts: { services: 1500, iss_rate: "2.00" }
      },
      headers: {}
    })
  }, 120_000)
  afterAll(() => run?.close())

  for (const lang of ["en", "pt"] as const) {
    for (const phone of [true, false]) {
      const width = phone ? "phone" : "desktop"

      it(`shows every select's longest option whole (${lang}, ${width})`, async () => {
        const { page, problems } = await run.open({ lang, phone })
        await signInPage(page, person)
        const names = sections[lang]
        for (const section of [names.overview, names.documents, names.webhooks, names.members]) {
          await page.getByRole("navigation").getByRole("link", { name: section, exact: true }).click()
          await page.locator("main h1").first().waitFor()
          await page.locator("main select").first().or(page.locator("main .chart, main table")).first().waitFor()
          expect(await cutOffSelects(page), section).toEqual([])
        }
        expect(problems()).toEqual([])
      }, 60_000)

      it(`draws the chart's day labels apart from each other (${lang}, ${width})`, async () => {
        const { page, problems } = await run.open({ lang, phone })
        await signInPage(page, person)
        await page.locator(".chart canvas").waitFor()
        await expect.poll(async () => (await dayLabelRuns(page)).widths.length).toBeGreaterThanOrEqual(3)
        const { widths, widest } = await dayLabelRuns(page)
        // Two labels drawn over each other, or touching, would read as one run wider than any label.
        expect(widths.filter((drawn) => drawn > widest + 1)).toEqual([])
        expect(problems()).toEqual([])
      }, 60_000)
    }
  }
})
