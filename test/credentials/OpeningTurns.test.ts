/**
 * The PKCS#12 pool's turns (SPEC §11, "a bounded wait for the opening pool, never a long hang"):
 * a bounded queue, a bounded wait, one opening per tenant or user at a time, first come first
 * served. Openings here are gates the test opens, and waits run on the TestClock, so every step is
 * an outcome, never a race against a real clock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { makeOpeningTurns, OpenerBusy, type OpeningLoad } from "../../src/credentials/OpeningTurns.js"

type Turns = Effect.Success<ReturnType<typeof makeOpeningTurns>>

/** Lets forked fibers run until the pool's load is `expected`. */
const until = (turns: Turns, expected: OpeningLoad) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1000; i++) {
      if (JSON.stringify(yield* turns.load) === JSON.stringify(expected)) return
      yield* Effect.yieldNow
    }
    expect(yield* turns.load).toEqual(expected)
  })

/** An opening that holds its thread until the test opens its gate. */
const held = (turns: Turns, claimants: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const gate = yield* Deferred.make<void>()
    const fiber = yield* Effect.forkChild(turns.withTurn(claimants, Deferred.await(gate).pipe(Effect.as(claimants))))
    return { release: Deferred.succeed(gate, undefined), fiber }
  })

const refusal = <A, E, R>(effect: Effect.Effect<A, E | OpenerBusy, R>) =>
  Effect.map(Effect.flip(effect), (error) => {
    expect(error).toBeInstanceOf(OpenerBusy)
    return error as OpenerBusy
  })

describe("OpeningTurns", () => {
  it.effect("one opening per thread; the next waits; one more than the queue holds is refused at once", () =>
    Effect.gen(function*() {
      const turns = yield* makeOpeningTurns({ threads: 1, queue: 1, maxWait: Duration.seconds(5) })
      const first = yield* held(turns, ["tenant:a"])
      yield* until(turns, { running: 1, waiting: 0 })
      const second = yield* held(turns, ["tenant:b"])
      yield* until(turns, { running: 1, waiting: 1 })

      const third = yield* refusal(turns.withTurn(["tenant:c"], Effect.succeed("opened")))
      expect(third.reason).toBe("queue_full")
      expect(third.retryAfterSeconds).toBe(5)

      yield* first.release
      expect(yield* Fiber.join(first.fiber)).toEqual(["tenant:a"])
      yield* until(turns, { running: 1, waiting: 0 })
      yield* second.release
      expect(yield* Fiber.join(second.fiber)).toEqual(["tenant:b"])
      // The refused one cost nothing and left nothing behind.
      expect(yield* turns.withTurn(["tenant:c"], Effect.succeed("opened"))).toBe("opened")
      expect(yield* turns.load).toEqual({ running: 0, waiting: 0 })
    }))

  it.effect("a wait past its bound is refused and leaves the queue", () =>
    Effect.gen(function*() {
      const turns = yield* makeOpeningTurns({ threads: 1, queue: 4, maxWait: Duration.seconds(3) })
      const first = yield* held(turns, ["tenant:a"])
      yield* until(turns, { running: 1, waiting: 0 })
      const waiting = yield* Effect.forkChild(refusal(turns.withTurn(["tenant:b"], Effect.succeed("opened"))))
      yield* until(turns, { running: 1, waiting: 1 })
      yield* TestClock.adjust(Duration.millis(2999))
      expect(yield* turns.load).toEqual({ running: 1, waiting: 1 })
      yield* TestClock.adjust(Duration.millis(1))
      const refused = yield* Fiber.join(waiting)
      expect(refused.reason).toBe("wait_expired")
      expect(refused.retryAfterSeconds).toBe(3)
      expect(yield* turns.load).toEqual({ running: 1, waiting: 0 })
      yield* first.release
      yield* Fiber.join(first.fiber)
      // The thread it never got was not lost either.
      expect(yield* turns.withTurn(["tenant:b"], Effect.succeed("opened"))).toBe("opened")
    }))

  it.effect("a tenant or a user has one opening at a time; others still queue", () =>
    Effect.gen(function*() {
      const turns = yield* makeOpeningTurns({ threads: 1, queue: 4, maxWait: Duration.seconds(5) })
      const first = yield* held(turns, ["tenant:a", "user:1"])
      yield* until(turns, { running: 1, waiting: 0 })

      const sameTenant = yield* refusal(turns.withTurn(["tenant:a", "user:2"], Effect.succeed("opened")))
      expect(sameTenant).toMatchObject({ reason: "already_opening", retryAfterSeconds: 1 })
      const sameUser = yield* refusal(turns.withTurn(["tenant:b", "user:1"], Effect.succeed("opened")))
      expect(sameUser.reason).toBe("already_opening")
      // Refused at once, though the queue had room: one tenant cannot fill it.
      expect(yield* turns.load).toEqual({ running: 1, waiting: 0 })

      const other = yield* held(turns, ["tenant:b", "user:2"])
      yield* until(turns, { running: 1, waiting: 1 })
      // Waiting counts as having an opening too.
      expect((yield* refusal(turns.withTurn(["tenant:b"], Effect.void))).reason).toBe("already_opening")

      yield* first.release
      yield* Fiber.join(first.fiber)
      // Done: the tenant and the user may open again.
      yield* until(turns, { running: 1, waiting: 0 })
      const again = yield* Effect.forkChild(turns.withTurn(["tenant:a", "user:1"], Effect.succeed("opened")))
      yield* other.release
      expect(yield* Fiber.join(again)).toBe("opened")
    }))

  it.effect("a failed or interrupted opening frees its claimants and its place", () =>
    Effect.gen(function*() {
      const turns = yield* makeOpeningTurns({ threads: 1, queue: 1, maxWait: Duration.seconds(5) })
      expect(yield* Effect.flip(turns.withTurn(["tenant:a"], Effect.fail("unreadable")))).toBe("unreadable")
      expect(yield* turns.withTurn(["tenant:a"], Effect.succeed("opened"))).toBe("opened")

      const first = yield* held(turns, ["tenant:a"])
      yield* until(turns, { running: 1, waiting: 0 })
      const waiter = yield* held(turns, ["tenant:b"])
      yield* until(turns, { running: 1, waiting: 1 })
      // The client of the waiting upload went away.
      yield* Fiber.interrupt(waiter.fiber)
      expect(yield* turns.load).toEqual({ running: 1, waiting: 0 })
      const next = yield* held(turns, ["tenant:b"])
      yield* until(turns, { running: 1, waiting: 1 })
      // And the running one's client too: its thread goes to the next in line.
      yield* Fiber.interrupt(first.fiber)
      yield* until(turns, { running: 1, waiting: 0 })
      yield* next.release
      expect(yield* Fiber.join(next.fiber)).toEqual(["tenant:b"])
      expect(yield* turns.withTurn(["tenant:a"], Effect.succeed("opened"))).toBe("opened")
    }))

  it.effect("waiters get the thread in the order they came", () =>
    Effect.gen(function*() {
      const turns = yield* makeOpeningTurns({ threads: 1, queue: 3, maxWait: Duration.seconds(5) })
      const order: Array<string> = []
      const first = yield* held(turns, ["tenant:a"])
      yield* until(turns, { running: 1, waiting: 0 })
      const waiters = []
      for (const [i, name] of ["b", "c", "d"].entries()) {
        waiters.push(yield* Effect.forkChild(turns.withTurn([`tenant:${name}`], Effect.sync(() => order.push(name)))))
        yield* until(turns, { running: 1, waiting: i + 1 })
      }
      yield* first.release
      yield* Fiber.joinAll(waiters)
      expect(order).toEqual(["b", "c", "d"])
    }))

  it.effect("with no queue, an opening finds a free thread or is refused", () =>
    Effect.gen(function*() {
      const turns = yield* makeOpeningTurns({ threads: 2, queue: 0, maxWait: Duration.seconds(5) })
      const first = yield* held(turns, ["tenant:a"])
      const second = yield* held(turns, ["tenant:b"])
      yield* until(turns, { running: 2, waiting: 0 })
      expect((yield* refusal(turns.withTurn(["tenant:c"], Effect.void))).reason).toBe("queue_full")
      yield* first.release
      yield* second.release
      yield* Fiber.joinAll([first.fiber, second.fiber])
    }))
})
