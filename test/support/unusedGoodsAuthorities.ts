/** For tests of service invoices only: goods authorities that must never be called (a call is a defect). */
import { Effect, Layer } from "effect"
import { GoodsAuthorities, type GoodsAuthority } from "../../src/authority/GoodsAuthority.js"

const unused = (system: GoodsAuthority["system"]): GoodsAuthority => {
  const never = () => Effect.die(new Error("this test issues no goods invoice"))
  return {
    system,
    submissionIdOf: () => ({ prefix: "UNUSED", width: 9 }),
    requirementsFor: never,
    submit: never,
    issueOffline: never,
    lookup: never,
    cancel: never,
    correct: never,
    voidNumbers: never,
    status: never,
    danfe: never
  }
}

export const unusedGoodsAuthorities = Layer.succeed(
  GoodsAuthorities,
  GoodsAuthorities.fromEach({ live: unused("production"), test: unused("homologation") })
)
