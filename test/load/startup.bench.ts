/**
 * Start-up benchmark (issue 11): how long `node dist/main.js` (what `npm start` runs) takes from
 * the process's spawn to `GET /healthz` answering 200, on the embedded database, first on a fresh
 * DATA_DIR (PGlite creates its cluster, then every migration runs) and then again on the one it
 * left (the usual restart); and the resident memory once it serves. BENCH_STARTS starts of each
 * kind (default 5); prints each run and the median.
 *
 * The floor is a `node` process that only answers /healthz (a bare `node:http` server): spawning
 * Node and opening a port, which no start of the service can beat. Each round makes the three
 * starts, interleaved: the fresh start always before the restart (it makes the DATA_DIR the
 * restart opens), the floor's place rotating per round, so drift on the machine lands on all three.
 *
 *   npm run bench:startup                  # builds dist/ first
 *   BENCH_STARTS=10 npm run bench:startup
 */
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, rmSync } from "node:fs"
import { cpus, tmpdir, totalmem } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { root, rssMiB, serviceStart } from "./children.js"
import { freePort, percentile } from "./loadgen.js"

const STARTS = Number(process.env["BENCH_STARTS"] ?? 5)

const FLOOR_SERVER = `require("node:http").createServer((_, response) => response.end("ok")).listen(process.env.PORT)`

/**
 * Spawns the service on `dataDir` (the floor's server when undefined) and returns when /healthz
 * first answers 200 (polled every 10 ms).
 */
const start = async (dataDir: string | undefined): Promise<{ ms: number; rss: number; child: ChildProcess }> => {
  const port = await freePort()
  const spawnedAt = performance.now()
  const args = dataDir === undefined ? ["-e", FLOOR_SERVER] : [...serviceStart.flags, "dist/main.js"]
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      PATH: process.env["PATH"] ?? "",
      PORT: String(port),
      ...(dataDir === undefined ? {} : { ...serviceStart.env, DATA_DIR: dataDir })
    },
    stdio: "ignore"
  })
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dist/main.js exited with ${child.exitCode}`)
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)
    if (ok) return { ms: Math.round(performance.now() - spawnedAt), rss: Math.round(rssMiB(child.pid)), child }
    if (performance.now() - spawnedAt > 60_000) throw new Error("not healthy after 60 s")
    await sleep(10)
  }
}

const stop = async (child: ChildProcess) => {
  const exited = once(child, "exit")
  child.kill("SIGTERM")
  await exited
}

console.log(
  `startup bench: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${
    Math.round(totalmem() / 2 ** 30)
  } GiB, node ${process.version}, ` +
    `embedded database, ${STARTS} starts of each kind`
)
const fresh: Array<number> = []
const restart: Array<number> = []
const floor: Array<number> = []
const rss: Array<number> = []
const startFloor = async () => {
  const bare = await start(undefined)
  floor.push(bare.ms)
  await stop(bare.child)
}
for (let i = 0; i < STARTS; i++) {
  const dataDir = mkdtempSync(join(tmpdir(), "etd-startup-"))
  try {
    if (i % 3 === 0) await startFloor()
    const first = await start(dataDir)
    fresh.push(first.ms)
    await stop(first.child)
    if (i % 3 === 1) await startFloor()
    const again = await start(dataDir)
    restart.push(again.ms)
    // Once it serves and its start-up work has settled.
    await sleep(1000)
    rss.push(Math.round(rssMiB(again.child.pid)))
    await stop(again.child)
    if (i % 3 === 2) await startFloor()
    console.log(JSON.stringify({
      run: i + 1,
      floor_ms: floor.at(-1),
      fresh_data_dir_ms: first.ms,
      existing_data_dir_ms: again.ms,
      rss_mib: rss.at(-1)
    }))
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}
console.log(JSON.stringify({
  summary: true,
  floor_ms: { p50: percentile(floor, 50), max: Math.max(...floor) },
  fresh_data_dir_ms: { p50: percentile(fresh, 50), max: Math.max(...fresh) },
  existing_data_dir_ms: { p50: percentile(restart, 50), max: Math.max(...restart) },
  rss_mib_when_serving: { p50: percentile(rss, 50), max: Math.max(...rss) }
}))
