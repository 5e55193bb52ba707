/**
 * The trace sampler of the standard `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG` variables
 * (SPEC §13). The decision is taken where a trace enters the service (a request, a queued job), before
 * any work: a trace that is not sampled makes no spans below its first one (`TraceContext.ts`).
 *
 * Supported: `always_on`, `always_off`, `traceidratio`, and their `parentbased_*` forms (the default
 * is `parentbased_always_on`, as in every OpenTelemetry SDK). A parent-based sampler follows the
 * caller's `traceparent` flag, and for a queued job the flag stored with it, so a job is recorded
 * exactly when the request that queued it was.
 */
import { Config, Context, Effect, Layer } from "effect"

export interface TraceSampler {
  /** The decision for a trace that starts here, with no parent decision to follow. */
  readonly sampleRoot: () => boolean
  /** Whether a parent's decision (a caller's `traceparent`, a job's stored one) is followed. */
  readonly followsParent: boolean
}

const ratio = (probability: number): () => boolean =>
  probability >= 1 ? () => true : probability <= 0 ? () => false : () => Math.random() < probability

const defaultSampler: TraceSampler = { sampleRoot: ratio(1), followsParent: true }

/** The sampler in force; the default until `TraceSamplerLive` reads the configuration. */
export const TraceSampler = Context.Reference<TraceSampler>("etd/TraceSampler", { defaultValue: () => defaultSampler })

/** Whether a trace is recorded, given its parent's decision when it has one. */
export const decide = (sampler: TraceSampler, parentSampled: boolean | undefined): boolean =>
  parentSampled !== undefined && sampler.followsParent ? parentSampled : sampler.sampleRoot()

const NAMES = ["always_on", "always_off", "traceidratio"] as const

/**
 * Reads a sampler name and argument as the OpenTelemetry SDKs do: an unknown name or an unusable
 * argument is a warning and the default, never a refusal to start. A root's ratio is drawn at
 * random rather than from its trace id: the id is made after the decision, and a trace that starts
 * here has no other service to agree with.
 */
export const parseSampler = (
  name: string | undefined,
  argument: string | undefined
): { readonly sampler: TraceSampler; readonly warning?: string } => {
  const normalized = (name ?? "parentbased_always_on").trim().toLowerCase()
  const followsParent = normalized.startsWith("parentbased_")
  const base = followsParent ? normalized.slice("parentbased_".length) : normalized
  if (!(NAMES as ReadonlyArray<string>).includes(base)) {
    return {
      sampler: defaultSampler,
      warning: `OTEL_TRACES_SAMPLER=${name} is not supported here; using parentbased_always_on`
    }
  }
  if (base !== "traceidratio") return { sampler: { sampleRoot: ratio(base === "always_on" ? 1 : 0), followsParent } }
  const probability = argument === undefined || argument.trim() === "" ? 1 : Number(argument)
  if (!Number.isFinite(probability) || probability < 0 || probability > 1) {
    return {
      sampler: { sampleRoot: ratio(1), followsParent },
      warning: `OTEL_TRACES_SAMPLER_ARG=${argument} is not a probability between 0 and 1; sampling every trace`
    }
  }
  return { sampler: { sampleRoot: ratio(probability), followsParent } }
}

export const TraceSamplerLive = Layer.effect(
  TraceSampler,
  Effect.gen(function*() {
    const { argument, name } = yield* Effect.orDie(Config.all({
      name: Config.option(Config.String("OTEL_TRACES_SAMPLER")),
      argument: Config.option(Config.String("OTEL_TRACES_SAMPLER_ARG"))
    }))
    const { sampler, warning } = parseSampler(
      name._tag === "Some" ? name.value : undefined,
      argument._tag === "Some" ? argument.value : undefined
    )
    if (warning !== undefined) yield* Effect.logWarning(warning)
    return sampler
  })
)
