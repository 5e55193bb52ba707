/**
 * Password hashing with scrypt (memory-hard). node:crypto runs scrypt on the libuv thread pool,
 * so hashing never blocks the event loop. The parameters are stored with each hash, so the cost
 * can be raised later without invalidating existing passwords.
 */
import { Context, Effect, Layer, Redacted } from "effect"
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import { AppConfig } from "../Config.js"
import { untraced } from "../telemetry/TraceContext.js"

const KEY_LENGTH = 32
const BLOCK_SIZE = 8
const PARALLELISM = 1

const derive = (password: string, salt: Buffer, cost: number, blockSize: number, parallelism: number) =>
  Effect.callback<Buffer>((resume) => {
    scrypt(
      password.normalize("NFKC"),
      salt,
      KEY_LENGTH,
      { N: cost, r: blockSize, p: parallelism, maxmem: 256 * cost * blockSize + 1024 * 1024 },
      (error, key) => resume(error ? Effect.die(error) : Effect.succeed(key))
    )
  })

export class Passwords extends Context.Service<Passwords>()("etd/Passwords", {
  make: Effect.gen(function*() {
    const { passwordHashCost } = yield* AppConfig

    const hash = Effect.fn("Passwords.hash")(function*(password: Redacted.Redacted<string>) {
      const salt = randomBytes(16)
      const key = yield* derive(Redacted.value(password), salt, passwordHashCost, BLOCK_SIZE, PARALLELISM)
      return `scrypt$${passwordHashCost}$${BLOCK_SIZE}$${PARALLELISM}$${salt.toString("base64")}$${
        key.toString("base64")
      }`
    })

    const verify = Effect.fn("Passwords.verify")(function*(password: Redacted.Redacted<string>, stored: string) {
      const [scheme, cost, blockSize, parallelism, salt, expected] = stored.split("$")
      if (scheme !== "scrypt" || !cost || !blockSize || !parallelism || !salt || !expected) return false
      const key = yield* derive(
        Redacted.value(password),
        Buffer.from(salt, "base64"),
        Number(cost),
        Number(blockSize),
        Number(parallelism)
      )
      const wanted = Buffer.from(expected, "base64")
      return wanted.length === key.length && timingSafeEqual(wanted, key)
    })

    // Verifying against a throwaway hash makes an unknown email cost as much as a wrong password.
    // Made at start-up, outside any request: untraced (an instance's start makes no spans).
    const decoy = yield* untraced(hash(Redacted.make(randomBytes(16).toString("hex"))))
    const burn = (password: Redacted.Redacted<string>) => Effect.asVoid(verify(password, decoy))

    return { hash, verify, burn } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
