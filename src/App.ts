/**
 * Composition root: configuration, logging, tracing, database, services and the HTTP API.
 * `main.ts` adds the Node HTTP server; tests add `NodeHttpServer.layerTest` instead.
 */
import { HttpApiBuilder, HttpApiScalar, HttpMiddleware } from "@effect/platform"
import { Layer } from "effect"
import { Api } from "./Api.js"
import { AuthHttpLive } from "./auth/Http.js"
import { AuthService } from "./auth/AuthService.js"
import { AppConfig } from "./Config.js"
import { MigrationsLive, SqlLive } from "./db/Database.js"
import type { PgClient } from "@effect/sql-pg"
import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { ApiMiddlewareLive, ServerMiddleware } from "./http/Middleware.js"
import { RateLimiter } from "./http/RateLimiter.js"
import { AuthenticationLive } from "./keys/AuthenticationLive.js"
import { ExposureMonitor, ExposureReports } from "./keys/ExposureMonitor.js"
import { KeysHttpLive } from "./keys/Http.js"
import { TaxAuthoritiesLive } from "./authority/Adapter.js"
import type { TaxAuthorityLive, TaxAuthoritySandbox } from "./authority/TaxAuthority.js"
import { DocumentRepo } from "./documents/DocumentRepo.js"
import { DocumentService, WorkSignal } from "./documents/DocumentService.js"
import { DocumentsHttpLive } from "./documents/Http.js"
import { Idempotency, IdempotencyPurgeLive } from "./documents/Idempotency.js"
import { IssuanceWorkersLive } from "./documents/IssuanceWorker.js"
import { EventLog } from "./events/EventLog.js"
import { KeyService } from "./keys/KeyService.js"
import { SystemHttpLive } from "./system/Http.js"
import { Readiness } from "./system/Readiness.js"
import { LoggerLive } from "./telemetry/Logger.js"
import { TracingLive } from "./telemetry/Tracing.js"
import { TenantsHttpLive } from "./tenants/Http.js"
import { TenantService } from "./tenants/TenantService.js"
import { WebhookDispatcherLive } from "./webhooks/WebhookDispatcher.js"
import { WebhooksHttpLive } from "./webhooks/Http.js"
import { WebhookService } from "./webhooks/WebhookService.js"
import { BillingService, PaymentProviderSecretLive } from "./billing/BillingService.js"
import { BillingHttpLive } from "./billing/Http.js"
import { CredentialService } from "./credentials/CredentialService.js"
import { CredentialVault, MasterKeyRewrapLive, MasterKeysLive } from "./credentials/CredentialVault.js"
import { ExpiryMonitorLive } from "./credentials/ExpiryMonitor.js"
import { CredentialsHttpLive } from "./credentials/Http.js"

/** Tenant account: the credentials vault and billing, over their secrets (which refuse to start when missing in production). */
const AccountServicesLive = Layer.mergeAll(CredentialService.Default, CredentialVault.Default, BillingService.Default).pipe(
  Layer.provideMerge(Layer.merge(MasterKeysLive, PaymentProviderSecretLive))
)

/** Background work of the tenant account: credential expiry, and re-wrapping after a master-key rotation. */
const AccountWorkersLive = Layer.merge(ExpiryMonitorLive.pipe(Layer.provide(EventLog.Default)), MasterKeyRewrapLive)

export const ServicesLive = Layer.mergeAll(
  AccountServicesLive,
  DocumentService.Default,
  WebhookService.Default,
  AuthService.Default,
  TenantService.Default,
  KeyService.Default,
  ExposureMonitor.Default,
  RateLimiter.Default,
  Readiness.Default
)

const HandlersLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([AuthHttpLive, TenantsHttpLive, KeysHttpLive, DocumentsHttpLive, WebhooksHttpLive, CredentialsHttpLive, BillingHttpLive, SystemHttpLive]),
  Layer.provide(AuthenticationLive)
)

/** The HTTP API on whatever `HttpServer` is provided. */
export const HttpLive = HttpApiBuilder.serve(ServerMiddleware).pipe(
  // The reference page is self-contained: the Scalar bundle is served inline and, without its
  // default web fonts, the page makes no request outside this service.
  Layer.provide(HttpApiScalar.layer({ path: "/docs", scalar: { withDefaultFonts: false } })),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" })),
  Layer.provide(ApiMiddlewareLive),
  Layer.provide(HandlersLive),
  // Our own server span (ServerMiddleware) replaces the built-in one, which records full URLs.
  HttpMiddleware.withTracerDisabledWhen(() => true)
)

/**
 * The whole application for a given configuration; the caller provides the HTTP server. The logger is installed first so
 * every fiber, including background workers, writes through the token guard.
 */
/** Background work: the issuance pipeline's workers and the webhook dispatcher. */
export const WorkersLive = Layer.mergeAll(
  IssuanceWorkersLive.pipe(Layer.provide([DocumentRepo.Default, EventLog.Default, WorkSignal.Default])),
  IdempotencyPurgeLive.pipe(Layer.provide(Idempotency.Default)),
  WebhookDispatcherLive
)

export const makeApp = (
  config: Layer.Layer<AppConfig>,
  sql: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError, AppConfig> = SqlLive,
  authorities: Layer.Layer<TaxAuthorityLive | TaxAuthoritySandbox, never, SqlClient.SqlClient> = TaxAuthoritiesLive
) =>
  Layer.mergeAll(HttpLive, WorkersLive, AccountWorkersLive).pipe(
    Layer.provideMerge(ServicesLive),
    Layer.provideMerge(authorities),
    Layer.provideMerge(Layer.provideMerge(MigrationsLive, sql)),
    Layer.provide(LoggerLive),
    Layer.provide(TracingLive),
    Layer.provideMerge(ExposureReports.Default),
    Layer.provideMerge(config)
  )
