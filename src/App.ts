/**
 * Composition root: configuration, logging, tracing, database, services and the HTTP API.
 * `main.ts` adds the Node HTTP server; tests add `NodeHttpServer.layerTest` instead.
 */
import type { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option } from "effect"
import { HttpRouter } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { SqlClient, SqlError } from "effect/sql"
import { Api } from "./Api.js"
import { ApiDocument } from "./ApiDocument.js"
import { AccountLinks } from "./auth/AccountLinks.js"
import { AuthService } from "./auth/AuthService.js"
import { UserDirectoryLive } from "./auth/Directory.js"
import { AuthHttpLive, InvitationAcceptanceHttpLive } from "./auth/Http.js"
import { InvitationAcceptanceService } from "./auth/InvitationAcceptance.js"
import { GoodsAuthoritiesLive, TaxAuthoritiesLive } from "./authority/Authorities.js"
import type { GoodsAuthorities } from "./authority/GoodsAuthority.js"
import type { TaxAuthorities } from "./authority/TaxAuthority.js"
import { BillingService, PaymentProviderSecretLive } from "./billing/BillingService.js"
import { BillingHttpLive } from "./billing/Http.js"
import { AppConfig } from "./Config.js"
import { CorrectionsHttpLive } from "./corrections/Http.js"
import { CredentialService } from "./credentials/CredentialService.js"
import { CredentialVault, MasterKeyRewrapLive, MasterKeysLive } from "./credentials/CredentialVault.js"
import { ExpiryMonitorLive } from "./credentials/ExpiryMonitor.js"
import { CredentialsHttpLive } from "./credentials/Http.js"
import { OutboxLive } from "./credentials/MailSealingLive.js"
import { Pkcs12Opener } from "./credentials/Pkcs12Opener.js"
import { MigrationsLive, SqlLive } from "./db/Database.js"
import { Transaction } from "./db/Repository.js"
import { AuthorizerMonitorLive } from "./documents/AuthorizerMonitor.js"
import { CorrectionService } from "./documents/Corrections.js"
import { DocumentRepo } from "./documents/DocumentRepo.js"
import { DocumentService } from "./documents/DocumentService.js"
import { DocumentFilesHttpLive, DocumentsHttpLive, UsageHttpLive } from "./documents/Http.js"
import { Idempotency, IdempotencyPurgeLive } from "./documents/Idempotency.js"
import { IssuanceQueue } from "./documents/IssuanceQueue.js"
import { IssuanceWorkersLive } from "./documents/IssuanceWorker.js"
import { NoteMailSourceLive } from "./documents/NoteMailSourceLive.js"
import { VoidingService } from "./documents/Voiding.js"
import { AuditLog } from "./events/AuditLog.js"
import { ApiErrorsLive } from "./http/ApiErrors.js"
import { referencePageLayer } from "./http/ReferencePage.js"
import { MaxBodySizeLive } from "./http/RequestGuards.js"
import { serverMiddleware } from "./http/ServerMiddleware.js"
import { BuiltInTracerDisabled } from "./http/ServerSpan.js"
import { AuthenticationLive } from "./keys/Authentication.js"
import { ExposureMonitor } from "./keys/ExposureMonitor.js"
import { KeysHttpLive } from "./keys/Http.js"
import { KeyService } from "./keys/KeyService.js"
import { MailSenderLive } from "./mail/MailSender.js"
import { MailTransportLive } from "./mail/Transport.js"
import { RateLimiter } from "./ratelimit/RateLimiter.js"
import { Readiness } from "./runtime/Readiness.js"
import { SubstitutionHttpLive } from "./substitution/Http.js"
import { DashboardFilesLive } from "./system/DashboardFiles.js"
import { SystemHttpLive } from "./system/Http.js"
import { ExposureReports } from "./telemetry/ExposureReports.js"
import { LoggerLive } from "./telemetry/Logger.js"
import { MetricsRouteLive, MetricsServerLive } from "./telemetry/MetricsEndpoint.js"
import { TraceSamplerLive } from "./telemetry/Sampler.js"
import { TracingLive } from "./telemetry/Tracing.js"
import { InvitationsHttpLive, TenantsHttpLive } from "./tenants/Http.js"
import { InvitationService } from "./tenants/InvitationService.js"
import { MemberService } from "./tenants/MemberService.js"
import { TaxIdOwnership } from "./tenants/TaxIdOwnership.js"
import { TenantService } from "./tenants/TenantService.js"
import { VoidingHttpLive } from "./voiding/Http.js"
import { DeliveryQueue } from "./webhooks/DeliveryQueue.js"
import { EventLogLive } from "./webhooks/FanOut.js"
import { WebhooksHttpLive } from "./webhooks/Http.js"
import { WebhookDispatcherLive } from "./webhooks/WebhookDispatcher.js"
import { WebhookRepo } from "./webhooks/WebhookRepo.js"
import { WebhookService } from "./webhooks/WebhookService.js"

/** Rate-limit buckets in Redis when REDIS_URL is set (shared by every instance), else in this instance's memory. */
const RateLimiterLive = Layer.unwrap(
  Effect.gen(function*() {
    const { redis } = yield* AppConfig
    return Option.match(redis.url, {
      onNone: () => RateLimiter.memory,
      onSome: (url) => RateLimiter.redis({ url, keyPrefix: redis.keyPrefix, timeout: redis.timeout })
    })
  })
)

/**
 * The credentials vault over its master key (which refuses to start when missing in production).
 * The account services and the national system's adapter share this one instance.
 */
const VaultLive = CredentialVault.layer.pipe(Layer.provideMerge(MasterKeysLive))

/**
 * Tenant account: credentials and billing, over their secrets. The PKCS#12 pool is the very instance
 * `CredentialService.layer` uses (a layer is built once per app), exposed so its load can be read.
 */
const AccountServicesLive = Layer.mergeAll(
  CredentialService.layer,
  Pkcs12Opener.layerConfig,
  BillingService.layer
).pipe(Layer.provideMerge(Layer.merge(VaultLive, PaymentProviderSecretLive)))

/** Background work of the tenant account: credential expiry, and re-wrapping after a master-key rotation. */
const AccountWorkersLive = Layer.merge(ExpiryMonitorLive, MasterKeyRewrapLive)

const ServicesLive = Layer.mergeAll(
  AccountServicesLive,
  DocumentService.layer,
  CorrectionService.layer,
  VoidingService.layer,
  WebhookService.layer,
  AuthService.layer,
  AccountLinks.layer,
  TenantService.layer,
  MemberService.layer,
  InvitationAcceptanceService.layer.pipe(Layer.provideMerge(InvitationService.layer)),
  // Tax id ownership and the audit log, for handlers and tests too (the operator command builds its own).
  TaxIdOwnership.layer,
  AuditLog.layer,
  KeyService.layer,
  ExposureMonitor.layer,
  RateLimiterLive,
  Readiness.layer
).pipe(
  // The auth module's side of the tenants' port, for every service that reads users through it.
  Layer.provideMerge(UserDirectoryLive)
)

const HandlersLive = Layer.mergeAll(
  AuthHttpLive,
  InvitationAcceptanceHttpLive,
  TenantsHttpLive,
  InvitationsHttpLive,
  KeysHttpLive,
  DocumentsHttpLive,
  SubstitutionHttpLive,
  CorrectionsHttpLive,
  VoidingHttpLive,
  DocumentFilesHttpLive,
  UsageHttpLive,
  WebhooksHttpLive,
  CredentialsHttpLive,
  BillingHttpLive,
  SystemHttpLive
)

/** The contract's routes, `/openapi.json`, the reference page, and the dashboard at `/`. */
const RoutesLive = Layer.mergeAll(
  HttpApiBuilder.layer(ApiDocument, { openapiPath: "/openapi.json" }).pipe(
    Layer.provide(HandlersLive),
    Layer.provide([AuthenticationLive, ApiErrorsLive])
  ),
  referencePageLayer(ApiDocument, "/docs"),
  serverMiddleware(Api),
  MetricsRouteLive,
  DashboardFilesLive
)

/**
 * The HTTP API on whatever `HttpServer` is provided. The framework's per-request log line is off:
 * it cost a third of the throughput, and the service logs what an SRE needs itself. The body
 * limit is in the context every request starts from.
 */
const HttpLive = HttpRouter.serve(RoutesLive, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provide([BuiltInTracerDisabled, MaxBodySizeLive])
)

/**
 * Background work: the issuance workers, the idempotency-key purge, the webhook dispatcher, the mail
 * sender and the state authorizers' status checks.
 */
const WorkersLive = Layer.mergeAll(
  IssuanceWorkersLive.pipe(Layer.provide([DocumentRepo.layer, IssuanceQueue.layer])),
  IdempotencyPurgeLive.pipe(Layer.provide(Idempotency.layer)),
  WebhookDispatcherLive.pipe(Layer.provide([WebhookRepo.layer, DeliveryQueue.layer])),
  MailSenderLive.pipe(Layer.provide([MailTransportLive, NoteMailSourceLive])),
  AuthorizerMonitorLive
)

/**
 * The whole application for a given configuration; the caller provides the HTTP server. The logger is installed first so
 * every fiber, including background workers, writes through the token guard.
 */
export const makeApp = (
  config: Layer.Layer<AppConfig>,
  sql: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError.SqlError, AppConfig> = SqlLive,
  authorities: Layer.Layer<
    TaxAuthorities,
    never,
    SqlClient.SqlClient | CredentialVault | AppConfig
  > = TaxAuthoritiesLive,
  goodsAuthorities: Layer.Layer<
    GoodsAuthorities,
    never,
    SqlClient.SqlClient | CredentialVault | AppConfig
  > = GoodsAuthoritiesLive
) =>
  Layer.mergeAll(HttpLive, WorkersLive, AccountWorkersLive, MetricsServerLive).pipe(
    Layer.provideMerge(ServicesLive),
    Layer.provideMerge(OutboxLive),
    Layer.provideMerge(EventLogLive),
    Layer.provideMerge(Layer.merge(authorities, goodsAuthorities).pipe(Layer.provide(VaultLive))),
    Layer.provideMerge(Transaction.layer),
    Layer.provideMerge(Layer.provideMerge(MigrationsLive, sql)),
    Layer.provideMerge(TraceSamplerLive),
    Layer.provideMerge(LoggerLive),
    Layer.provide(TracingLive),
    Layer.provideMerge(ExposureReports.layer),
    Layer.provideMerge(config)
  )
