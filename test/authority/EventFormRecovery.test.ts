/**
 * The event request's form, learnt from an E1235 (src/authority/sefin/SefinEvents.ts): the
 * `sefin` adapter sends the form production takes; an authority that refuses it with a schema
 * failure naming `nPedRegEvento` gets the same request once more in the other form. The switch is
 * logged as a warning, it holds for the analysis request (e101103) as for the cancellation, and
 * each environment's adapter remembers its own form: learning it on produção restrita changes
 * nothing for production.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Logger } from "effect"
import { withTimeout } from "../../src/authority/Authorities.js"
import { makeSefinAuthority } from "../../src/authority/sefin/SefinAdapter.js"
import type { Environment } from "../../src/domain/Principal.js"
import { type LocalAuthority, localAuthorityScoped } from "../../tools/local-authority/LocalAuthority.js"
import { cnpj } from "../support/fixtures.js"
import { certificateFor, document, materialOf, submission, vaultHolding } from "../support/SefinHarness.js"

const adapterOn = (local: LocalAuthority, environment: Environment) =>
  Effect.map(
    makeSefinAuthority({
      environment,
      system: environment === "live" ? "production" : "homologation",
      timeout: Duration.seconds(10),
      endpoints: { sefinUrl: local.url, danfseUrl: local.danfseUrl, ca: local.caPem }
    }),
    (authority) => withTimeout(authority, Duration.seconds(10))
  )

/** The event requests this authority received, in order. */
const eventRequests = (local: LocalAuthority) =>
  local.received.filter((r) => r.operation === "registerEvent").map((r) => r.xml ?? "")

const WITH_SEQUENCE = /<nPedRegEvento>001<\/nPedRegEvento>/

describe("event request form learnt from E1235", () => {
  const taxId = cnpj()
  const vault = vaultHolding(materialOf(certificateFor(taxId), "crd_form"))

  /** Issues one note with `environment`'s adapter and asks for its cancellation (or analysis). */
  const issueAndCancel = (
    adapter: Effect.Success<ReturnType<typeof adapterOn>>,
    environment: Environment,
    analysis = false
  ) =>
    Effect.gen(function*() {
      const sub = submission(document(taxId, { environment }))
      const note = yield* adapter.submit(sub)
      // A deadline of one millisecond has passed by the time the analysis is asked for.
      if (analysis) yield* Effect.sleep(Duration.millis(20))
      return yield* adapter.cancel({
        ...sub,
        environment,
        issuerTaxId: taxId,
        accessKey: note.accessKey,
        reasonCode: "issue_error",
        reason: "Valor errado na nota fiscal",
        requestedAt: new Date(),
        analysis
      })
    })

  it.live("the switch is logged once as a warning, with the environment, both forms and the codes only", () =>
    Effect.gen(function*() {
      const logs: Array<{ level: string; message: string }> = []
      const capture = Logger.layer([
        Logger.make(({ logLevel, message }) => logs.push({ level: logLevel, message: JSON.stringify(message) }))
      ])
      const local = yield* localAuthorityScoped({ eventForm: "with_sequence" })
      const adapter = yield* adapterOn(local, "test")
      const cancelled = yield* issueAndCancel(adapter, "test").pipe(Effect.provide(capture))
      expect(cancelled.status).toBe("cancelled")
      const warnings = logs.filter((l) => l.level === "Warn")
      expect(warnings).toHaveLength(1)
      const line = warnings[0]!.message
      expect(line).toContain("refused the event request's form; sending it in the other")
      expect(line).toContain(`"authority.environment":"test"`)
      expect(line).toContain(`"event.form.refused":"without_sequence"`)
      expect(line).toContain(`"event.form.retried":"with_sequence"`)
      expect(line).toContain(`"codes":"E1235"`)
      // Neither the request nor the note's key: the codes and the element only.
      const [request] = eventRequests(local)
      expect(line).not.toContain(request!.match(/<chNFSe>([0-9]{50})<\/chNFSe>/)![1])

      // Remembered: the next cancellation goes in the learnt form at once, and nothing is logged.
      logs.length = 0
      yield* issueAndCancel(adapter, "test").pipe(Effect.provide(capture))
      expect(logs.filter((l) => l.level === "Warn")).toEqual([])
      const requests = eventRequests(local)
      expect(requests).toHaveLength(3)
      expect(requests[2]).toMatch(WITH_SEQUENCE)
    }).pipe(Effect.provide(vault.layer)))

  it.live("the analysis request (e101103) recovers in the other form too", () =>
    Effect.gen(function*() {
      const local = yield* localAuthorityScoped({ eventForm: "with_sequence", cancellationDeadline: "1 millis" })
      const adapter = yield* adapterOn(local, "test")
      const asked = yield* issueAndCancel(adapter, "test", true)
      expect(asked.status).toBe("in_analysis")
      const requests = eventRequests(local)
      expect(requests).toHaveLength(2)
      for (const request of requests) expect(request).toContain("<e101103>")
      expect(requests[0]).not.toMatch(WITH_SEQUENCE)
      expect(requests[0]).toMatch(/Id="PRE[0-9]{56}"/)
      expect(requests[1]).toMatch(WITH_SEQUENCE)
      expect(requests[1]).toMatch(/Id="PRE[0-9]{59}"/)
      expect(local.submissions()[0]!.analysisPending).toBe(true)
    }).pipe(Effect.provide(vault.layer)))

  it.live("each environment keeps its own form: produção restrita's lesson does not change production's requests", () =>
    Effect.gen(function*() {
      const restricted = yield* localAuthorityScoped({ eventForm: "with_sequence" })
      const production = yield* localAuthorityScoped({ environment: 1 })
      const test = yield* adapterOn(restricted, "test")
      const live = yield* adapterOn(production, "live")

      expect((yield* issueAndCancel(test, "test")).status).toBe("cancelled")
      expect(eventRequests(restricted)).toHaveLength(2)

      // Production still gets the production form, first time, with no refusal in between.
      expect((yield* issueAndCancel(live, "live")).status).toBe("cancelled")
      expect(eventRequests(production)).toHaveLength(1)
      expect(eventRequests(production)[0]).not.toMatch(WITH_SEQUENCE)

      // And the test environment keeps what it learnt.
      yield* issueAndCancel(test, "test")
      expect(eventRequests(restricted)).toHaveLength(3)
      expect(eventRequests(restricted)[2]).toMatch(WITH_SEQUENCE)
      yield* issueAndCancel(live, "live")
      expect(eventRequests(production)).toHaveLength(2)
      expect(eventRequests(production)[1]).not.toMatch(WITH_SEQUENCE)
    }).pipe(Effect.provide(vault.layer)))
})
