/**
 * OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG read as the OpenTelemetry SDKs read them.
 */
import { describe, expect, it } from "vitest"
import { decide, parseSampler } from "../../src/telemetry/Sampler.js"

const share = (sample: () => boolean, draws = 20_000) => {
  let yes = 0
  for (let i = 0; i < draws; i++) if (sample()) yes++
  return yes / draws
}

describe("trace sampler", () => {
  it("defaults to parentbased_always_on: roots recorded, a caller's decision followed", () => {
    const { sampler, warning } = parseSampler(undefined, undefined)
    expect(warning).toBeUndefined()
    expect(decide(sampler, undefined)).toBe(true)
    expect(decide(sampler, false)).toBe(false)
    expect(decide(sampler, true)).toBe(true)
  })

  it("always_off records nothing, whatever the caller asked; always_on everything", () => {
    const off = parseSampler("always_off", undefined).sampler
    expect([decide(off, undefined), decide(off, true), decide(off, false)]).toEqual([false, false, false])
    const on = parseSampler("ALWAYS_ON", undefined).sampler
    expect([decide(on, undefined), decide(on, true), decide(on, false)]).toEqual([true, true, true])
  })

  it("parentbased_always_off follows a parent and records no root", () => {
    const sampler = parseSampler("parentbased_always_off", undefined).sampler
    expect([decide(sampler, undefined), decide(sampler, true), decide(sampler, false)]).toEqual([false, true, false])
  })

  it("traceidratio records about the given share of roots", () => {
    const sampler = parseSampler("parentbased_traceidratio", "0.25").sampler
    expect(share(() => decide(sampler, undefined))).toBeGreaterThan(0.22)
    expect(share(() => decide(sampler, undefined))).toBeLessThan(0.28)
    expect(decide(sampler, true)).toBe(true)
    const plain = parseSampler("traceidratio", "0").sampler
    expect(share(() => decide(plain, true))).toBe(0)
  })

  it("an unknown sampler or an unusable ratio is a warning and a safe default, never a refusal to start", () => {
    const unknown = parseSampler("jaeger_remote", undefined)
    expect(unknown.warning).toMatch(/not supported/)
    expect(decide(unknown.sampler, undefined)).toBe(true)
    const bad = parseSampler("traceidratio", "1.5")
    expect(bad.warning).toMatch(/not a probability/)
    expect(decide(bad.sampler, undefined)).toBe(true)
  })
})
