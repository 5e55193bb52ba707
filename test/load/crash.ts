/**
 * Crash test (issue 16, SPEC §6 and §12): three instances share one PostgreSQL, and one of them is
 * killed with SIGKILL every few seconds and started again on its port, while clients issue
 * documents, each with an Idempotency-Key of its own, retrying a key on another instance whenever an
 * attempt fails (no connection, a reset, a 5xx, a 409), until it is answered 202. Meanwhile a
 * checker revokes fresh API keys on one instance and calls with them on the others at once. It
 * prints the documents, duplicates, lost ones, the clients' waits, every status seen, the
 * revocations' next requests and how long the pipeline took to finish every document, and exits 1
 * if anything was lost, duplicated or outlived its revocation, or if a client waited longer than
 * CRASH_MAX_WAIT (5 s) from its first attempt to its 202.
 *
 *   npm run test:crash
 *   CRASH_CLIENTS=16 CRASH_DURATION=60 CRASH_DOCUMENTS=3000 CRASH_KILL_INTERVAL=3 npm run test:crash
 *
 * The instances are child processes started as production starts them (`node dist/main.js` with `npm start`'s settings,
 * built by the npm script first), on a database created for the run and dropped afterwards. The
 * killer never kills the last instance that is serving: a client always has somewhere to retry, so its wait measures
 * the service's recovery (the dead instance's Idempotency-Key claims, 2 s leases) and not a
 * cluster with no instance up. `WORKER_LEASE` is 10 s for the run (60 s by default) so the jobs a
 * killed instance held are taken over while the test waits.
 *
 * `reference` carries the key, as the README's example does, and the database's unique reference
 * would turn a key served twice into a `409 conflict` rather than a second document; that 409 counts
 * as a failure too. `CRASH_REFERENCE=0` sends no reference (the key goes in `notes`), so the
 * Idempotency-Key alone stands between a retry and a duplicate.
 *
 * Settings (environment): CRASH_CLIENTS (16), CRASH_DURATION (60 s), CRASH_DOCUMENTS (3000 keys),
 * CRASH_KILL_INTERVAL (3 s), CRASH_REVOCATION_INTERVAL (2 s), CRASH_WORKER_LEASE (10 s),
 * CRASH_DRAIN_TIMEOUT (120 s for the pipeline to finish), CRASH_MAX_WAIT (5 s: the longest a client may
 * wait for its 202, retries included), CRASH_REFERENCE (1), CRASH_POSTGRES_URL
 * (postgres://postgres@127.0.0.1:5432/postgres, where the run's database is created and dropped).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes, randomInt } from "node:crypto"
import { once } from "node:events"
import { mkdtempSync, rmSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import pg from "pg"
import { declareRegistration } from "../support/registration.js"
import { cnpj } from "../support/taxIds.js"
import { serviceStart } from "./children.js"
import { freePort, makeChecks, percentile } from "./loadgen.js"

const seconds = (name: string, fallback: number) => Number(process.env[name] ?? fallback) * 1000
const CLIENTS = Number(process.env["CRASH_CLIENTS"] ?? 16)
const DURATION_MS = seconds("CRASH_DURATION", 60)
const DOCUMENTS = Number(process.env["CRASH_DOCUMENTS"] ?? 3000)
const KILL_INTERVAL_MS = seconds("CRASH_KILL_INTERVAL", 3)
const REVOCATION_INTERVAL_MS = seconds("CRASH_REVOCATION_INTERVAL", 2)
const WORKER_LEASE_MS = seconds("CRASH_WORKER_LEASE", 10)
const DRAIN_MS = seconds("CRASH_DRAIN_TIMEOUT", 120)
const MAX_WAIT_MS = seconds("CRASH_MAX_WAIT", 5)
const WITH_REFERENCE = process.env["CRASH_REFERENCE"] !== "0"
const POSTGRES_URL = process.env["CRASH_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
const INSTANCE_NAMES = ["A", "B", "C"]
/** A request without an answer after this long counts as a hang (and is retried). */
const HANG_MS = 30_000
/** A key still not served after this long is given up (and the run fails). */
const GIVE_UP_MS = 120_000
/** How long an instance may take to start (a loaded machine is slow to start one). */
const START_MS = 120_000

class Counter {
  readonly counts = new Map<string, number>()
  add(label: string) {
    this.counts.set(label, (this.counts.get(label) ?? 0) + 1)
  }
  toString() {
    return this.counts.size === 0
      ? "—"
      : [...this.counts].sort((a, b) => b[1] - a[1]).map(([l, n]) => `${n} × ${l}`).join(", ")
  }
}

const { failures, check } = makeChecks()

// ---------------------------------------------------------------------------------------------
// Instances

interface Instance {
  readonly name: string
  readonly port: number
  readonly base: string
  child?: ChildProcess
  /** Answered `/readyz` 200 since its last start, and not killed since. */
  ready: boolean
  /** Bumped on every start, so a readiness poll of a killed process stops. */
  generation: number
  killedOnPurpose: boolean
}

const serviceLogs = new Counter()
const errorLines: Array<string> = []
const outputTails = new Map<string, Array<string>>()
const restartToReadyMs: Array<number> = []
const unexpectedExits: Array<string> = []
let kills = 0
let killsSkipped = 0

const describeFailure = (error: unknown) => {
  if (error instanceof DOMException && error.name === "TimeoutError") return "no answer (hang)"
  const cause = error instanceof Error ? error.cause : undefined
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : String(error)
  return code === "ECONNREFUSED" ? "connection refused" : `connection lost (${code})`
}

const start = (instance: Instance, env: Record<string, string>) => {
  const generation = ++instance.generation
  instance.ready = false
  instance.killedOnPurpose = false
  const startedAt = Date.now()
  const child = spawn(process.execPath, [...serviceStart.flags, "dist/main.js"], {
    env: {
      PATH: process.env["PATH"] ?? "",
      ...serviceStart.env,
      ...env,
      PORT: String(instance.port),
      INSTANCE_ID: `crash-${instance.name}`
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  instance.child = child
  let pending = ""
  const read = (chunk: Buffer) => {
    const lines = (pending + chunk.toString("utf8")).split("\n")
    pending = lines.pop()!
    for (const line of lines) {
      outputTails.set(instance.name, [...(outputTails.get(instance.name) ?? []).slice(-30), line])
      try {
        const record = JSON.parse(line) as { level?: string; msg?: unknown }
        const message = String(record.msg)
        serviceLogs.add(`${record.level} "${message.slice(0, 120)}"`)
        if (/^(error|fatal)$/i.test(record.level ?? "")) errorLines.push(`${instance.name}: ${line}`)
      } catch {
        serviceLogs.add("(not JSON)")
        if (line.trim() !== "") errorLines.push(`${instance.name}: ${line}`)
      }
    }
  }
  child.stdout!.on("data", read)
  child.stderr!.on("data", read)
  child.once("exit", (code, signal) => {
    if (instance.generation !== generation || instance.killedOnPurpose || stopping) return
    // Nobody killed it: a finding. Say so and start it again, as a supervisor would.
    unexpectedExits.push(`${instance.name} exited by itself (code ${code}, signal ${signal})`)
    instance.ready = false
    start(instance, env)
  })
  void (async () => {
    while (instance.generation === generation && !stopping) {
      const status = await fetch(`${instance.base}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
        async (response) => (await response.arrayBuffer(), response.status),
        () => 0
      )
      if (status === 200 && instance.generation === generation) {
        instance.ready = true
        restartToReadyMs.push(Date.now() - startedAt)
        return
      }
      if (Date.now() - startedAt > START_MS) {
        unexpectedExits.push(`${instance.name} not ready ${START_MS / 1000} s after its start`)
        return
      }
      await sleep(200)
    }
  })()
}

const crash = async (instance: Instance, env: Record<string, string>) => {
  const child = instance.child!
  instance.ready = false
  instance.killedOnPurpose = true
  const exited = once(child, "exit")
  child.kill("SIGKILL")
  await exited
  kills++
  start(instance, env)
}

let stopping = false

const waitAllReady = async (instances: ReadonlyArray<Instance>, timeoutMs: number) => {
  const started = Date.now()
  while (!instances.every((i) => i.ready)) {
    if (Date.now() - started > timeoutMs) {
      const tails = instances.map((i) => `${i.name}:\n${(outputTails.get(i.name) ?? []).join("\n")}`).join("\n")
      throw new Error(`instances not ready after ${timeoutMs / 1000} s:\n${tails}`)
    }
    await sleep(100)
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP

type Answer =
  | { readonly ok: true; readonly status: number; readonly body: Record<string, unknown>; readonly label: string }
  | { readonly ok: false; readonly label: string }

const call = async (
  instance: Instance,
  method: "GET" | "POST",
  path: string,
  options: { token?: string | undefined; body?: unknown; headers?: Record<string, string> } = {}
): Promise<Answer> => {
  try {
    const response = await fetch(instance.base + path, {
      method,
      headers: {
        ...(options.body === undefined ? {} : { "content-type": "application/json" }),
        ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
        ...options.headers
      },
      body: options.body === undefined
        ? undefined
        : typeof options.body === "string"
        ? options.body
        : JSON.stringify(options.body),
      signal: AbortSignal.timeout(HANG_MS)
    })
    const json = (await response.json().catch(() => ({}))) as Record<string, unknown>
    const code = typeof json["code"] === "string" && response.status >= 400 ? ` ${json["code"]}` : ""
    return { ok: true, status: response.status, body: json, label: `${response.status}${code}` }
  } catch (error) {
    return { ok: false, label: describeFailure(error) }
  }
}

/** An instance to try next: one that is serving other than `last`, else any that is serving, else the next one. */
const another = (instances: ReadonlyArray<Instance>, last: Instance) => {
  const serving = instances.filter((i) => i.ready && i !== last)
  if (serving.length > 0) return serving[randomInt(serving.length)]!
  if (last.ready) return last
  return instances[(instances.indexOf(last) + 1) % instances.length]!
}

/** Setup calls: retried on any instance until answered with a success. */
const setupCall = async (
  instances: ReadonlyArray<Instance>,
  method: "GET" | "POST",
  path: string,
  token?: string,
  body?: unknown
) => {
  let target = instances[0]!
  const started = Date.now()
  for (;;) {
    const answer = await call(target, method, path, { token, body })
    if (answer.ok && answer.status < 300) return answer.body
    if (answer.ok && answer.status < 500 && answer.status !== 409 && answer.status !== 429) {
      throw new Error(`${method} ${path} answered ${answer.label}`)
    }
    if (Date.now() - started > GIVE_UP_MS) {
      throw new Error(`${method} ${path}: still ${answer.label} after ${GIVE_UP_MS / 1000} s`)
    }
    target = another(instances, target)
    await sleep(100)
  }
}

// ---------------------------------------------------------------------------------------------
// Clients

interface KeyRecord {
  readonly key: string
  readonly firstAt: number
  attempts: number
  readonly statuses: Array<string>
  /** Each attempt: the instance, what it answered, and when it ended (ms after the first attempt). */
  readonly trace: Array<string>
  /** `served`: a 202; `reference conflict`: the document exists but the key did not replay it. */
  outcome: "pending" | "served" | "refused" | "reference conflict" | "given up"
  documentId?: string
  waitMs?: number
  /** From the end of the last failed attempt to the 202: the retry that was served, alone. */
  lastRetryMs?: number
  lastFailureAt?: number
  /** Served with a document an earlier attempt created (the answer of a request that was cut off). */
  replayed: boolean
}

const keys: Array<KeyRecord> = []
const statuses = new Counter()
let issuing = true

const documentBody = (key: string) =>
  JSON.stringify({
    type: "service_invoice",
    ...(WITH_REFERENCE ? { reference: key } : { notes: key }),
    taker: { tax_id: "52998224725", name: "Maria Tomadora" },
    service: { code: "010101", nbs_code: "115013000", description: "Consultoria", municipality_code: "3550308" },
    amounts: { services: 150000, iss_rate: "2.00" }
  })

/** One attempt; true when the key is done (served or refused for good). */
const attempt = async (instance: Instance, token: string, record: KeyRecord) => {
  const started = Date.now()
  record.attempts++
  const answer = await call(instance, "POST", "/v1/documents", {
    token,
    body: documentBody(record.key),
    headers: { "idempotency-key": record.key }
  })
  record.statuses.push(answer.label)
  record.trace.push(`${instance.name} ${answer.label} at ${Date.now() - record.firstAt} ms`)
  statuses.add(answer.label)
  if (!answer.ok) return false
  if (answer.status === 202) {
    record.outcome = "served"
    record.documentId = String(answer.body["id"])
    record.waitMs = Date.now() - record.firstAt
    if (record.lastFailureAt !== undefined) record.lastRetryMs = Date.now() - record.lastFailureAt
    record.replayed = Date.parse(String(answer.body["created_at"])) < started
    return true
  }
  if (answer.label === "409 conflict") {
    record.outcome = "reference conflict"
    return true
  }
  // 5xx, 409 idempotency_conflict and 429 are worth a retry; any other refusal is final.
  if (answer.status >= 500 || answer.status === 409 || answer.status === 429) return false
  record.outcome = "refused"
  return true
}

const client = async (instances: ReadonlyArray<Instance>, token: string, prefix: string, index: number) => {
  for (let n = 0; issuing && keys.length < DOCUMENTS; n++) {
    const record: KeyRecord = {
      key: `${prefix}-c${index}-${n}`,
      firstAt: Date.now(),
      attempts: 0,
      statuses: [],
      trace: [],
      outcome: "pending",
      replayed: false
    }
    keys.push(record)
    let target = instances[(index + n) % instances.length]!
    if (!target.ready) target = another(instances, target)
    for (let failed = 0; !(await attempt(target, token, record)); failed++) {
      record.lastFailureAt = Date.now()
      if (Date.now() - record.firstAt > GIVE_UP_MS) {
        record.outcome = "given up"
        break
      }
      target = another(instances, target)
      // A short backoff with jitter: 50 ms, doubling to at most 1 s.
      await sleep(Math.min(1000, 50 * 2 ** Math.min(failed, 5)) * (0.5 + Math.random()))
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The killer and the revocation checker

const killer = async (instances: ReadonlyArray<Instance>, envOf: (instance: Instance) => Record<string, string>) => {
  while (issuing) {
    await sleep(KILL_INTERVAL_MS)
    if (!issuing) return
    const serving = instances.filter((i) => i.ready)
    if (serving.length < 2) {
      killsSkipped++
      continue
    }
    const victim = serving[randomInt(serving.length)]!
    await crash(victim, envOf(victim))
  }
}

interface RevocationObservation {
  readonly instance: string
  /** The instance that had accepted the key before it was revoked (so a cache there would show). */
  readonly usedBefore: boolean
  readonly label: string
  /** From the revocation's answer to this instance's first answer. */
  readonly afterMs: number
  /** Not serving at the revocation, or killed before it answered: its first answer came after a restart. */
  readonly afterRestart: boolean
}
const revocations: Array<RevocationObservation> = []
let revocationChecks = 0

/** The first answer of `instance` to a request with the revoked key: a refused connection or a 503 does not count. */
const firstAnswer = async (instance: Instance, token: string, usedBefore: boolean, revokedAt: number) => {
  const generation = instance.generation
  const notServing = !instance.ready
  for (;;) {
    const answer = await call(instance, "GET", "/v1/documents?limit=1", { token })
    const answered = answer.ok && answer.status !== 503
    if (answered || Date.now() - revokedAt > START_MS) {
      revocations.push({
        instance: instance.name,
        usedBefore,
        label: answered ? answer.label : `never answered (${answer.label})`,
        afterMs: Date.now() - revokedAt,
        afterRestart: notServing || instance.generation !== generation
      })
      return
    }
    await sleep(100)
  }
}

const revocationChecker = async (instances: ReadonlyArray<Instance>, tenantId: string, session: string) => {
  const pending: Array<Promise<void>> = []
  for (let n = 0; issuing; n++) {
    await sleep(REVOCATION_INTERVAL_MS)
    // Two instances serving (A uses the key, B revokes it); the killer leaves that window often but briefly.
    let serving = instances.filter((i) => i.ready)
    while (issuing && serving.length < 2) {
      await sleep(50)
      serving = instances.filter((i) => i.ready)
    }
    if (!issuing) break
    try {
      const created = await setupCall(instances, "POST", `/v1/tenants/${tenantId}/api-keys`, session, {
        name: `revocation-${n}`,
        environment: "test",
        scopes: ["documents:read"]
      })
      const token = String(created["token"])
      // Used once on A, so A has seen it valid.
      let user = serving[randomInt(serving.length)]!
      for (;;) {
        const used = await call(user, "GET", "/v1/documents?limit=1", { token })
        if (used.ok && used.status === 200) break
        if (used.ok && used.status !== 503) throw new Error(`the fresh key answered ${used.label} on ${user.name}`)
        user = another(instances, user)
        await sleep(100)
      }
      // Revoked through B, any instance but A.
      let revoker = another(instances, user)
      for (;;) {
        const path = `/v1/tenants/${tenantId}/api-keys/${(created["api_key"] as { id: string }).id}/revoke`
        const revoked = await call(revoker, "POST", path, { token: session })
        if (revoked.ok && revoked.status === 200) break
        if (revoked.ok && revoked.status !== 503) throw new Error(`revoke answered ${revoked.label} on ${revoker.name}`)
        revoker = another(instances, revoker)
        await sleep(100)
      }
      revocationChecks++
      const revokedAt = Date.now()
      // Straight away, on every other instance: A (which knew the key valid) and C (which never saw it).
      pending.push(...instances.filter((i) => i !== revoker).map((i) => firstAnswer(i, token, i === user, revokedAt)))
    } catch (error) {
      failures.push(`revocation check ${n}: ${String(error)}`)
    }
  }
  await Promise.all(pending)
}

// ---------------------------------------------------------------------------------------------
// The run

const main = async () => {
  const runId = randomBytes(4).toString("hex")
  const database = `etd_crash_${runId}`
  const databaseUrl = new URL(POSTGRES_URL)
  databaseUrl.pathname = `/${database}`
  console.log(
    `crash test ${runId}: machine ${cpus().length} × ${
      cpus()[0]?.model ?? "cpu"
    }, node ${process.version}; ${INSTANCE_NAMES.length} instances, ` +
      `${CLIENTS} clients, up to ${DOCUMENTS} documents in ${DURATION_MS / 1000} s, SIGKILL every ${
        KILL_INTERVAL_MS / 1000
      } s ` +
      `(never the last instance serving), a revocation check every ${REVOCATION_INTERVAL_MS / 1000} s, WORKER_LEASE ` +
      `${WORKER_LEASE_MS / 1000} s, reference ${WITH_REFERENCE ? "= the Idempotency-Key" : "not sent"}`
  )

  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  const dataDirs: Array<string> = []
  const instances: Array<Instance> = []
  try {
    const generous = "100000"
    const env = {
      DATABASE_URL: databaseUrl.toString(),
      LOG_LEVEL: "Warning",
      PASSWORD_HASH_COST: "1024",
      WORKER_LEASE: `${WORKER_LEASE_MS} millis`,
      // Limits far above the load (each instance counts alone here): a 429 would blur the figures.
      RATE_LIMIT_PER_SECOND: generous,
      RATE_LIMIT_BURST: generous,
      RATE_LIMIT_TENANT_PER_SECOND: generous,
      RATE_LIMIT_TENANT_BURST: generous,
      RATE_LIMIT_SESSION_PER_SECOND: generous,
      RATE_LIMIT_SESSION_BURST: generous,
      // Every instance must open what another sealed and verify the same webhooks.
      CREDENTIALS_MASTER_KEY: `crash:${randomBytes(32).toString("base64")}`,
      PAYMENT_PROVIDER_WEBHOOK_SECRET: `whsec_${randomBytes(32).toString("base64")}`
    }
    for (const name of INSTANCE_NAMES) {
      const port = await freePort()
      const dataDir = mkdtempSync(join(tmpdir(), `etd-crash-${name}-`))
      dataDirs.push(dataDir)
      instances.push({
        name,
        port,
        base: `http://127.0.0.1:${port}`,
        ready: false,
        generation: 0,
        killedOnPurpose: false
      })
    }
    // One first, so the migrations run once; then the others.
    const envOf = (instance: Instance) => ({ ...env, DATA_DIR: dataDirs[instances.indexOf(instance)]! })
    const startedAt = Date.now()
    start(instances[0]!, envOf(instances[0]!))
    await waitAllReady(instances.slice(0, 1), START_MS)
    for (const instance of instances.slice(1)) start(instance, envOf(instance))
    await waitAllReady(instances, START_MS)
    console.log(
      `instances ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s: ${
        instances.map((i) => `${i.name} :${i.port}`).join(", ")
      }`
    )

    const email = `crash-${runId}@example.com`
    const password = "correct horse battery staple"
    const registration = await setupCall(instances, "POST", "/v1/auth/register", undefined, {
      email,
      password,
      name: "Crash",
      tenant: { name: "Crash Ltda", tax_id: cnpj() }
    })
    const tenantId = (registration["tenant"] as { id: string }).id
    const session = String(
      (await setupCall(instances, "POST", "/v1/auth/login", undefined, { email, password }))["token"]
    )
    await declareRegistration(instances[0]!.base, tenantId, session)
    const token = String(
      (await setupCall(instances, "POST", `/v1/tenants/${tenantId}/api-keys`, session, {
        name: "crash",
        environment: "test",
        scopes: ["documents:write", "documents:read"]
      }))["token"]
    )

    const loadStarted = Date.now()
    const progress = setInterval(() => {
      const served = keys.filter((k) => k.outcome === "served").length
      console.log(
        `  ${
          Math.round((Date.now() - loadStarted) / 1000)
        } s: ${served} served of ${keys.length} keys, ${kills} kills, ` +
          `serving ${instances.map((i) => (i.ready ? i.name : "-")).join("")}, ${revocationChecks} revocations`
      )
    }, 5_000)
    const clients = Array.from({ length: CLIENTS }, (_, i) => client(instances, token, `crash-${runId}`, i))
    const chaos = [killer(instances, envOf), revocationChecker(instances, tenantId, session)]
    await Promise.race([sleep(DURATION_MS), Promise.all(clients)])
    issuing = false
    const loadSeconds = (Date.now() - loadStarted) / 1000
    await Promise.all(clients)
    const loadEnded = Date.now()
    await Promise.all(chaos)
    clearInterval(progress)
    await waitAllReady(instances, START_MS)

    // Every accepted document must reach a final state: the jobs a killed instance held come back after WORKER_LEASE.
    const db = new pg.Client({ connectionString: databaseUrl.toString() })
    await db.connect()
    try {
      let unfinished = 0
      do {
        const { rows } = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM documents WHERE tenant_id = $1 AND status IN ('queued', 'submitting')`,
          [tenantId]
        )
        unfinished = rows[0]!.n
        if (unfinished > 0) await sleep(250)
      } while (unfinished > 0 && Date.now() - loadEnded < DRAIN_MS)
      const drainMs = Date.now() - loadEnded
      const { rows: documents } = await db.query<{ key: string; id: string; status: string; finalMs: number }>(
        `SELECT ${WITH_REFERENCE ? "reference" : "notes"} AS key, id, status,
                (extract(epoch FROM updated_at - created_at) * 1000)::int AS "finalMs"
         FROM documents WHERE tenant_id = $1 AND environment = 'test'`,
        [tenantId]
      )
      const { rows: stored } = await db.query<
        { key: string; status: number | null; id: string | null; claimedAt: Date }
      >(
        `SELECT key, response_status AS status, response_body->>'id' AS id, created_at AS "claimedAt"
         FROM idempotency_keys WHERE tenant_id = $1`,
        [tenantId]
      )
      const { rows: authority } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM authority_sim_records WHERE system = 'homologation' AND status = 'authorized'`
      )
      const { rows: pendingJobs } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM document_jobs WHERE tenant_id = $1 AND state = 'pending'`,
        [tenantId]
      )
      report({
        loadSeconds,
        drainMs,
        unfinished,
        documents,
        stored,
        authorized: authority[0]!.n,
        pendingJobs: pendingJobs[0]!.n
      })
    } finally {
      await db.end()
    }
  } finally {
    stopping = true
    await Promise.all(instances.map(async (instance) => {
      const child = instance.child
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
      const exited = once(child, "exit")
      child.kill("SIGKILL")
      await exited
    }))
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
    await admin.end()
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
  }
}

/** p50, p99 and the longest of some durations (ms). */
const spread = (values: ReadonlyArray<number>) => ({
  p50: percentile(values, 50),
  p99: percentile(values, 99),
  max: values.length === 0 ? NaN : Math.max(...values)
})
const describe = (values: ReadonlyArray<number>) => {
  const { p50, p99, max } = spread(values)
  return `p50 ${p50} ms, p99 ${p99} ms, longest ${max} ms`
}
const listed = (items: ReadonlyArray<string>) => (items.length === 0 ? "" : `: ${items.slice(0, 5).join(" ")}`)

const report = (result: {
  loadSeconds: number
  drainMs: number
  unfinished: number
  documents: ReadonlyArray<{ key: string; id: string; status: string; finalMs: number }>
  stored: ReadonlyArray<{ key: string; status: number | null; id: string | null; claimedAt: Date }>
  authorized: number
  pendingJobs: number
}) => {
  const byKey = new Map<string, Array<string>>()
  for (const document of result.documents) byKey.set(document.key, [...(byKey.get(document.key) ?? []), document.id])
  const storedByKey = new Map(result.stored.map((row) => [row.key, row]))
  const served = keys.filter((k) => k.outcome === "served")
  const duplicated = [...byKey].filter(([, ids]) => ids.length > 1).map(([key]) => key)
  const lost = served.filter((k) => !(byKey.get(k.key) ?? []).includes(k.documentId!)).map((k) => k.key)
  const storedMismatch = served.filter((k) =>
    storedByKey.get(k.key)?.status !== 202 || storedByKey.get(k.key)?.id !== k.documentId
  )
  const issued = new Set(keys.map((k) => k.key))
  const unknown = [...byKey.keys()].filter((key) => !issued.has(key))
  const notServed = new Counter()
  for (const k of keys.filter((k) => k.outcome !== "served")) notServed.add(`${k.outcome}: ${k.statuses.at(-1)}`)
  const byStatus = new Counter()
  for (const document of result.documents) byStatus.add(document.status)
  const serverErrors = [...statuses.counts]
    .filter(([label]) => /^5\d\d/.test(label) && !label.startsWith("503"))
    .reduce((sum, [, n]) => sum + n, 0)
  const hangs = statuses.counts.get("no answer (hang)") ?? 0
  const violations = revocations.filter((r) => r.label !== "401 api_key_revoked")
  const revocationLabels = new Counter()
  for (const r of revocations) revocationLabels.add(`${r.label}${r.afterRestart ? " (after a restart)" : ""}`)
  const seconds = (ms: number) => (ms / 1000).toFixed(1)

  const waits = served.map((k) => k.waitMs!)
  // Split, to tell a crash's cost (a retry, perhaps waiting out a dead claim) from a busy machine's (every request).
  const firstTry = served.filter((k) => k.attempts === 1).map((k) => k.waitMs!)
  const afterRetry = served.filter((k) => k.attempts > 1).map((k) => k.waitMs!)
  // The served retry alone, in two parts read from the key's row (`created_at`: when that request
  // claimed or took over the key): waiting out the dead instance's claim, then the work.
  const lastRetries = served.flatMap((k) => (k.lastRetryMs === undefined ? [] : [k.lastRetryMs]))
  const retriedFresh = served.filter((k) => k.lastFailureAt !== undefined && !k.replayed && storedByKey.has(k.key))
  const claimedAt = (k: KeyRecord) => storedByKey.get(k.key)!.claimedAt.getTime()
  const claimWaits = retriedFresh.map((k) => Math.max(0, claimedAt(k) - k.lastFailureAt!))
  const work = retriedFresh.map((k) => k.firstAt + k.waitMs! - claimedAt(k))
  const toFinal = result.documents.map((d) => d.finalMs)
  const revokedToAnswer = revocations.filter((r) => !r.afterRestart).map((r) => r.afterMs)

  const requests = keys.reduce((sum, k) => sum + k.attempts, 0)
  console.log(
    `\nload: ${keys.length} keys in ${
      result.loadSeconds.toFixed(1)
    } s, ${afterRetry.length} retried, ${requests} requests`
  )
  console.log(`every answer: ${statuses}`)
  console.log(
    `kills: ${kills} (${killsSkipped} rounds skipped: fewer than 2 instances serving); ` +
      `restart → ready p50 ${seconds(percentile(restartToReadyMs, 50))} s, longest ${
        seconds(Math.max(...restartToReadyMs))
      } s`
  )
  console.log(`client wait (first attempt → 202): ${describe(waits)}`)
  console.log(`  served at the first attempt (${firstTry.length}): ${describe(firstTry)}`)
  console.log(`  served after a retry (${afterRetry.length}): ${describe(afterRetry)}`)
  console.log(`  the served retry alone (last failure → 202): ${describe(lastRetries)}`)
  console.log(`    until it held the key (waiting out a dead claim): ${describe(claimWaits)}`)
  console.log(`    then to its 202: ${describe(work)}`)
  for (const k of [...served].sort((a, b) => b.waitMs! - a.waitMs!).slice(0, 3)) {
    console.log(`  ${k.key}: ${k.trace.join(" → ")}`)
  }
  console.log(`served by a replay of an earlier attempt's document: ${served.filter((k) => k.replayed).length}`)
  console.log(
    `documents: ${result.documents.length} (${byStatus}); the authority authorized ${result.authorized}; ` +
      `${result.pendingJobs} jobs pending`
  )
  console.log(
    `all documents final ${seconds(result.drainMs)} s after the last 202; acceptance → final ${describe(toFinal)} ` +
      `(a job held by a killed instance waits out WORKER_LEASE ${WORKER_LEASE_MS / 1000} s)`
  )
  console.log(
    `revocations: ${revocationChecks}, ${revocations.length} next requests on the other instances: ${revocationLabels}`
  )
  console.log(
    `  of which on the instance that had used the key: ${revocations.filter((r) => r.usedBefore).length}; ` +
      `revocation → that answer (instances not restarted meanwhile): ${describe(revokedToAnswer)}`
  )
  console.log(`service log lines: ${serviceLogs}`)
  for (const line of errorLines.slice(0, 5)) console.log(`  error line: ${line.slice(0, 600)}`)

  console.log("\nchecks:")
  check(
    duplicated.length === 0,
    `no duplicates: one document per key (${duplicated.length} keys with more${listed(duplicated)})`
  )
  check(
    lost.length === 0,
    `nothing lost: every key answered 202 has the document it was told of (${lost.length} without${listed(lost)})`
  )
  check(
    storedMismatch.length === 0,
    `every served key's stored answer is that 202 and document (${storedMismatch.length} differ)`
  )
  check(served.length === keys.length, `every key served in the end (${keys.length - served.length} not: ${notServed})`)
  check(unknown.length === 0, `no document for a key no client sent (${unknown.length})`)
  check(
    violations.length === 0,
    `every revoked key refused by the next request on each other instance ` +
      `(${violations.length} violations${listed(violations.map((v) => `${v.instance}:${v.label}`))})`
  )
  check(
    waits.length > 0 && Math.max(...waits) <= MAX_WAIT_MS,
    `no client waited over ${MAX_WAIT_MS / 1000} s for its 202, retries included (longest ${
      waits.length === 0 ? "—" : Math.max(...waits)
    } ms)`
  )
  check(serverErrors === 0, `no 5xx but 503 (${serverErrors})`)
  check(hangs === 0, `no request left without an answer for ${HANG_MS / 1000} s (${hangs})`)
  check(
    result.unfinished === 0 && byStatus.counts.get("authorized") === result.documents.length,
    `every document authorized within ${
      DRAIN_MS / 1000
    } s of the load's end (${result.unfinished} still queued or submitting)`
  )
  check(
    unexpectedExits.length === 0,
    `no instance died or stalled but by the killer (${unexpectedExits.join("; ") || "none"})`
  )

  console.log(JSON.stringify({
    instances: INSTANCE_NAMES.length,
    clients: CLIENTS,
    kill_interval_s: KILL_INTERVAL_MS / 1000,
    load_s: Number(result.loadSeconds.toFixed(1)),
    kills,
    keys: keys.length,
    documents: result.documents.length,
    duplicates: duplicated.length,
    lost: lost.length,
    client_wait_ms: spread(waits),
    retried_keys: afterRetry.length,
    retried_wait_ms: spread(afterRetry),
    claim_wait_ms: spread(claimWaits),
    statuses: Object.fromEntries(statuses.counts),
    revocations: revocationChecks,
    revocation_next_requests: revocations.length,
    revocation_violations: violations.length,
    drain_s: Number(seconds(result.drainMs)),
    acceptance_to_final_ms: spread(toFinal)
  }))
}

process.once("SIGINT", () => {
  // The finally block kills the instances and drops the database; a second Ctrl-C ends at once.
  issuing = false
  failures.push("interrupted")
})

await main().then(
  () => {
    console.log(failures.length === 0 ? "\nPASS" : `\nFAIL:\n${failures.map((f) => `  ${f}`).join("\n")}`)
    process.exit(failures.length === 0 ? 0 : 1)
  },
  (error: unknown) => {
    console.error(error)
    process.exit(1)
  }
)
