/**
 * The interactive API reference at /docs, opened in a real browser (headless Chromium): it must
 * render the contract without reaching the internet, and without script errors.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime } from "effect"
import { HttpServer } from "effect/http"
import { existsSync } from "node:fs"
import { createServer } from "node:http"
import { chromium } from "playwright-core"
import { makeApp } from "../../src/App.js"
import { databaseLayer } from "../support/Databases.js"
import { testConfig } from "../support/TestApp.js"

const CHROMIUM = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"

// CI installs Chromium (.ci/run); a developer machine without it runs the rest of the suite.
describe.runIf(existsSync(CHROMIUM))("API reference page", () => {
  it.live("renders the contract in a real browser, offline and without errors", () =>
    Effect.promise(async () => {
      const runtime = ManagedRuntime.make(
        makeApp(testConfig(), databaseLayer("embedded")).pipe(
          Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0 }))
        )
      )
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
      try {
        const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
        const base = `http://127.0.0.1:${"port" in address ? address.port : 0}`
        const page = await browser.newPage()
        const errors: Array<string> = []
        const offsite: Array<string> = []
        page.on("pageerror", (error) => errors.push(error.message))
        page.on("request", (request) => {
          if (!request.url().startsWith(base) && !request.url().startsWith("data:")) offsite.push(request.url())
        })
        const response = await page.goto(`${base}/docs`, { waitUntil: "load" })
        expect(response?.status()).toBe(200)
        // Scalar renders the document's title and the operations of each group.
        await page.getByText("Electronic tax-document issuing API").first().waitFor({ timeout: 20_000 })
        await page.getByText("/v1/tenants/{tenantId}/documents").first().waitFor({ timeout: 20_000 })
        if (process.env["DOCS_SCREENSHOT"]) {
          await page.screenshot({ path: process.env["DOCS_SCREENSHOT"], fullPage: false })
        }
        expect(errors).toEqual([])
        expect(offsite).toEqual([])
      } finally {
        await browser.close()
        await runtime.dispose()
      }
    }), 60_000)
})
