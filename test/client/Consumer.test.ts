/**
 * The published client as an integrator gets it (issues 12 and 30): client/ is built and packed, the
 * tarball installed into a fresh project outside the repository (`effect` from the registry), a
 * TypeScript consumer and every example of client/README.md type-checked in a strict project
 * (`strict`, `exactOptionalPropertyTypes`, `noUncheckedIndexedAccess`, NodeNext), plain `node` runs
 * an ESM and a CommonJS script and the README's examples as written, against the service listening
 * on a real port in this process (its mail to a test mailbox, its webhooks to a local receiver); the
 * examples, between them, call every method the README lists; and `npm publish --dry-run` of
 * client/ is clean.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { afterAll, expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { makeApp } from "../../src/App.js"
import { createClient, Redacted } from "../../src/client/index.js"
import { makePkcs12 } from "../support/certificates.js"
import { cnpj, PASSWORD, uniqueEmail } from "../support/fixtures.js"
import { type Mailbox, mailSettings, TestMailbox } from "../support/Mailbox.js"
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

const node = (cwd: string, file: string, env: Record<string, string>, flags: ReadonlyArray<string> = []) =>
  run(process.execPath, [...flags, file], { cwd, env })

/**
 * Loaded before a README example (`node --import`): every request the client sends, with the
 * status it got, is appended to ETD_CALLS_FILE. Both clients go through the global fetch.
 */
const callRecorder = `import { appendFileSync } from "node:fs"
const send = globalThis.fetch
globalThis.fetch = async (input, init) => {
  const method = init?.method ?? (input instanceof Request ? input.method : "GET")
  const url = new URL(input instanceof Request ? input.url : String(input))
  const response = await send(input, init)
  appendFileSync(process.env.ETD_CALLS_FILE, \`\${method.toUpperCase()} \${url.pathname} \${response.status}\\n\`)
  return response
}
`

/** README method rows: the method, and a pattern of the paths its request line matches. */
const readmeMethods = (): ReadonlyArray<{ method: string; verb: string; path: RegExp }> => {
  const readme = readFileSync(join(root, "client/README.md"), "utf8")
  return [...readme.matchAll(/^\| `([a-zA-Z]+\.[a-zA-Z]+)` \| [^|]* \| `([A-Z]+) (\/\S*)` \|/gm)].map((m) => ({
    method: m[1]!,
    verb: m[2]!,
    path: new RegExp(`^${m[3]!.replace(/:[a-zA-Z]+/g, "[^/]+")}$`)
  }))
}

/** Each recorded request (`POST /v1/auth/login 200`) named by the README method whose request it is. */
const calledMethods = (recorded: string) => {
  const methods = readmeMethods()
  return recorded.trim().split("\n").map((line) => {
    const [verb, path, status] = line.split(" ")
    const matching = methods.filter((candidate) => candidate.verb === verb && candidate.path.test(path!))
    if (matching.length !== 1) throw new Error(`${line}: ${matching.length} README methods match`)
    return { method: matching[0]!.method, status: Number(status) }
  })
}

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
if (issued.type !== "service_invoice" || read.type !== "service_invoice") throw new Error("a service invoice was issued")
const missing = await etd.documents.getForKey({ params: { docId: "doc_" + "0".repeat(26) } }).then(() => null, (error) => error)
const refused = await etd.documents.issueForKey({ headers: {}, payload: invoice("529.982.247-26") }).then(() => null, (error) => error)
const unreachable = await createClient({ baseUrl: "http://127.0.0.1:1" }).system.healthz().then(() => null, (error) => error)
console.log(JSON.stringify({
  tenant: { name: registration.tenant.name, tax_id: registration.tenant.tax_id, email: registration.user.email },
  issued: { id: issued.id, status: issued.status, tax_id: issued.taker?.tax_id, created_at_is_date: issued.created_at instanceof Date },
  read: { id: read.id, tax_id: read.taker?.tax_id, iss_amount: read.amounts.iss_amount },
  notFound: { instance: missing instanceof NotFound, code: missing instanceof NotFound ? missing.code : null },
  invalidArgument: { instance: refused instanceof InvalidArgument, code: refused instanceof InvalidArgument ? refused.code : null, path: refused instanceof InvalidArgument ? refused.issues.map((issue) => issue.path.join(".")) : null },
  requestError: { instance: unreachable instanceof RequestError, reason: unreachable instanceof RequestError ? unreachable.reason._tag : null }
}))
`

const esmFlow =
  `import { createClient, InvalidArgument, NotFound, Redacted, RequestError } from "@etd/client"\n${flowBody}`
const cjsFlow = `"use strict"
const { createClient, InvalidArgument, NotFound, Redacted, RequestError } = require("@etd/client")
;(async () => {
${flowBody}
})().catch((error) => { console.error(error); process.exitCode = 1 })
`

/**
 * The TypeScript consumer: the same flow (its helper typed: a parameter, a literal kept literal),
 * and what the declarations must refuse.
 */
const typedConsumer =
  `import { createClient, InvalidArgument, NotFound, Redacted, RequestError, type PromiseClient } from "@etd/client"
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

/**
 * Every TypeScript block of client/README.md, each named by the \`<!-- consumer-test: name -->\` line
 * above it: a block without one is refused, so none escapes the type check and the run.
 */
const readmeExamples = (): ReadonlyArray<{ name: string; code: string }> => {
  const readme = readFileSync(join(root, "client/README.md"), "utf8")
  const blocks = [...readme.matchAll(/(?:<!-- consumer-test: ([a-z-]+) -->\n)?```ts\n([\s\S]*?)```/g)]
  const unnamed = blocks.filter((m) => m[1] === undefined).map((m) => m[2]!.split("\n")[0])
  if (unnamed.length > 0) {
    throw new Error(`client/README.md: TypeScript blocks without a consumer-test name: ${unnamed}`)
  }
  return blocks.map((m) => ({ name: m[1]!, code: m[2]! }))
}

/** What an integrator's strict project sets: the examples must check under it. */
const strictTsconfig = {
  compilerOptions: {
    target: "es2022",
    module: "nodenext",
    moduleResolution: "nodenext",
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
    types: ["node"],
    typeRoots: [join(root, "node_modules/@types")]
  },
  include: ["*.mts"]
}

/** Formatted as printed on documents: 11.222.333/0001-81. */
const formattedCnpj = (digits: string) =>
  `${digits.slice(0, 2)}.${digits.slice(2, 5)}.${digits.slice(5, 8)}/${digits.slice(8, 12)}-${digits.slice(12)}`

interface Consumer {
  readonly dir: string
  readonly packages: ReadonlyArray<string>
  readonly bytes: number
  /**
   * The strict type check of the project, started once it is written: it runs while the scripts run
   * (it needs none of them), and the test that asserts it comes last.
   */
  readonly typeCheck: Promise<string>
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
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(strictTsconfig, null, 2))
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
    writeFileSync(join(dir, "record-calls.mjs"), callRecorder)
    for (const example of readmeExamples()) {
      writeFileSync(join(dir, `readme-${example.name}.mts`), example.code)
    }
    const typeCheck = run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", dir], { cwd: dir })
      .then(() => "ok", (error: Error) => error.message)
    return { dir, packages, bytes: size(modules), typeCheck }
  })()
  return consumer
}

/** The service on a real port, its mail to a test mailbox, its webhooks allowed to this machine's receiver. */
const app = Layer.unwrap(Effect.map(TestMailbox, (mailbox) =>
  makeApp(
    testConfig({
      mail: mailSettings(mailbox.url),
      webhooks: {
        allowPrivateTargets: true,
        timeout: Duration.seconds(10),
        concurrency: 4,
        pollInterval: Duration.millis(50),
        lease: Duration.seconds(60)
      }
    }),
    databaseLayer("embedded")
  ))).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0 })),
    Layer.provideMerge(TestMailbox.layer)
  )

/** The token at the end of the latest link to `path` mailed to `to`, once `count` such mails arrived. */
const latestLink = (mailbox: Mailbox, to: string, path: string, count: number) => {
  const links = () => mailbox.to(to).map(mailbox.linkIn).filter((link) => link.includes(`/#/${path}/`))
  return Effect.map(
    mailbox.waitFor(to, () => links().length >= count),
    () => links().at(-1)!.slice(links().at(-1)!.lastIndexOf("/") + 1)
  )
}

/** A webhook receiver on this machine that accepts every delivery; closed with the scope. */
const webhookReceiver = Effect.acquireRelease(
  Effect.callback<{ url: string; received: () => number; server: Server }>((resume) => {
    let received = 0
    const server = createServer((request, response) => {
      received++
      request.resume()
      request.on("end", () => response.writeHead(204).end())
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(Effect.succeed({ url: `http://127.0.0.1:${port}/etd`, received: () => received, server }))
    })
  }),
  ({ server }) => Effect.callback<void>((done) => void server.close(() => done(Effect.void)))
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
  expect(result.invalidArgument).toEqual({ instance: true, code: "invalid_argument", path: ["payload.taker.tax_id"] })
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

  it.effect(
    "npm publish --dry-run: no warning; only the builds, the declarations and the README",
    () =>
      Effect.gen(function*() {
        const { dir } = yield* Effect.promise(prepareConsumer)
        // A token for the registry, so that npm does not warn about publishing while logged out.
        const userconfig = join(dir, "publish.npmrc")
        writeFileSync(userconfig, "//registry.npmjs.org/:_authToken=dry-run\n")
        const { stderr, stdout } = yield* Effect.promise(() =>
          run("npm", ["publish", "--dry-run", "--json", "--userconfig", userconfig, "--update-notifier=false"], {
            cwd: join(root, "client")
          })
        )
        expect(stderr.split("\n").filter((line) => /^npm (warn|error)/.test(line))).toEqual([])
        const report = (JSON.parse(stdout) as Record<string, { id: string; files: ReadonlyArray<{ path: string }> }>)[
          "@etd/client"
        ]!
        const service = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
        expect(report.id).toBe(`@etd/client@${service.version}`)
        const paths = report.files.map((file) => file.path)
        expect(paths.filter((path) => !/^dist\/(index\.(js|cjs)|types\/.+\.d\.ts)$/.test(path)).sort()).toEqual([
          "README.md",
          "package.json"
        ])
        expect(paths).toEqual(
          expect.arrayContaining(["dist/types/client/index.d.ts", "dist/types/client/Arguments.d.ts"])
        )
        const manifest = JSON.parse(readFileSync(join(root, "client/package.json"), "utf8"))
        expect(manifest).toMatchObject({
          license: "UNLICENSED",
          types: "./dist/types/client/index.d.ts",
          exports: {
            ".": { types: "./dist/types/client/index.d.ts", import: "./dist/index.js", require: "./dist/index.cjs" }
          }
        })
        expect(manifest.private).toBeUndefined()
      }),
    PREPARE_TIMEOUT
  )

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

  it.effect(
    "the README's examples run as written, and call every method the README lists",
    () =>
      Effect.gen(function*() {
        const { dir } = yield* Effect.promise(prepareConsumer)
        expect(readmeExamples().map((example) => example.name)).toEqual([
          "promise",
          "retentions",
          "login",
          "tenant",
          "effect",
          "account",
          "links",
          "team",
          "corrections",
          "goods",
          "webhooks",
          "credentials",
          "lists",
          "files"
        ])
        const url = yield* baseUrl
        const mailbox = yield* TestMailbox
        const receiver = yield* webhookReceiver
        // The examples take their credentials from the environment: a tenant, its owner and a test key.
        const email = uniqueEmail("readme")
        const { apiKey, invitationEmail, tenantId } = yield* Effect.promise(async () => {
          const anonymous = createClient({ baseUrl: url })
          const { tenant } = await anonymous.auth.register({
            payload: { email, password: Redacted.make(PASSWORD), tenant: { name: "Readme Ltda", tax_id: cnpj() } }
          })
          const { token } = await anonymous.auth.login({ payload: { email, password: Redacted.make(PASSWORD) } })
          const owner = createClient({ baseUrl: url, token })
          await owner.tenants.update({
            params: { tenantId: tenant!.id },
            // A state registration and a tax regime too: the "goods" example issues NF-e documents.
            payload: { registration: { ...completeRegistration, state_registration: "110042490114", crt: "normal" } }
          })
          const created = await owner.apiKeys.create({
            params: { tenantId: tenant!.id },
            payload: {
              name: "readme",
              environment: "test",
              scopes: ["documents:read", "documents:write", "documents:cancel", "webhooks:read", "webhooks:write"]
            }
          })
          // The invitation whose link the "links" example follows.
          const invited = uniqueEmail("invited")
          await owner.invitations.create({
            params: { tenantId: tenant!.id },
            payload: { email: invited, role: "developer" }
          })
          return { apiKey: created.token, invitationEmail: invited, tenantId: tenant!.id }
        })
        const callsFile = join(dir, "calls.log")
        rmSync(callsFile, { force: true })
        const env = {
          ETD_BASE_URL: url,
          ETD_API_KEY: apiKey,
          ETD_TENANT_ID: tenantId,
          ETD_EMAIL: email,
          ETD_PASSWORD: PASSWORD,
          ETD_CALLS_FILE: callsFile
        }
        // Node runs the TypeScript as written (type stripping), as the README's reader may.
        const example = (name: string, overrides: Record<string, string> = {}) =>
          Effect.promise(() =>
            node(dir, `readme-${name}.mts`, { ...env, ...overrides }, ["--import", "./record-calls.mjs"])
          )
        const promise = yield* example("promise")
        expect(promise.stdout).toMatch(/^doc_[0-9a-z]{26} queued 52998224725\norder-1042 3000\n$/)
        expect(promise.stderr.trim()).toBe("not_found")
        expect((yield* example("effect")).stdout).toBe("1 documents\n")
        expect((yield* example("effect", { ETD_API_KEY: `etd_test_${"a".repeat(32)}` })).stdout).toBe("invalid key\n")
        expect((yield* example("lists")).stdout).toBe("1 documents\n")
        const files = yield* example("files")
        expect(files.stdout).toMatch(/^NFSe-[0-9]{50}\.pdf authorized true true\n$/)
        expect((yield* example("login")).stdout).toBe(`${email} 1 1\n`)
        expect((yield* example("tenant")).stdout).toBe("Readme Ltda 1 1 authorized 0 0 7\n")

        // A second person: registers with a tenant of her own, then follows the links of her e-mails.
        const bia = { email: uniqueEmail("bia"), cnpj: cnpj(), password: `${PASSWORD} renewed` }
        const account = yield* example("account", { ETD_EMAIL: bia.email, ETD_CNPJ: formattedCnpj(bia.cnpj) })
        expect(account.stdout).toBe("ok ok false Bia Serviços Ltda me_epp\n")
        // The resent verification link (the first one no longer works), the reset link, the invitation.
        const verification = yield* latestLink(mailbox, bia.email, "verify-email", 2)
        const reset = yield* latestLink(mailbox, bia.email, "reset-password", 1)
        const invitation = yield* latestLink(mailbox, invitationEmail, "invitation", 1)
        const links = yield* example("links", {
          ETD_VERIFICATION_TOKEN: verification,
          ETD_RESET_TOKEN: reset,
          ETD_INVITATION_TOKEN: invitation,
          ETD_NEW_PASSWORD: bia.password
        })
        expect(links.stdout).toBe("false developer Readme Ltda true\n")
        expect((yield* example("team", { ETD_MEMBER_EMAIL: bia.email, ETD_MEMBER_PASSWORD: bia.password })).stdout)
          .toBe(
            "declined developer admin\n"
          )
        expect((yield* example("corrections")).stdout).toBe(
          "authorized true true true cancel_requested authorized cancel_requested\n"
        )
        expect((yield* example("goods")).stdout).toBe(
          "product_invoice registered 1 2 2 2 registered 2 2 2 registered\n"
        )
        expect((yield* example("webhooks", { ETD_WEBHOOK_URL: receiver.url })).stdout).toBe(
          "true document.authorized true 0 true false true\n"
        )
        expect(receiver.received()).toBeGreaterThanOrEqual(2)
        // Bia's own tenant takes the certificate of her CNPJ.
        const pfxPassword = "pfx password"
        const pfxFile = join(dir, "bia.pfx")
        writeFileSync(
          pfxFile,
          makePkcs12({ cn: `BIA SERVICOS LTDA:${bia.cnpj}`, cnpjOid: bia.cnpj, password: pfxPassword }).pfx
        )
        const credentials = yield* example("credentials", {
          ETD_EMAIL: bia.email,
          ETD_PASSWORD: bia.password,
          ETD_PFX_FILE: pfxFile,
          ETD_PFX_PASSWORD: pfxPassword
        })
        expect(credentials.stdout).toBe("true active true\n")
        // Last, so the examples above count the documents they expect: the B2B note's computation.
        expect((yield* example("retentions")).stdout).toMatch(/^PO-2026-0457 990000 19800 [1-9][0-9]* [1-9][0-9]*\n$/)

        // Every method the README lists was called by its examples, and answered as they expect: a
        // success, but for the failures the examples show on purpose.
        const calls = calledMethods(readFileSync(callsFile, "utf8"))
        const listed = readmeMethods().map((row) => row.method)
        expect(listed.length).toBeGreaterThan(50)
        expect([...new Set(calls.map((call) => call.method))].sort()).toEqual([...listed].sort())
        for (const method of listed) {
          const succeeded = calls.some((call) => call.method === method && call.status >= 200 && call.status < 300)
          expect({ method, succeeded }).toEqual({ method, succeeded: method !== "billing.paymentProviderWebhook" })
        }
        expect(calls.filter((call) => call.status >= 300)).toEqual([
          { method: "documents.getForKey", status: 404 },
          { method: "documents.listForKey", status: 401 },
          { method: "billing.paymentProviderWebhook", status: 401 }
        ])
      }).pipe(Effect.scoped),
    PREPARE_TIMEOUT
  )

  it.effect(
    "type-checks a consumer in a strict project, every example of the README included",
    () =>
      Effect.gen(function*() {
        const { dir, typeCheck } = yield* Effect.promise(prepareConsumer)
        const sources = readdirSync(dir).filter((file) => file.endsWith(".mts"))
        expect(sources).toEqual(expect.arrayContaining(readmeExamples().map((example) => `readme-${example.name}.mts`)))
        expect(yield* Effect.promise(() => typeCheck)).toBe("ok")
      }),
    PREPARE_TIMEOUT
  )
})

// The consumer project is a temporary directory: removed when the file's tests are done.
afterAll(async () => {
  const prepared = await consumer?.catch(() => undefined)
  if (prepared === undefined) return
  await prepared.typeCheck
  rmSync(prepared.dir, { recursive: true, force: true })
})
