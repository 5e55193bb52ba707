/**
 * The published client as an integrator gets it (issue 12): client/ is built and packed, the
 * tarball installed into a fresh project outside the repository (`effect` from the registry), a
 * TypeScript consumer type-checked under `--strict`, and plain `node` runs an ESM and a CommonJS
 * script, and the examples of client/README.md as written, against the service listening on a
 * real port in this process.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { makeApp } from "../../src/App.js"
import { createClient, Redacted } from "../../src/client/index.js"
import { cnpj, PASSWORD, uniqueEmail } from "../support/fixtures.js"
import { completeRegistration } from "../support/registration.js"
import { databaseLayer, testConfig } from "../support/TestApp.js"

const root = fileURLToPath(new URL("../..", import.meta.url))

// Asynchronous on purpose: the service answering the scripts runs in this same process.
const run = (command: string, args: ReadonlyArray<string>, options: { cwd: string; env?: Record<string, string> }) =>
  new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    execFile(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      maxBuffer: 64 * 1024 * 1024
    }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(" ")} failed:\n${stdout}\n${stderr}`, { cause: error }))
      else resolve({ stdout, stderr })
    })
  })

const node = (cwd: string, file: string, env: Record<string, string>) => run(process.execPath, [file], { cwd, env })

/** The flow every script runs; `header` imports the client the way its module system does. */
const flowBody = `
const baseUrl = process.env.ETD_BASE_URL ?? ""
const email = process.env.ETD_EMAIL ?? ""
const password = Redacted.make("correct horse battery staple")
const anonymous = createClient({ baseUrl })
// A formatted CNPJ: a form the service accepts, so the client accepts it too.
const registration = await anonymous.auth.register({
  payload: { email, password, tenant: { name: "Acme Ltda", tax_id: process.env.ETD_CNPJ ?? "" } }
})
if (registration.tenant === undefined) throw new Error("registration without a tenant")
const tenantId = registration.tenant.id
const { token } = await anonymous.auth.login({ payload: { email, password } })
const dashboard = createClient({ baseUrl, token })
await dashboard.tenants.update({
  params: { tenantId },
  payload: {
    registration: {
      legal_name: "Acme Ltda",
      address: {
        street: "Avenida Paulista",
        number: "1000",
        district: "Bela Vista",
        municipality_code: "3550308",
        state: "SP",
        postal_code: "01310-100"
      }
    }
  }
})
const key = await dashboard.apiKeys.create({
  params: { tenantId },
  payload: { name: "backend", environment: "test", scopes: ["documents:read", "documents:write"] }
})
const etd = createClient({ baseUrl, token: key.token })
const invoice = (taxId) => ({
  type: "service_invoice",
  taker: { tax_id: taxId, name: "Maria da Silva" },
  service: { code: "010101", nbs_code: "115013000", description: "Consultoria em sistemas", municipality_code: "3550308" },
  amounts: { services: 150000, iss_rate: "2.00" }
})
const issued = await etd.documents.issueForKey({ headers: {}, payload: invoice("529.982.247-25") })
const read = await etd.documents.getForKey({ params: { docId: issued.id } })
const missing = await etd.documents.getForKey({ params: { docId: "doc_" + "0".repeat(26) } }).then(() => null, (error) => error)
const refused = await etd.documents.issueForKey({ headers: {}, payload: invoice("529.982.247-26") }).then(() => null, (error) => error)
const unreachable = await createClient({ baseUrl: "http://127.0.0.1:1" }).system.healthz().then(() => null, (error) => error)
console.log(JSON.stringify({
  tenant: { name: registration.tenant.name, tax_id: registration.tenant.tax_id, email: registration.user.email },
  issued: { id: issued.id, status: issued.status, tax_id: issued.taker?.tax_id, created_at_is_date: issued.created_at instanceof Date },
  read: { id: read.id, tax_id: read.taker?.tax_id, iss_amount: read.amounts.iss_amount },
  notFound: { instance: missing instanceof NotFound, code: missing instanceof NotFound ? missing.code : null },
  parseError: { instance: refused instanceof ParseError, tag: refused instanceof ParseError ? refused._tag : null },
  requestError: { instance: unreachable instanceof RequestError, reason: unreachable instanceof RequestError ? unreachable.reason._tag : null }
}))
`

const esmFlow = `import { createClient, NotFound, ParseError, Redacted, RequestError } from "@etd/client"\n${flowBody}`
const cjsFlow = `"use strict"
const { createClient, NotFound, ParseError, Redacted, RequestError } = require("@etd/client")
;(async () => {
${flowBody}
})().catch((error) => { console.error(error); process.exitCode = 1 })
`

/**
 * The TypeScript consumer: the same flow (its helper typed: a parameter, a literal kept literal),
 * and what the declarations must refuse.
 */
const typedConsumer =
  `import { createClient, NotFound, ParseError, Redacted, RequestError, type PromiseClient } from "@etd/client"
${
    flowBody
      .replace("const invoice = (taxId) =>", "const invoice = (taxId: string) =>")
      .replace(`type: "service_invoice",`, `type: "service_invoice" as const,`)
  }
const status: typeof read.status = "authorized"
// @ts-expect-error statuses are the contract's literals
const unknownStatus: typeof read.status = "processing"
const cents: number = read.amounts.services
// @ts-expect-error tax ids are strings
void etd.documents.issueForKey({ headers: {}, payload: { ...invoice("1"), taker: { tax_id: 52998224725, name: "x" } } })
// @ts-expect-error no such endpoint
void etd.documents.delete
// @ts-expect-error a document's path needs its id
void etd.documents.getForKey({ params: {} })
const typed: PromiseClient = etd
export { cents, status, typed, unknownStatus }
`

/** The code blocks of client/README.md marked \`<!-- consumer-test: name -->\`. */
const readmeExamples = (): ReadonlyArray<{ name: string; code: string }> => {
  const readme = readFileSync(join(root, "client/README.md"), "utf8")
  return [...readme.matchAll(/<!-- consumer-test: ([a-z-]+) -->\n```ts\n([\s\S]*?)```/g)].map((m) => ({
    name: m[1]!,
    code: m[2]!
  }))
}

/** Formatted as printed on documents: 11.222.333/0001-81. */
const formattedCnpj = (digits: string) =>
  `${digits.slice(0, 2)}.${digits.slice(2, 5)}.${digits.slice(5, 8)}/${digits.slice(8, 12)}-${digits.slice(12)}`

interface Consumer {
  readonly dir: string
  readonly packages: ReadonlyArray<string>
  readonly bytes: number
}

let consumer: Promise<Consumer> | undefined

/** Build, pack and install once for the whole file. */
const prepareConsumer = (): Promise<Consumer> => {
  consumer ??= (async () => {
    await node(root, "scripts/build-client.mjs", {})
    const dir = mkdtempSync(join(tmpdir(), "etd-client-consumer-"))
    const packed = await run("npm", ["pack", join(root, "client"), "--pack-destination", dir, "--json"], { cwd: dir })
    const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }]
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "etd-client-consumer", private: true }, null, 2))
    await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", join(dir, filename)], { cwd: dir })
    const modules = join(dir, "node_modules")
    const packages = readdirSync(modules).filter((name) => !name.startsWith(".")).flatMap((name) =>
      name.startsWith("@") ? readdirSync(join(modules, name)).map((scoped) => `${name}/${scoped}`) : [name]
    )
    const size = (path: string): number => {
      const stat = statSync(path)
      return stat.isDirectory() ? readdirSync(path).reduce((sum, entry) => sum + size(join(path, entry)), 0) : stat.size
    }
    writeFileSync(join(dir, "flow.mjs"), esmFlow)
    writeFileSync(join(dir, "flow.cjs"), cjsFlow)
    writeFileSync(join(dir, "consumer.mts"), typedConsumer)
    for (const example of readmeExamples()) {
      writeFileSync(join(dir, `readme-${example.name}.mts`), example.code)
      writeFileSync(join(dir, `readme-${example.name}.mjs`), example.code)
    }
    return { dir, packages, bytes: size(modules) }
  })()
  return consumer
}

const app = makeApp(testConfig(), databaseLayer("embedded")).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0 }))
)

const baseUrl = Effect.map(
  HttpServer.HttpServer,
  (server) => server.address._tag === "UnixPathAddress" ? "" : `http://127.0.0.1:${server.address.port}`
)

const flowEnv = (url: string) => ({
  ETD_BASE_URL: url,
  ETD_EMAIL: uniqueEmail("consumer"),
  ETD_CNPJ: formattedCnpj(cnpj())
})

const expectFlow = (stdout: string) => {
  const result = JSON.parse(stdout.trim().split("\n").at(-1)!)
  expect(result.tenant).toMatchObject({ name: "Acme Ltda", email: expect.stringMatching(/^consumer-.*@example\.com$/) })
  expect(result.tenant.tax_id).toMatch(/^[0-9]{14}$/)
  expect(result.issued).toMatchObject({ status: "queued", tax_id: "52998224725", created_at_is_date: true })
  expect(result.read).toEqual({ id: result.issued.id, tax_id: "52998224725", iss_amount: 3000 })
  expect(result.notFound).toEqual({ instance: true, code: "not_found" })
  expect(result.parseError).toEqual({ instance: true, tag: "SchemaError" })
  expect(result.requestError).toEqual({ instance: true, reason: "TransportError" })
}

const PREPARE_TIMEOUT = 300_000

layer(app, { timeout: 60_000, excludeTestServices: true })("the client package, installed elsewhere", (it) => {
  it.effect("installs with effect alone: none of the server's packages", () =>
    Effect.gen(function*() {
      const { bytes, dir, packages } = yield* Effect.promise(prepareConsumer)
      console.log(
        `consumer node_modules: ${packages.length} packages (${packages.join(", ")}), ${(bytes / 1e6).toFixed(1)} MB`
      )
      expect(packages).toContain("@etd/client")
      expect(packages).toContain("effect")
      for (const server of ["@electric-sql/pglite", "node-forge", "pg", "pdfkit", "ioredis", "@effect/platform-node"]) {
        expect(packages).not.toContain(server)
      }
      const installed = JSON.parse(readFileSync(join(dir, "node_modules/@etd/client/package.json"), "utf8"))
      const service = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
      expect(installed.version).toBe(service.version)
      expect(installed.dependencies).toEqual({ effect: service.dependencies.effect })
      // The tarball holds the builds and declarations, not our sources.
      const files = readdirSync(join(dir, "node_modules/@etd/client/dist"))
      expect(files).toEqual(expect.arrayContaining(["index.js", "index.cjs", "types"]))
    }), PREPARE_TIMEOUT)

  it.effect("type-checks a consumer under --strict, the README's examples included", () =>
    Effect.gen(function*() {
      const { dir } = yield* Effect.promise(prepareConsumer)
      const sources = readdirSync(dir).filter((file) => file.endsWith(".mts"))
      expect(sources.length).toBeGreaterThanOrEqual(3)
      const result = yield* Effect.promise(() =>
        run(process.execPath, [
          join(root, "node_modules/typescript/bin/tsc"),
          "--strict",
          "--noEmit",
          "--target",
          "es2022",
          "--module",
          "nodenext",
          "--moduleResolution",
          "nodenext",
          "--types",
          "node",
          "--typeRoots",
          join(root, "node_modules/@types"),
          ...sources
        ], { cwd: dir }).then(() => "ok", (error: Error) => error.message)
      )
      expect(result).toBe("ok")
    }), PREPARE_TIMEOUT)

  it.effect("ESM: plain node imports the package and calls the service", () =>
    Effect.gen(function*() {
      const { dir } = yield* Effect.promise(prepareConsumer)
      const url = yield* baseUrl
      const { stdout } = yield* Effect.promise(() => node(dir, "flow.mjs", flowEnv(url)))
      expectFlow(stdout)
    }), PREPARE_TIMEOUT)

  it.effect("CommonJS: plain node requires the package and calls the service", () =>
    Effect.gen(function*() {
      const { dir } = yield* Effect.promise(prepareConsumer)
      const url = yield* baseUrl
      const { stdout } = yield* Effect.promise(() => node(dir, "flow.cjs", flowEnv(url)))
      expectFlow(stdout)
    }), PREPARE_TIMEOUT)

  it.effect("the README's examples run as written", () =>
    Effect.gen(function*() {
      const { dir } = yield* Effect.promise(prepareConsumer)
      expect(readmeExamples().map((example) => example.name)).toEqual(["promise", "effect"])
      const url = yield* baseUrl
      // The examples take an API key from the environment: a tenant and a test key for them.
      const apiKey = yield* Effect.promise(async () => {
        const email = uniqueEmail("readme")
        const anonymous = createClient({ baseUrl: url })
        const { tenant } = await anonymous.auth.register({
          payload: { email, password: Redacted.make(PASSWORD), tenant: { name: "Readme Ltda", tax_id: cnpj() } }
        })
        const { token } = await anonymous.auth.login({ payload: { email, password: Redacted.make(PASSWORD) } })
        await createClient({ baseUrl: url, token }).tenants.update({
          params: { tenantId: tenant!.id },
          payload: { registration: completeRegistration }
        })
        const created = await createClient({ baseUrl: url, token }).apiKeys.create({
          params: { tenantId: tenant!.id },
          payload: { name: "readme", environment: "test", scopes: ["documents:read", "documents:write"] }
        })
        return created.token
      })
      const env = { ETD_BASE_URL: url, ETD_API_KEY: apiKey }
      const promise = yield* Effect.promise(() => node(dir, "readme-promise.mjs", env))
      expect(promise.stdout).toMatch(/^doc_[0-9a-z]{26} queued 52998224725\norder-1042 3000\n$/)
      expect(promise.stderr.trim()).toBe("not_found")
      const effect = yield* Effect.promise(() => node(dir, "readme-effect.mjs", env))
      expect(effect.stdout).toBe("1 documents\n")
      const invalid = yield* Effect.promise(() =>
        node(dir, "readme-effect.mjs", { ...env, ETD_API_KEY: `etd_test_${"a".repeat(32)}` })
      )
      expect(invalid.stdout).toBe("invalid key\n")
    }), PREPARE_TIMEOUT)
})

// The consumer project is a temporary directory: removed when the file's tests are done.
afterAll(async () => {
  const prepared = await consumer?.catch(() => undefined)
  if (prepared !== undefined) rmSync(prepared.dir, { recursive: true, force: true })
})
