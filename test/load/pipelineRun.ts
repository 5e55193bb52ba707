/**
 * One run of the pipeline benchmark (pipeline.bench.ts) on one built copy of the repository: the
 * service started as `npm start` starts it, on a PostgreSQL database of its own, a tenant whose key
 * issues documents the way a client does (the README's note, each with its own reference and
 * Idempotency-Key) and whose endpoint receives `document.authorized` at a receiver here that checks
 * every signature. A burst, its backlog drained, then a steady rate; each phase's figures include
 * where the CPU went (the service, this process, PostgreSQL) and, when asked, the statements per
 * document from PostgreSQL's own log.
 */
import autocannon from "autocannon"
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from "node:fs"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import pg from "pg"
import { consumerInvoiceExample, productInvoiceExample } from "../../src/domain/GoodsExamples.js"
import { declareRegistration } from "../support/registration.js"
import { consultingService } from "../support/samples.js"
import { cnpj } from "../support/taxIds.js"
import {
  type Child,
  cpuSeconds,
  createScratchDatabase,
  machineCpu,
  postgresCpu,
  sampleRss,
  startChild,
  startCommand,
  stopChild
} from "./children.js"
import { makeChecks, percentile } from "./loadgen.js"

export interface RunOptions {
  /** The built copy of the repository whose `dist/main.js` runs. */
  readonly tree: string
  readonly serverUrl: string
  readonly documents: number
  readonly concurrency: number
  readonly rate: number
  readonly steadySeconds: number
  readonly authorityLatencyMs: number
  /** `client`: the README's note, one reference and Idempotency-Key each; `reused`: one bare body for all, no key. */
  readonly body: "client" | "reused"
  /** What is issued: the README's NFS-e, or the contract's example NF-e or NFC-e. */
  readonly documentType: "service_invoice" | "product_invoice" | "consumer_invoice"
  /** Keep the service's own rate limits (a key's 100/s) instead of raising them out of the way. */
  readonly defaultLimits: boolean
  /** Count the statements per document in PostgreSQL's log (`log_statement = 'all'` on the run's database). */
  readonly statementLog: string | undefined
  readonly env: Record<string, string>
}

/** The longest a phase may wait for its webhooks. */
const DRAIN_DEADLINE_MS = 180_000

const verifySignature = (secret: Buffer, headers: IncomingHttpHeaders, payload: string) => {
  const id = headers["webhook-id"]
  const timestamp = headers["webhook-timestamp"]
  const signatures = headers["webhook-signature"]
  if (typeof id !== "string" || typeof timestamp !== "string" || typeof signatures !== "string") return false
  const expected = Buffer.from(createHmac("sha256", secret).update(`${id}.${timestamp}.${payload}`).digest("base64"))
  return signatures.split(" ").some((entry) => {
    const candidate = Buffer.from(entry.slice(entry.indexOf(",") + 1))
    return entry.startsWith("v1,") && candidate.length === expected.length && timingSafeEqual(candidate, expected)
  })
}

interface Arrival {
  readonly eventId: string
  readonly documentId: string
  readonly acceptedAt: number
  readonly receivedAt: number
}

/** The receiver: when each `document.authorized` arrived, and how many signatures failed. */
const startReceiver = async () => {
  const arrivals: Array<Arrival> = []
  const state = { secret: Buffer.alloc(0), badSignatures: 0 }
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const receivedAt = Date.now()
      const payload = Buffer.concat(chunks).toString("utf8")
      if (!verifySignature(state.secret, request.headers, payload)) {
        state.badSignatures++
        response.writeHead(401).end()
        return
      }
      const event = JSON.parse(payload) as { id: string; type: string; data: { object: Record<string, string> } }
      if (event.type === "document.authorized") {
        const document = event.data.object
        arrivals.push({
          eventId: event.id,
          documentId: document["id"]!,
          acceptedAt: Date.parse(document["created_at"]!),
          receivedAt
        })
      }
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const close = () => {
    server.closeAllConnections()
    server.close()
  }
  return { arrivals, state, port: (server.address() as AddressInfo).port, close }
}

const post = async (base: string, path: string, body: unknown, token?: string) => {
  const response = await fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body)
  })
  const json = (await response.json()) as Record<string, any>
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`)
  return json
}

/** The README walkthrough's note; `reference` and the Idempotency-Key are the client's order number. */
const clientNote = (order: string) => ({
  type: "service_invoice",
  reference: order,
  taker: { tax_id: "529.982.247-25", name: "Maria Tomadora", email: "maria@example.com" },
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" }
})

const bareNote = {
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria Tomadora" },
  service: { code: "010101", nbs_code: "115013000", description: "Consultoria", municipality_code: "3550308" },
  amounts: { services: 150000, iss_rate: "2.00" }
}

/** Each type's body: with the client's order number (`client`), or bare (`reused`). */
const notes = {
  service_invoice: { client: clientNote, bare: bareNote },
  product_invoice: {
    client: (order: string) => ({ ...productInvoiceExample, reference: order }),
    bare: { ...productInvoiceExample, reference: undefined }
  },
  consumer_invoice: {
    client: (order: string) => ({ ...consumerInvoiceExample, reference: order }),
    bare: { ...consumerInvoiceExample, reference: undefined }
  }
} as const

const ms = (values: ReadonlyArray<number>) => ({
  p50: Math.round(percentile(values, 50)),
  p99: Math.round(percentile(values, 99)),
  max: values.length === 0 ? NaN : Math.round(Math.max(...values))
})

/**
 * Statements of one database in PostgreSQL's log from byte `from` on: how many, and the commonest
 * kinds (their first words), for a census of the round trips a document costs.
 */
const statementsIn = (log: string, from: number, database: string) => {
  const size = statSync(log).size
  const buffer = Buffer.alloc(size - from)
  const fd = openSync(log, "r")
  readSync(fd, buffer, 0, buffer.length, from)
  closeSync(fd)
  const kinds = new Map<string, number>()
  let total = 0
  const records = buffer.toString("utf8").split(/\n(?=\d{4}-\d\d-\d\d )/)
  for (const record of records) {
    const match = new RegExp(`@${database} LOG:  (?:statement|execute [^:]*): ([\\s\\S]*)`).exec(record)
    if (match === null) continue
    total++
    const kind = match[1]!.replace(/\s+/g, " ").trim().slice(0, 60)
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
  }
  return { total, kinds }
}

/** CPU seconds so far of the service, this process (load generator and receiver), PostgreSQL and the machine. */
const cpuNow = (pid: number | undefined, database: string) => {
  const postgres = postgresCpu(database)
  const own = process.cpuUsage()
  let backends = 0
  let otherPostgres = 0
  for (const { ours, seconds } of postgres.values()) {
    if (ours) backends += seconds
    else otherPostgres += seconds
  }
  return {
    service: cpuSeconds(pid),
    client: (own.user + own.system) / 1e6,
    backends,
    otherPostgres,
    postgresPids: postgres,
    machine: machineCpu()
  }
}

/** Where the CPU went between two readings, per document (ms) and as cores busy on average. */
const cpuSpent = (before: ReturnType<typeof cpuNow>, after: ReturnType<typeof cpuNow>, documents: number) => {
  // A backend that started during the phase counts from zero; one that ended is not counted.
  const delta = (ours: boolean) => {
    let sum = 0
    for (const [pid, { ours: isOurs, seconds }] of after.postgresPids) {
      if (isOurs === ours) sum += seconds - (before.postgresPids.get(pid)?.seconds ?? 0)
    }
    return sum
  }
  const wall = (after.machine.total - before.machine.total) / 2
  const spent = {
    service: after.service - before.service,
    client: after.client - before.client,
    postgres: delta(true),
    other_postgres: delta(false),
    machine: after.machine.busy - before.machine.busy
  }
  return {
    ms_per_document: Object.fromEntries(
      Object.entries(spent).map(([name, seconds]) => [name, Math.round((seconds * 1e5) / documents) / 100])
    ),
    cores: Object.fromEntries(
      Object.entries(spent).map(([name, seconds]) => [name, Math.round((seconds / Math.max(wall, 0.001)) * 100) / 100])
    )
  }
}

export const runPipeline = async (options: RunOptions) => {
  const receiver = await startReceiver()
  const database = await createScratchDatabase(options.serverUrl, "etd_pipelinebench")
  const dataDir = mkdtempSync(join(tmpdir(), "etd-pipelinebench-"))
  const unlimited = "10000000"
  const runId = randomBytes(4).toString("hex")
  let service: Child | undefined
  try {
    if (options.statementLog !== undefined) {
      const admin = new pg.Client({ connectionString: database.url })
      await admin.connect()
      await admin.query(`ALTER DATABASE ${database.name} SET log_statement = 'all'`)
      await admin.end()
    }
    // The tree as its own `npm start` runs it, memory settings included.
    const start = startCommand(options.tree)
    service = await startChild(
      "service",
      [...start.flags, "dist/main.js"],
      {
        ...start.env,
        DATABASE_URL: database.url,
        DATA_DIR: dataDir,
        PASSWORD_HASH_COST: "1024",
        ...(options.defaultLimits ? {} : {
          // Limits far above the load: a 429 would measure the limiter, not the pipeline.
          RATE_LIMIT_PER_SECOND: unlimited,
          RATE_LIMIT_BURST: unlimited,
          RATE_LIMIT_TENANT_PER_SECOND: unlimited,
          RATE_LIMIT_TENANT_BURST: unlimited
        }),
        // The receiver is on loopback.
        WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
        TAX_AUTHORITY_SIMULATOR_LATENCY: `${options.authorityLatencyMs} millis`,
        ...options.env
      },
      ["/healthz", "/readyz"],
      options.tree
    )
    const base = service.base
    const pid = service.process.pid

    const email = `bench-${runId}@example.com`
    const password = "correct horse battery staple"
    const registration = await post(base, "/v1/auth/register", {
      email,
      password,
      tenant: { name: "Bench", tax_id: cnpj() }
    })
    const tenantId = registration["tenant"].id as string
    const session = (await post(base, "/v1/auth/login", { email, password }))["token"] as string
    await declareRegistration(base, tenantId, session)
    if (options.documentType !== "service_invoice") {
      // A goods emitter: its state registration and tax regime (the examples are a São Paulo company's).
      const declared = await fetch(`${base}/v1/tenants/${tenantId}`, {
        method: "PATCH",
        headers: { "content-type": "application/json", authorization: `Bearer ${session}` },
        body: JSON.stringify({ registration: { state_registration: "110042490114", crt: "normal" } })
      })
      if (declared.status !== 200) throw new Error(`declaring a goods emitter: ${declared.status}`)
    }
    const note = notes[options.documentType]
    const key = (await post(base, `/v1/tenants/${tenantId}/api-keys`, {
      name: "bench",
      environment: "test",
      scopes: ["documents:write", "documents:read", "webhooks:write"]
    }, session))["token"] as string
    const endpoint = await post(base, `/v1/tenants/${tenantId}/webhook-endpoints`, {
      url: `http://127.0.0.1:${receiver.port}/hooks`,
      events: ["document.authorized"]
    }, key)
    receiver.state.secret = Buffer.from(String(endpoint["secret"]).slice("whsec_".length), "base64")

    let order = 0
    const headers = { "content-type": "application/json", authorization: `Bearer ${key}` }
    /** `amount` documents from `connections` clients, at `rate` per second in all when given. */
    const issue = async (amount: number, connections: number, rate?: number) => {
      const started = performance.now()
      const result = await autocannon({
        url: `${base}/v1/documents`,
        method: "POST",
        headers,
        body: JSON.stringify(note.bare),
        ...(options.body === "client"
          ? {
            requests: [{
              setupRequest: (request: autocannon.Request) => {
                const id = `order-${runId}-${++order}`
                return {
                  ...request,
                  headers: { ...headers, "idempotency-key": id },
                  body: JSON.stringify(note.client(id))
                }
              }
            }]
          }
          : {}),
        connections,
        amount,
        ...(rate === undefined ? {} : { overallRate: rate }),
        timeout: 30
      })
      return {
        seconds: (performance.now() - started) / 1000,
        accepted: result["2xx"],
        refused: result.non2xx,
        errors: result.errors + result.timeouts,
        request_ms: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max }
      }
    }
    const { arrivals } = receiver
    /** Waits until `count` webhooks have arrived (or the deadline), then returns when the last did. */
    const awaitArrivals = async (count: number) => {
      const started = Date.now()
      while (arrivals.length < count && Date.now() - started < DRAIN_DEADLINE_MS) await sleep(20)
      return arrivals.at(-1)?.receivedAt ?? Date.now()
    }
    const logFrom = () => options.statementLog === undefined ? 0 : statSync(options.statementLog).size
    const census = (from: number, documents: number) => {
      if (options.statementLog === undefined) return {}
      const { kinds, total } = statementsIn(options.statementLog, from, database.name)
      const per = (count: number) => Math.round((count * 100) / Math.max(1, documents)) / 100
      return {
        statements_per_document: per(total),
        statement_kinds: [...kinds].sort((a, b) => b[1] - a[1]).slice(0, 20).map(([kind, count]) =>
          `${per(count)} ${kind}`
        )
      }
    }

    // 1. Burst, then its backlog drained.
    const burstRss = sampleRss(pid)
    const burstLog = logFrom()
    const burstCpu = cpuNow(pid, database.name)
    const burstStarted = Date.now()
    const burst = await issue(options.documents, options.concurrency)
    const lastBurstArrival = await awaitArrivals(burst.accepted)
    const burstArrivals = arrivals.slice(0, burst.accepted)
    const firstArrival = Math.min(...burstArrivals.map((a) => a.receivedAt))
    const burstFigures = {
      phase: "burst",
      documents: options.documents,
      clients: options.concurrency,
      accepted: burst.accepted,
      refused: burst.refused,
      errors: burst.errors,
      accepted_per_second: Math.round(burst.accepted / burst.seconds),
      request_ms: burst.request_ms,
      webhooks: burstArrivals.length,
      // From the first webhook to the last: the pipeline's own pace through the backlog.
      delivered_per_second: Math.round(
        burstArrivals.length / Math.max(0.001, (lastBurstArrival - firstArrival) / 1000)
      ),
      // From the first request to the last webhook: documents through the whole pipeline per second.
      end_to_end_per_second: Math.round(burstArrivals.length / ((lastBurstArrival - burstStarted) / 1000)),
      acceptance_to_webhook_ms: ms(burstArrivals.map((a) => a.receivedAt - a.acceptedAt)),
      peak_rss_mib: burstRss.stop(),
      cpu: cpuSpent(burstCpu, cpuNow(pid, database.name), Math.max(1, burst.accepted)),
      ...census(burstLog, burst.accepted)
    }

    // 2. Steady, below capacity: the delay itself.
    const steadyRss = sampleRss(pid)
    const steadyLog = logFrom()
    const steadyCpu = cpuNow(pid, database.name)
    const before = arrivals.length
    const steady = await issue(options.rate * options.steadySeconds, options.concurrency, options.rate)
    await awaitArrivals(before + steady.accepted)
    const steadyArrivals = arrivals.slice(before)
    const steadyFigures = {
      phase: `steady ${options.rate}/s`,
      documents: options.rate * options.steadySeconds,
      accepted: steady.accepted,
      refused: steady.refused,
      errors: steady.errors,
      accepted_per_second: Math.round(steady.accepted / steady.seconds),
      request_ms: steady.request_ms,
      webhooks: steadyArrivals.length,
      acceptance_to_webhook_ms: ms(steadyArrivals.map((a) => a.receivedAt - a.acceptedAt)),
      peak_rss_mib: steadyRss.stop(),
      cpu: cpuSpent(steadyCpu, cpuNow(pid, database.name), Math.max(1, steady.accepted)),
      ...census(steadyLog, steady.accepted)
    }

    // Nothing lost, nothing twice: in the database and at the receiver.
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    const counts = (await client.query<{ documents: number; authorized: number }>(
      `SELECT count(*)::int AS documents, count(*) FILTER (WHERE status = 'authorized')::int AS authorized
       FROM documents WHERE tenant_id = $1`,
      [tenantId]
    )).rows[0]!
    await client.end()
    const accepted = burst.accepted + steady.accepted
    const announced = new Set(arrivals.map((a) => a.documentId))
    const { check, failures } = makeChecks()
    check(burst.refused + burst.errors + steady.refused + steady.errors === 0, "every request answered 202")
    check(counts.documents === accepted, `${accepted} answered 202, ${counts.documents} documents stored`)
    check(counts.authorized === accepted, `${counts.authorized} of ${counts.documents} documents authorized`)
    check(announced.size === accepted, `${announced.size} documents announced by a webhook (0 lost)`)
    check(arrivals.length === announced.size, `${arrivals.length - announced.size} duplicated webhooks`)
    check(new Set(arrivals.map((a) => a.eventId)).size === arrivals.length, "one event id per webhook")
    check(receiver.state.badSignatures === 0, `${receiver.state.badSignatures} webhooks with a bad signature`)
    return { burst: burstFigures, steady: steadyFigures, failures }
  } finally {
    if (service !== undefined) await stopChild(service.process)
    await database.drop()
    rmSync(dataDir, { recursive: true, force: true })
    receiver.close()
  }
}
