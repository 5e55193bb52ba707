/**
 * Opens uploaded PKCS#12 bundles off the event loop, with bounded work (SPEC §8: "opening a file
 * costs bounded CPU time"). Two bounds, because neither suffices alone:
 * - the derivation budget (`Pkcs12Limits.ts`), read from the clear ASN.1 before any work, refuses
 *   the files whose cost is visible at once with a precise answer;
 * - a time limit on the worker thread (`Pkcs12Thread.ts`) covers whatever stays hidden (counts
 *   inside encrypted layers, parser paths nobody foresaw): past it the thread is terminated.
 * A small pool keeps threads warm between uploads; a thread that timed out, crashed or was
 * abandoned by an interrupted request is thrown away rather than reused. Who gets a thread, and how
 * long anyone may wait for one, is `OpeningTurns.ts`.
 */
import { Context, Duration, Effect, Layer, Option, Redacted } from "effect"
import { Worker } from "node:worker_threads"
import { AppConfig } from "../Config.js"
import type { ParsedCertificate } from "./CertificateFields.js"
import { makeOpeningTurns, type OpenerBusy, type OpeningLoad } from "./OpeningTurns.js"
import { type Pkcs12Error, pkcs12Error, type Pkcs12ErrorReason } from "./Pkcs12Error.js"
import { iterationCounts, withinWorkBudget } from "./Pkcs12Limits.js"

export interface OpenRequest {
  readonly pfx: Uint8Array
  readonly password: string
}

export type OpenReply =
  | {
    readonly _tag: "Opened"
    readonly certificate: Omit<ParsedCertificate, "privateKeyPem"> & { privateKeyPem: string }
  }
  | { readonly _tag: "Refused"; readonly reason: Pkcs12ErrorReason }
  | { readonly _tag: "Crashed"; readonly where: string }

export interface Pkcs12OpenerOptions {
  /** Threads working at once; more uploads than this wait their turn. */
  readonly threads: number
  /** Past this, the thread is terminated and the file refused as too costly. */
  readonly timeLimit: Duration.Input
  /** Openings that may wait for a thread; one more gets `OpenerBusy` at once. */
  readonly queue: number
  /** The longest an opening waits for a thread before `OpenerBusy`. */
  readonly maxWait: Duration.Input
}

/**
 * A genuine A1 bundle (2 048 to 10 000 iterations) opens in well under a second; a file at the edge
 * of the derivation budget takes forge about four seconds on an idle core, so the limit leaves room
 * for a busy machine. The same figures are `AppConfig.pkcs12Pool`'s defaults.
 */
export const defaultOpenerOptions: Pkcs12OpenerOptions = {
  threads: 2,
  timeLimit: Duration.seconds(10),
  queue: 8,
  maxWait: Duration.seconds(5)
}

/** Under tsx (development, tests) the thread needs the same loader to read TypeScript. */
const threadUrl = new URL(`./Pkcs12Thread${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url)
const threadExecArgv = import.meta.url.endsWith(".ts") ? ["--import", import.meta.resolve("tsx")] : []

const make = (options: Pkcs12OpenerOptions) =>
  Effect.gen(function*() {
    const idle: Array<Worker> = []
    const live = new Set<Worker>()
    const turns = yield* makeOpeningTurns(options)

    /** A new thread, once it has loaded its code; failing to start at all is this service's defect. */
    const spawn = Effect.callback<Worker>((resume) => {
      const worker = new Worker(threadUrl, {
        execArgv: threadExecArgv,
        // A hostile file may also try memory; 64 KiB of input never needs more than this.
        resourceLimits: { maxOldGenerationSizeMb: 128 }
      })
      // Idle threads must not keep the process alive.
      worker.unref()
      live.add(worker)
      worker.once("exit", () => live.delete(worker))
      const onReady = () => settle(Effect.succeed(worker))
      const onError = (error: unknown) => settle(Effect.die(error))
      const onExit = () => settle(Effect.die(new Error("the PKCS#12 thread exited while starting")))
      const settle = (outcome: Effect.Effect<Worker>) => {
        worker.off("message", onReady).off("error", onError).off("exit", onExit)
        resume(outcome)
      }
      worker.once("message", onReady).once("error", onError).once("exit", onExit)
      return Effect.sync(() => {
        worker.off("message", onReady).off("error", onError).off("exit", onExit)
        discard(worker)
      })
    })

    const discard = (worker: Worker) => {
      live.delete(worker)
      void worker.terminate()
    }

    yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all([...live].map((worker) => worker.terminate()))))
    // One thread warm from the start, so the first upload does not wait for a thread to load.
    yield* Effect.forkScoped(Effect.flatMap(spawn, (worker) => Effect.sync(() => idle.push(worker))))

    /** One request on one thread; a thread that dies or errors answers `Crashed`. */
    const ask = (worker: Worker, request: OpenRequest) =>
      Effect.callback<OpenReply>((resume) => {
        const onMessage = (reply: OpenReply) => done(reply)
        const onError = (error: unknown) =>
          done({ _tag: "Crashed", where: error instanceof Error ? error.name : "error" })
        const onExit = () => done({ _tag: "Crashed", where: "thread exited" })
        const done = (reply: OpenReply) => {
          worker.off("message", onMessage).off("error", onError).off("exit", onExit)
          resume(Effect.succeed(reply))
        }
        worker.on("message", onMessage).on("error", onError).on("exit", onExit)
        worker.postMessage(request)
        return Effect.sync(() => worker.off("message", onMessage).off("error", onError).off("exit", onExit))
      })

    const onThread = (request: OpenRequest) =>
      Effect.gen(function*() {
        const worker = idle.pop() ?? (yield* spawn)
        let reusable = false
        return yield* ask(worker, request).pipe(
          Effect.timeoutOption(options.timeLimit),
          Effect.tap((reply) =>
            Effect.sync(() => {
              reusable = Option.isSome(reply) && reply.value._tag !== "Crashed"
            })
          ),
          Effect.ensuring(Effect.sync(() => (reusable ? idle.push(worker) : discard(worker))))
        )
      })

    const open = (
      pfx: Uint8Array,
      password: Redacted.Redacted<string>,
      claimants: ReadonlyArray<string> = []
    ): Effect.Effect<ParsedCertificate, Pkcs12Error | OpenerBusy> =>
      Effect.gen(function*() {
        // The budget costs no thread: a file refused by it never waits in the queue.
        const counts = iterationCounts(pfx)
        if (counts === null) return yield* pkcs12Error("malformed")
        if (!withinWorkBudget(counts)) return yield* pkcs12Error("too_costly")
        const reply = yield* turns.withTurn(claimants, onThread({ pfx, password: Redacted.value(password) }))
        if (Option.isNone(reply)) return yield* pkcs12Error("too_costly")
        switch (reply.value._tag) {
          case "Opened": {
            const { privateKeyPem, ...certificate } = reply.value.certificate
            return { ...certificate, privateKeyPem: Redacted.make(privateKeyPem) }
          }
          case "Refused":
            return yield* pkcs12Error(reply.value.reason)
          case "Crashed":
            // A parser bug, not the uploader's fault, but the file is still one we cannot read.
            yield* Effect.logWarning("the PKCS#12 parser failed unexpectedly", reply.value.where)
            return yield* pkcs12Error("malformed")
        }
      }).pipe(Effect.withSpan("Pkcs12Opener.open"))

    return { open, load: turns.load } as const
  })

export class Pkcs12Opener extends Context.Service<Pkcs12Opener, {
  /**
   * Opens a bundle on a thread of the pool. `claimants` (a tenant, a user) may each have one
   * opening running or waiting at a time; a second fails with `OpenerBusy`, as does a full queue
   * or a wait past its bound.
   */
  readonly open: (
    pfx: Uint8Array,
    password: Redacted.Redacted<string>,
    claimants?: ReadonlyArray<string>
  ) => Effect.Effect<ParsedCertificate, Pkcs12Error | OpenerBusy>
  /** Openings on a thread and waiting for one, now. */
  readonly load: Effect.Effect<OpeningLoad>
}>()("etd/Pkcs12Opener") {
  static readonly layerWith = (options: Pkcs12OpenerOptions) => Layer.effect(this, make(options))
  static readonly layer = this.layerWith(defaultOpenerOptions)
  /** The pool as configured (`CREDENTIALS_OPEN_*`). */
  static readonly layerConfig = Layer.effect(
    this,
    Effect.gen(function*() {
      const { pkcs12Pool } = yield* AppConfig
      return yield* make(pkcs12Pool)
    })
  )
}
