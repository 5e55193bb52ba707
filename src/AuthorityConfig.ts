/**
 * The tax authority's settings of each environment (SPEC §7, §14), part of `AppConfig`.
 */
import { Config, Duration, type Option, Schema } from "effect"
import type { Environment } from "./domain/Principal.js"

/** What an environment's authority talks to: the built-in simulator, or the national system (SEFIN Nacional). */
export type AuthorityTarget = "simulator" | "sefin"

/**
 * The tax authority of each environment: production for live keys' documents, homologation for
 * test keys'. Each is configured with its own variables:
 * - `TAX_AUTHORITY_LIVE_TARGET`, `TAX_AUTHORITY_SANDBOX_TARGET`: what it talks to, `simulator`
 *   (default: the built-in one, so the service runs offline) or `sefin` (the national NFS-e system).
 * - `TAX_AUTHORITY_LIVE_URL`, `TAX_AUTHORITY_SANDBOX_URL`: the SEFIN Nacional base URLs (defaults:
 *   production and "produção restrita", from the official API descriptions);
 *   `TAX_AUTHORITY_LIVE_DANFSE_URL`, `TAX_AUTHORITY_SANDBOX_DANFSE_URL`: the national DANFSe API.
 * - `TAX_AUTHORITY_LIVE_DANFSE_SOURCE`, `TAX_AUTHORITY_SANDBOX_DANFSE_SOURCE`: where a `sefin`
 *   environment's DANFSe comes from, `local` (default: rendered by the service from the authorized
 *   NFS-e XML) or `national` (relayed from the national DANFSe API, retired by NT 008/2026).
 * - `TAX_AUTHORITY_LIVE_CA_FILE`, `TAX_AUTHORITY_SANDBOX_CA_FILE` (or `TAX_AUTHORITY_CA_FILE` for
 *   both): a PEM bundle of certificate authorities trusted for the authority's TLS in addition to
 *   the default ones, Node's public roots and the shipped ICP-Brasil roots (produção restrita chains
 *   to ICP-Brasil, production to a public CA). Verification always stays on.
 * - `TAX_AUTHORITY_LIVE_GOODS_TARGET`, `TAX_AUTHORITY_SANDBOX_GOODS_TARGET`: where goods invoices
 *   (NF-e, NFC-e) go, `simulator` (default) or `sefaz` (the authorizer of the emitter's state, over
 *   mutual TLS with the tenant's certificate); `TAX_AUTHORITY_LIVE_SEFAZ_URL`,
 *   `TAX_AUTHORITY_SANDBOX_SEFAZ_URL`: one base URL for every state's services (the local SEFAZ),
 *   instead of each state's published addresses. The CA bundle below applies to them too.
 * - `TAX_AUTHORITY_SIMULATOR_LATENCY` (duration, default 0 ms) and
 *   `TAX_AUTHORITY_SIMULATOR_FAILURE_RATE` (0..1, default 0): the simulator's behaviour.
 * - `TAX_AUTHORITY_TIMEOUT` (duration, default 10 s): bound on every call; past it the call fails
 *   as transient, so a hung authority never holds a worker. It is also how long the simulator keeps
 *   a `simulate:timeout` submission waiting.
 */
export const authorityEnvironments = {
  live: {
    system: "production",
    variablePrefix: "TAX_AUTHORITY_LIVE",
    sefinUrl: "https://sefin.nfse.gov.br/SefinNacional",
    danfseUrl: "https://adn.nfse.gov.br/danfse"
  },
  test: {
    system: "homologation",
    variablePrefix: "TAX_AUTHORITY_SANDBOX",
    sefinUrl: "https://sefin.producaorestrita.nfse.gov.br/SefinNacional",
    danfseUrl: "https://adn.producaorestrita.nfse.gov.br/danfse"
  }
} as const satisfies Record<
  Environment,
  { system: "production" | "homologation"; variablePrefix: string; sefinUrl: string; danfseUrl: string }
>

/** What an environment's goods invoices (NF-e, NFC-e) go to: the built-in simulator, or the state authorities (SEFAZ). */
export type GoodsAuthorityTarget = "simulator" | "sefaz"

export interface AuthorityAdapterConfig {
  readonly target: AuthorityTarget
  readonly goods: {
    readonly target: GoodsAuthorityTarget
    /**
     * One base URL for every state's SEFAZ services (`{base}/ws/NFeAutorizacao4.asmx`…), such as
     * the local SEFAZ; none: each state's published addresses.
     */
    readonly sefazUrl: Option.Option<string>
  }
  readonly timeout: Duration.Duration
  readonly simulator: { readonly latency: Duration.Duration; readonly failureRate: number }
  readonly sefin: {
    readonly sefinUrl: string
    readonly danfseUrl: string
    readonly caFile: Option.Option<string>
    readonly danfseSource: DanfseSource
  }
}

/** Where a `sefin` environment's DANFSe comes from: rendered from the NFS-e XML, or the national DANFSe API. */
export type DanfseSource = "local" | "national"

const danfseSource = (name: string): Config.Config<DanfseSource> =>
  Config.schema(
    Schema.String.check(Schema.makeFilter((value) =>
      value === "local" || value === "national" ||
      `${name}=${JSON.stringify(value)} is not a DANFSe source: use "local" (rendered by the service from the ` +
        `NFS-e XML) or "national" (the national DANFSe API).`
    )),
    name
  ).pipe(
    Config.withDefault("local"),
    Config.map((value) => value as DanfseSource)
  )

const target = (name: string): Config.Config<AuthorityTarget> =>
  Config.schema(
    Schema.String.check(Schema.makeFilter((value) =>
      value === "simulator" || value === "sefin" ||
      `${name}=${
        JSON.stringify(value)
      } is not a target: use "simulator" (the built-in authority) or "sefin" (the national NFS-e system).`
    )),
    name
  ).pipe(
    Config.withDefault("simulator"),
    Config.map((value) => value as AuthorityTarget)
  )

const goodsTarget = (name: string): Config.Config<GoodsAuthorityTarget> =>
  Config.schema(
    Schema.String.check(Schema.makeFilter((value) =>
      value === "simulator" || value === "sefaz" ||
      `${name}=${
          JSON.stringify(value)
        } is not a target for goods invoices: use "simulator" (the built-in authority) or "sefaz" (the state ` +
        "authorities)."
    )),
    name
  ).pipe(
    Config.withDefault("simulator"),
    Config.map((value) => value as GoodsAuthorityTarget)
  )

/** An https base URL, kept without its trailing slash (paths are appended to it). */
const httpsUrl = (name: string): Config.Config<string> =>
  Config.schema(
    Schema.String.check(Schema.makeFilter((value) => {
      const parsed = URL.canParse(value) ? new URL(value) : undefined
      return (parsed !== undefined && parsed.protocol === "https:" && parsed.search === "" && parsed.hash === "") ||
        `${name} must be an https:// URL without query or fragment (the authorities are HTTPS only)`
    })),
    name
  ).pipe(Config.map((value) => value.replace(/\/+$/u, "")))

const baseUrl = (name: string, fallback: string): Config.Config<string> =>
  httpsUrl(name).pipe(Config.withDefault(fallback))

export const authorityConfig = (environment: Environment): Config.Config<AuthorityAdapterConfig> =>
  Config.all({
    target: target(`${authorityEnvironments[environment].variablePrefix}_TARGET`),
    goods: Config.all({
      target: goodsTarget(`${authorityEnvironments[environment].variablePrefix}_GOODS_TARGET`),
      sefazUrl: Config.option(httpsUrl(`${authorityEnvironments[environment].variablePrefix}_SEFAZ_URL`))
    }),
    timeout: Config.schema(
      Schema.DurationFromString.check(Schema.makeFilter((d) =>
        Duration.isGreaterThan(d, Duration.zero) || "TAX_AUTHORITY_TIMEOUT must be a positive duration"
      )),
      "TAX_AUTHORITY_TIMEOUT"
    ).pipe(Config.withDefault(Duration.seconds(10))),
    simulator: Config.all({
      latency: Config.Duration("TAX_AUTHORITY_SIMULATOR_LATENCY").pipe(Config.withDefault(Duration.zero)),
      failureRate: Config.schema(
        Schema.Number.check(Schema.makeFilter((rate) =>
          (rate >= 0 && rate <= 1) || "TAX_AUTHORITY_SIMULATOR_FAILURE_RATE must be a number from 0 to 1"
        )),
        "TAX_AUTHORITY_SIMULATOR_FAILURE_RATE"
      ).pipe(Config.withDefault(0))
    }),
    sefin: Config.all({
      sefinUrl: baseUrl(
        `${authorityEnvironments[environment].variablePrefix}_URL`,
        authorityEnvironments[environment].sefinUrl
      ),
      danfseUrl: baseUrl(
        `${authorityEnvironments[environment].variablePrefix}_DANFSE_URL`,
        authorityEnvironments[environment].danfseUrl
      ),
      danfseSource: danfseSource(`${authorityEnvironments[environment].variablePrefix}_DANFSE_SOURCE`),
      // The environment's own bundle first: a test CA trusted for homologation is never trusted for production.
      caFile: Config.option(
        Config.String(`${authorityEnvironments[environment].variablePrefix}_CA_FILE`).pipe(
          Config.orElse(() =>
            Config.String("TAX_AUTHORITY_CA_FILE")
          )
        )
      )
    })
  })
