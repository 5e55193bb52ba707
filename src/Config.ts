/**
 * Every setting of SPEC §14, read once through Effect `Config`. Secrets stay `Redacted`.
 */
import { Config, ConfigProvider, Context, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import type { Environment } from "./domain/Principal.js"
import { parseTrustedProxies, type TrustedProxies } from "./http/ClientAddress.js"
import { mailConfig, type MailConfigShape } from "./mail/MailConfig.js"

export {
  type AuthorityAdapterConfig,
  authorityConfig,
  authorityEnvironments,
  type AuthorityTarget,
  type DanfseSource
} from "./AuthorityConfig.js"
import { type AuthorityAdapterConfig, authorityConfig } from "./AuthorityConfig.js"

export interface AppConfigShape {
  readonly port: number
  readonly production: boolean
  readonly databaseUrl: Option.Option<string>
  /** DATABASE_PREPARED_STATEMENTS: off behind a transaction-mode pooler (PgBouncer), which cannot keep them. */
  readonly databasePreparedStatements: boolean
  /** DATABASE_CONNECT_TIMEOUT: the longest a request waits for a connection before `503 service_unavailable`. */
  readonly databaseConnectTimeout: Duration.Duration
  readonly dataDir: string
  readonly keyRotationGraceDays: number
  readonly sessionTtl: Duration.Duration
  /** INVITATION_TTL: how long an invitation's link can be accepted (SPEC §5: 7 days). */
  readonly invitationTtl: Duration.Duration
  readonly defaultMonthlyQuota: number
  readonly rateLimit: { readonly perSecond: number; readonly burst: number }
  /**
   * Logins and registrations. `attemptsPerHour` (RATE_LIMIT_LOGIN_ATTEMPTS_PER_HOUR) caps every
   * login attempt per email whatever the address; unset, three times `perMinute`
   * (`auth/LoginLimits.ts`), so one setting scales both.
   */
  readonly loginRateLimit: { readonly perMinute: number; readonly attemptsPerHour?: number | undefined }
  /**
   * TRUSTED_PROXIES: the load balancers and proxies in front of the service; only their
   * `Forwarded`/`X-Forwarded-For` headers are believed (`http/ClientAddress.ts`). Empty by default.
   */
  readonly trustedProxies: TrustedProxies
  /** All of a tenant's keys together, so more keys do not buy more throughput. */
  readonly tenantRateLimit: { readonly perSecond: number; readonly burst: number }
  /** Per user, all of their sessions together, on the endpoints a session calls: logging in again buys nothing. */
  readonly sessionRateLimit: { readonly perSecond: number; readonly burst: number }
  /** Per tenant, all of its members' sessions together, on the tenant's paths. */
  readonly sessionTenantRateLimit: { readonly perSecond: number; readonly burst: number }
  /** Certificate uploads per tenant, per user and over the whole service: opening a PKCS#12 is expensive. */
  readonly uploadRateLimit: {
    readonly perMinute: number
    readonly perUserPerMinute: number
    readonly globalPerMinute: number
  }
  /** The pool that opens uploaded PKCS#12 files (src/credentials/Pkcs12Opener.ts), per instance. */
  readonly pkcs12Pool: {
    readonly threads: number
    /** Past it the thread is terminated and the file refused as too costly. */
    readonly timeLimit: Duration.Duration
    /** Openings that may wait for a thread; one more is answered 503 at once. */
    readonly queue: number
    /** The longest an opening waits for a thread before 503. */
    readonly maxWait: Duration.Duration
  }
  /** `REDIS_URL` set: rate-limit buckets in Redis, shared by every instance; unset: in each instance's memory. */
  readonly redis: {
    readonly url: Option.Option<Redacted.Redacted<string>>
    readonly keyPrefix: string
    /** The longest a request waits for Redis before its limits are decided in this instance's memory. */
    readonly timeout: Duration.Duration
  }
  /** scrypt cost parameter N (a power of two); lower only in tests. */
  readonly passwordHashCost: number
  readonly lastUsedFlushInterval: Duration.Duration
  /** The shared job queue (src/queue/), whatever its jobs. */
  readonly queue: {
    /** Identifies this instance's claims (`locked_by`) in every queue. */
    readonly instanceId: string
    /** How long the jobs in hand may run on at shutdown. */
    readonly shutdownGrace: Duration.Duration
  }
  /** The issuance workers (SPEC §6–7). */
  readonly issuance: {
    readonly concurrency: number
    /** Fallback poll; NOTIFY on commit normally wakes the workers at once. */
    readonly pollInterval: Duration.Duration
    /** A claimed job is another instance's to take once its lease has run out (a crash). */
    readonly lease: Duration.Duration
  }
  readonly retry: {
    readonly baseDelay: Duration.Duration
    readonly maxDelay: Duration.Duration
    /** After this long without an answer from the authority a document is `failed`. */
    readonly window: Duration.Duration
  }
  /**
   * SPEC §11 fairness: how many jobs of one tenant, and deliveries to one webhook endpoint, may be
   * in hand at once, counted across all instances, so that one tenant's slow receivers or burst of
   * documents cannot hold every worker.
   */
  readonly fairness: {
    readonly issuancePerTenant: number
    readonly webhooksPerTenant: number
    readonly webhooksPerEndpoint: number
  }
  /** Outgoing webhooks (SPEC §9): the WebhookDispatcher and the SSRF guard. */
  readonly webhooks: {
    /** WEBHOOKS_ALLOW_PRIVATE_TARGETS: loopback targets allowed (local development and tests only). */
    readonly allowPrivateTargets: boolean
    /** Bound on one delivery attempt, connect to last byte read. */
    readonly timeout: Duration.Duration
    readonly concurrency: number
    /** Fallback poll; NOTIFY on commit normally wakes the dispatcher at once. */
    readonly pollInterval: Duration.Duration
    /** Longer than `timeout`, so a live attempt never loses its claim. */
    readonly lease: Duration.Duration
  }
  /**
   * `CREDENTIALS_MASTER_KEY`: `<kid>:<base64 of 32 bytes>[,<kid>:<base64>…]`, current key first.
   * Unset → generated once in DATA_DIR outside production (src/runtime/Secrets.ts).
   */
  readonly credentialsMasterKey: Option.Option<Redacted.Redacted<string>>
  /**
   * `CREDENTIALS_EXTRA_CA_FILE`: a PEM bundle of certificate authorities trusted for tenants'
   * certificates besides the shipped ICP-Brasil roots (the local authority's test hierarchy, tests).
   * Never set in production: a certificate under one of them verifies a tenant's tax id.
   */
  readonly credentialsExtraCaFile: Option.Option<string>
  /** `PAYMENT_PROVIDER_WEBHOOK_SECRET`: `whsec_<base64>`; same rule when unset. */
  readonly paymentProviderWebhookSecret: Option.Option<Redacted.Redacted<string>>
  /** How often the credential expiry monitor looks for warnings to send and certificates to expire. */
  readonly credentialExpiryCheckInterval: Duration.Duration
  /** How often the state authorizers' status service is asked (AuthorizerMonitor.ts). */
  readonly authorizerStatusCheckInterval: Duration.Duration
  /** The tax authority each environment's documents go to. */
  readonly authority: Readonly<Record<Environment, AuthorityAdapterConfig>>
  /** Outgoing mail and the one-time links it carries (src/mail/MailConfig.ts). */
  readonly mail: MailConfigShape
}

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("etd/AppConfig") {}

/** An integer setting that must satisfy `valid`; the message names the rule when it does not. */
const checkedInt = (name: string, message: string, valid: (n: number) => boolean) =>
  Config.schema(Schema.Int.check(Schema.makeFilter(valid, { message })), name)

const positiveInt = (name: string, fallback: number) =>
  checkedInt(name, `${name} must be a positive integer`, (n) => n > 0).pipe(Config.withDefault(fallback))

/**
 * A tenant's cap in a queue; unset, half of an instance's pool (at least one), so that a tenant
 * never holds a whole instance and the others always find a free worker.
 */
const tenantCap = (name: string, pool: Config.Config<number>) =>
  Config.all({ pool, cap: Config.option(checkedInt(name, `${name} must be a positive integer`, (n) => n > 0)) }).pipe(
    Config.map(({ cap, pool }) => Option.getOrElse(cap, () => Math.ceil(pool / 2)))
  )

export const appConfig: Config.Config<AppConfigShape> = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(3000)),
  production: Config.String("NODE_ENV").pipe(Config.map((env) => env === "production"), Config.withDefault(false)),
  databaseUrl: Config.option(Config.NonEmptyString("DATABASE_URL")),
  databasePreparedStatements: Config.Boolean("DATABASE_PREPARED_STATEMENTS").pipe(Config.withDefault(true)),
  databaseConnectTimeout: Config.Duration("DATABASE_CONNECT_TIMEOUT").pipe(Config.withDefault(Duration.seconds(5))),
  dataDir: Config.String("DATA_DIR").pipe(Config.withDefault("./data")),
  keyRotationGraceDays: checkedInt(
    "KEY_ROTATION_GRACE_DAYS",
    "KEY_ROTATION_GRACE_DAYS must be 0..30",
    (n) => n >= 0 && n <= 30
  ).pipe(Config.withDefault(7)),
  sessionTtl: Config.Duration("SESSION_TTL").pipe(Config.withDefault(Duration.hours(12))),
  invitationTtl: Config.Duration("INVITATION_TTL").pipe(Config.withDefault(Duration.days(7))),
  defaultMonthlyQuota: positiveInt("DEFAULT_MONTHLY_QUOTA", 100),
  rateLimit: Config.all({
    perSecond: positiveInt("RATE_LIMIT_PER_SECOND", 100),
    burst: positiveInt("RATE_LIMIT_BURST", 200)
  }),
  loginRateLimit: Config.all({
    perMinute: positiveInt("RATE_LIMIT_LOGIN_PER_MINUTE", 10),
    attemptsPerHour: Config.option(checkedInt(
      "RATE_LIMIT_LOGIN_ATTEMPTS_PER_HOUR",
      "RATE_LIMIT_LOGIN_ATTEMPTS_PER_HOUR must be a positive integer",
      (n) => n > 0
    )).pipe(Config.map(Option.getOrUndefined))
  }),
  // An entry that is no address or network stops the start, naming it.
  trustedProxies: Config.schema(
    Schema.String.check(Schema.makeFilter((text) => parseTrustedProxies(text).problem)),
    "TRUSTED_PROXIES"
  ).pipe(Config.withDefault(""), Config.map((text) => parseTrustedProxies(text).networks)),
  tenantRateLimit: Config.all({
    perSecond: positiveInt("RATE_LIMIT_TENANT_PER_SECOND", 200),
    burst: positiveInt("RATE_LIMIT_TENANT_BURST", 400)
  }),
  sessionRateLimit: Config.all({
    perSecond: positiveInt("RATE_LIMIT_SESSION_PER_SECOND", 10),
    burst: positiveInt("RATE_LIMIT_SESSION_BURST", 50)
  }),
  sessionTenantRateLimit: Config.all({
    perSecond: positiveInt("RATE_LIMIT_SESSION_TENANT_PER_SECOND", 20),
    burst: positiveInt("RATE_LIMIT_SESSION_TENANT_BURST", 100)
  }),
  uploadRateLimit: Config.all({
    perMinute: positiveInt("RATE_LIMIT_UPLOADS_PER_MINUTE", 10),
    perUserPerMinute: positiveInt("RATE_LIMIT_UPLOADS_PER_USER_PER_MINUTE", 10),
    globalPerMinute: positiveInt("RATE_LIMIT_UPLOADS_GLOBAL_PER_MINUTE", 120)
  }),
  pkcs12Pool: Config.all({
    threads: positiveInt("CREDENTIALS_OPEN_THREADS", 2),
    timeLimit: Config.Duration("CREDENTIALS_OPEN_TIME_LIMIT").pipe(Config.withDefault(Duration.seconds(10))),
    queue: checkedInt("CREDENTIALS_OPEN_QUEUE", "CREDENTIALS_OPEN_QUEUE must be an integer >= 0", (n) => n >= 0).pipe(
      Config.withDefault(8)
    ),
    maxWait: Config.Duration("CREDENTIALS_OPEN_MAX_WAIT").pipe(Config.withDefault(Duration.seconds(5)))
  }),
  redis: Config.all({
    url: Config.option(Config.schema(Schema.Redacted(Schema.NonEmptyString), "REDIS_URL")),
    keyPrefix: Config.String("REDIS_KEY_PREFIX").pipe(Config.withDefault("etd:")),
    timeout: Config.Duration("REDIS_TIMEOUT").pipe(Config.withDefault(Duration.millis(100)))
  }),
  passwordHashCost: checkedInt(
    "PASSWORD_HASH_COST",
    "PASSWORD_HASH_COST must be a power of two >= 1024",
    (n) => n >= 1024 && (n & (n - 1)) === 0
  ).pipe(Config.withDefault(32768)),
  lastUsedFlushInterval: Config.Duration("LAST_USED_FLUSH_INTERVAL").pipe(Config.withDefault(Duration.seconds(30))),
  queue: Config.all({
    instanceId: Config.String("INSTANCE_ID").pipe(
      Config.withDefault(`${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`)
    ),
    shutdownGrace: Config.Duration("WORKER_SHUTDOWN_GRACE").pipe(Config.withDefault(Duration.seconds(15)))
  }),
  issuance: Config.all({
    concurrency: positiveInt("WORKER_CONCURRENCY", 32),
    pollInterval: Config.Duration("WORKER_POLL_INTERVAL").pipe(Config.withDefault(Duration.millis(500))),
    lease: Config.Duration("WORKER_LEASE").pipe(Config.withDefault(Duration.seconds(60)))
  }),
  retry: Config.all({
    baseDelay: Config.Duration("TAX_AUTHORITY_RETRY_BASE_DELAY").pipe(Config.withDefault(Duration.seconds(2))),
    maxDelay: Config.Duration("TAX_AUTHORITY_RETRY_MAX_DELAY").pipe(Config.withDefault(Duration.minutes(5))),
    window: Config.Duration("TAX_AUTHORITY_RETRY_WINDOW").pipe(Config.withDefault(Duration.hours(6)))
  }),
  fairness: Config.all({
    issuancePerTenant: tenantCap("WORKER_TENANT_CONCURRENCY", positiveInt("WORKER_CONCURRENCY", 32)),
    webhooksPerTenant: tenantCap("WEBHOOKS_TENANT_CONCURRENCY", positiveInt("WEBHOOKS_CONCURRENCY", 32)),
    webhooksPerEndpoint: positiveInt("WEBHOOKS_ENDPOINT_CONCURRENCY", 16)
  }),
  webhooks: Config.all({
    allowPrivateTargets: Config.Boolean("WEBHOOKS_ALLOW_PRIVATE_TARGETS").pipe(Config.withDefault(false)),
    timeout: Config.Duration("WEBHOOKS_TIMEOUT").pipe(Config.withDefault(Duration.seconds(10))),
    concurrency: positiveInt("WEBHOOKS_CONCURRENCY", 32),
    pollInterval: Config.Duration("WEBHOOKS_POLL_INTERVAL").pipe(Config.withDefault(Duration.seconds(1))),
    lease: Config.Duration("WEBHOOKS_LEASE").pipe(Config.withDefault(Duration.seconds(60)))
  }),
  credentialsMasterKey: Config.option(Config.Redacted("CREDENTIALS_MASTER_KEY")),
  credentialsExtraCaFile: Config.option(Config.NonEmptyString("CREDENTIALS_EXTRA_CA_FILE")),
  paymentProviderWebhookSecret: Config.option(Config.Redacted("PAYMENT_PROVIDER_WEBHOOK_SECRET")),
  credentialExpiryCheckInterval: Config.Duration("CREDENTIAL_EXPIRY_CHECK_INTERVAL").pipe(
    Config.withDefault(Duration.hours(1))
  ),
  authorizerStatusCheckInterval: Config.Duration("SEFAZ_STATUS_CHECK_INTERVAL").pipe(
    Config.withDefault(Duration.minutes(5))
  ),
  authority: Config.all({ live: authorityConfig("live"), test: authorityConfig("test") }),
  mail: mailConfig
})

export const AppConfigLive = Layer.effect(AppConfig, Effect.orDie(appConfig))

const emptyProvider = ConfigProvider.fromUnknown({})

/** Tests build the configuration from a partial override on top of the defaults. */
export const AppConfigTest = (overrides: Partial<AppConfigShape> = {}) =>
  Layer.effect(
    AppConfig,
    Effect.map(Effect.orDie(appConfig.parse(emptyProvider)), (defaults) => ({
      ...defaults,
      passwordHashCost: 1024,
      // Fresh secrets per app, so tests never generate files in DATA_DIR.
      credentialsMasterKey: Option.some(Redacted.make(`test:${randomBytes(32).toString("base64")}`)),
      paymentProviderWebhookSecret: Option.some(Redacted.make(`whsec_${randomBytes(32).toString("base64")}`)),
      ...overrides
    }))
  )
