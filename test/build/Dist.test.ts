/**
 * What `npm start` runs: the bundle `npm install` builds (scripts/build.mjs → dist/), started with
 * plain `node` on a fresh embedded database. The rest of the suite runs the TypeScript sources, so
 * this is the one test of the build itself: a module the bundle lost, a file it can no longer find
 * (the worker thread that opens certificates, the lazily loaded PDF renderer, the shipped XSDs, the
 * IBGE municipality table, the dashboard's files) or
 * a package that must stay outside it would pass everywhere else and fail here.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "../load/loadgen.js"
import { makePkcs12 } from "../support/certificates.js"
import { pdfText } from "../support/DanfseText.js"
import { completeRegistration } from "../support/registration.js"
import { cnpj } from "../support/taxIds.js"
import { hasTool } from "../support/tools.js"

const root = new URL("../..", import.meta.url)
const PASSWORD = "correct horse battery staple"

let child: ChildProcess | undefined
let output = ""
let base = ""
let dataDir = ""
const email = `dist-${Date.now()}@example.com`

const call = async (
  method: string,
  path: string,
  options: { token?: string; body?: unknown; form?: FormData } = {}
) => {
  const response = await fetch(base + path, {
    method,
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.body !== undefined ? { "content-type": "application/json" } : {})
    },
    body: options.form ?? (options.body !== undefined ? JSON.stringify(options.body) : undefined)
  })
  const type = response.headers.get("content-type") ?? ""
  const raw = type.includes("json") ? new Uint8Array() : new Uint8Array(await response.arrayBuffer())
  return {
    status: response.status,
    type,
    json: type.includes("json") ? (await response.json()) as Record<string, any> : {},
    bytes: raw.byteLength,
    raw
  }
}

/** Starts dist/main.js on `dataDir` and waits until it is ready. */
const startService = async () => {
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  output = ""
  // The module log says when the reference page's bundle (Scalar) is loaded.
  child = spawn(process.execPath, ["--import", "./test/support/moduleLoadLog.ts", "dist/main.js"], {
    cwd: root,
    env: {
      PATH: process.env["PATH"] ?? "",
      MODULE_LOAD_LOG: "httpApiScalar",
      PORT: String(port),
      DATA_DIR: dataDir,
      TAX_AUTHORITY_SIMULATOR_LATENCY: "0 millis"
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  const started = Date.now()
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dist/main.js exited with ${child.exitCode}:\n${output}`)
    if (await fetch(`${base}/readyz`).then((r) => r.ok, () => false)) break
    if (Date.now() - started > 60_000) throw new Error(`dist/main.js was not ready in 60 s:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

beforeAll(async () => {
  // The suite may run on sources newer than the last install: build what it starts (a few seconds).
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: root, stdio: "inherit" })
  dataDir = mkdtempSync(join(tmpdir(), "etd-dist-"))
  await startService()
}, 90_000)

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill("SIGTERM")
    await once(child, "exit")
  }
  rmSync(dataDir, { recursive: true, force: true })
})

/** The bundle's files a start loads before any dynamic import: dist/main.js and what it imports, transitively. */
const loadedAtStart = () => {
  const files = new Set<string>()
  const visit = (file: string) => {
    if (files.has(file)) return
    files.add(file)
    const text = readFileSync(new URL(`dist/${file}`, root), "utf8")
    for (const [, target] of text.matchAll(/(?:^|\n)import\s*(?:[^;]*?\sfrom\s*)?"\.\/([^"]+)";/g)) visit(target!)
  }
  visit("main.js")
  return [...files].map((file) => readFileSync(new URL(`dist/${file}`, root), "utf8")).join("\n")
}

describe("the built service (dist/, as npm start runs it)", () => {
  it("loads the reference page's Scalar bundle (~9 MiB of heap) on the first request for /docs, not at start", async () => {
    expect(output).not.toContain("module loaded:")
    const page = await call("GET", "/docs")
    expect(page.status).toBe(200)
    const bundle = /src="(\/docs\/assets\/scalar\.[\w-]+\.js)"/.exec(new TextDecoder().decode(page.raw))
    expect(bundle).not.toBeNull()
    expect(output).toMatch(/module loaded: \S*httpApiScalar/)
    const script = await call("GET", bundle![1]!)
    expect(script.status).toBe(200)
    expect(new TextDecoder().decode(script.raw)).toContain("createApiReference")
  })

  it("npm start sets no heap cap: a burst of large bodies may grow the heap, not stop the process", () => {
    const start = (JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as { scripts: { start: string } })
      .scripts.start
    expect(start).toMatch(/^(?:[A-Z_]+=\S+ )*exec node .*dist\/main\.js$/)
    expect(start).not.toMatch(/--max-old-space-size|--max-heap-size/)
    // Major collections come sooner instead, and the helper threads share two malloc arenas
    // (docs/operations.md, Memory): RSS < 250 MiB under load.
    expect(start).toContain("--heap-growing-percent=")
    expect(start).toMatch(/^MALLOC_ARENA_MAX=\d+ /)
  })

  it("loads PGlite, ioredis and nodemailer only when its configuration uses them (RSS of an instance)", () => {
    const eager = loadedAtStart()
    expect(eager).toContain("@effect/sql-pg")
    expect(eager).not.toMatch(/from "@electric-sql\/pglite"/)
    expect(eager).not.toMatch(/from "ioredis"/)
    expect(eager).not.toContain("node_modules/nodemailer/")
  })

  it("serves the API end to end: certificate upload, issuing, the DANFSe, and a clean stop", async () => {
    const taxId = cnpj()
    const registered = await call("POST", "/v1/auth/register", {
      body: { email, password: PASSWORD, tenant: { name: "Dist Ltda", tax_id: taxId } }
    })
    expect(registered.status).toBe(201)
    const tenantId = registered.json["tenant"].id as string
    // Without SMTP_URL in development, the verification mail is a log line that shows its link.
    const deadline = Date.now() + 10_000
    const linkIn = () => /#\/verify-email\/(etd_verify_[a-z2-7]{32})/u.exec(output)
    while (linkIn() === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    const link = linkIn()
    expect(link, output).not.toBeNull()
    const confirmed = await call("POST", "/v1/auth/email-verification/confirm", { body: { token: link![1] } })
    expect(confirmed.status).toBe(204)
    const session = (await call("POST", "/v1/auth/login", { body: { email, password: PASSWORD } }))
      .json["token"] as string
    const completed = await call("PATCH", `/v1/tenants/${tenantId}`, {
      token: session,
      body: { registration: completeRegistration }
    })
    expect(completed.status, JSON.stringify(completed.json)).toBe(200)

    // The certificate is opened in a worker thread: its file sits beside the bundle.
    const p12 = makePkcs12({ cn: `DIST LTDA:${taxId}`, cnpjOid: taxId, password: PASSWORD })
    const form = new FormData()
    form.set("file", new Blob([p12.pfx]), "a1.pfx")
    form.set("password", PASSWORD)
    const uploaded = await call("POST", `/v1/tenants/${tenantId}/credentials`, { token: session, form })
    expect(uploaded.status, JSON.stringify(uploaded.json)).toBe(201)
    expect(uploaded.json["tax_id"]).toBe(taxId)

    const key = await call("POST", `/v1/tenants/${tenantId}/api-keys`, {
      token: session,
      body: { name: "dist", environment: "test", scopes: ["documents:write", "documents:read"] }
    })
    const token = key.json["token"] as string
    const issued = await call("POST", "/v1/documents", {
      token,
      body: {
        type: "service_invoice",
        taker: { tax_id: "52998224725", name: "Maria Tomadora" },
        service: { code: "010101", nbs_code: "115013000", description: "Consultoria", municipality_code: "3550308" },
        amounts: { services: 150000, iss_rate: "2.00" }
      }
    })
    expect(issued.status).toBe(202)
    const id = issued.json["id"] as string
    let status = ""
    for (let i = 0; i < 100 && status !== "authorized"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      status = (await call("GET", `/v1/documents/${id}`, { token })).json["status"]
    }
    expect(status).toBe("authorized")

    // The PDF renderer is a chunk of its own, loaded on the first PDF.
    const pdf = await call("GET", `/v1/documents/${id}/pdf`, { token })
    expect(pdf.status).toBe(200)
    expect(pdf.type).toBe("application/pdf")
    expect(pdf.bytes).toBeGreaterThan(1000)
    if (hasTool("pdftotext")) {
      // The IBGE table travels in the bundle: the simulator's note and its DANFSe name the municipality.
      expect(pdfText(pdf.raw)).toContain("São Paulo - SP")
    }

    // The dashboard's files sit beside the bundle (dist/dashboard), found from where it runs.
    const page = await fetch(`${base}/`)
    expect(page.status).toBe(200)
    const html = await page.text()
    const script = /src="(\/assets\/index-[\w-]+\.js)"/.exec(html)?.[1]
    expect(script, html).toBeDefined()
    expect((await call("GET", script!)).bytes).toBeGreaterThan(10_000)

    child!.kill("SIGTERM")
    const [code] = await once(child!, "exit")
    expect(code, output).toBe(0)
    expect(output).not.toMatch(/"level":"(error|fatal)"/)
  }, 60_000)

  it("starts again on the data it left: the cluster made at install is only for a new DATA_DIR", async () => {
    await startService()
    const login = await call("POST", "/v1/auth/login", { body: { email, password: PASSWORD } })
    expect(login.status).toBe(200)
    child!.kill("SIGTERM")
    await once(child!, "exit")
  }, 60_000)
})

describe("the built local authority (npm run authority:local)", () => {
  it("starts from dist/, having compiled the national XSDs shipped beside the package", async () => {
    const port = await freePort()
    const authority = spawn(process.execPath, ["dist/local-authority.js"], {
      cwd: root,
      env: { PATH: process.env["PATH"] ?? "", LOCAL_AUTHORITY_PORT: String(port), TMPDIR: dataDir },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let printed = ""
    authority.stdout!.on("data", (chunk: Buffer) => (printed += chunk.toString("utf8")))
    authority.stderr!.on("data", (chunk: Buffer) => (printed += chunk.toString("utf8")))
    try {
      const started = Date.now()
      while (!printed.includes(`TAX_AUTHORITY_SANDBOX_URL=https://127.0.0.1:${port}/SefinNacional`)) {
        if (authority.exitCode !== null) {
          throw new Error(`dist/local-authority.js exited with ${authority.exitCode}:\n${printed}`)
        }
        if (Date.now() - started > 30_000) throw new Error(`dist/local-authority.js did not start in 30 s:\n${printed}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    } finally {
      authority.kill("SIGTERM")
      await once(authority, "exit")
    }
  }, 40_000)
})
