/** Shortcuts for HTTP tests: a registered owner with a tenant (its registration complete), and API keys for it. */
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { asId } from "../../src/domain/Ids.js"
import type { Environment, Scope } from "../../src/domain/Principal.js"
import { allScopes } from "../../src/domain/Principal.js"
import { completeRegistration } from "./registration.js"
import { cnpj } from "./taxIds.js"
import { client } from "./TestApp.js"

export { cnpj }

export const PASSWORD = "correct horse battery staple"

export const uniqueEmail = (label = "user") => `${label}-${randomBytes(5).toString("hex")}@example.com`

/**
 * Marks the user's address verified directly in the database, as following the mailed link would:
 * the many tests about other things start from a verified user; the real flow is tested on its own
 * (test/auth/EmailVerification.test.ts).
 */
export const markEmailVerified = (userId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE users SET email_verified_at = now() WHERE id = ${userId}`.pipe(Effect.orDie, Effect.asVoid)
  )

export const registerOwner = (label = "owner") =>
  Effect.gen(function*() {
    const email = uniqueEmail(label)
    const api = yield* client()
    const registration = yield* api.auth.register({
      payload: {
        email,
        password: Redacted.make(PASSWORD),
        name: label,
        tenant: { name: `${label} Ltda`, tax_id: cnpj() }
      }
    })
    yield* markEmailVerified(registration.user.id)
    const login = yield* api.auth.login({ payload: { email, password: Redacted.make(PASSWORD) } })
    // A tenant that declared its registration issues; tests of an incomplete one clear it.
    yield* (yield* client(login.token)).tenants.update({
      params: { tenantId: registration.tenant!.id },
      payload: { registration: completeRegistration }
    })
    // The tenant id as the server's services take it, for tests that call them directly.
    return {
      email,
      userId: registration.user.id,
      tenantId: asId("tenant", registration.tenant!.id),
      session: login.token
    }
  })

export const createKey = (
  owner: { session: string; tenantId: string },
  environment: Environment = "test",
  scopes: ReadonlyArray<Scope> = allScopes
) =>
  Effect.gen(function*() {
    const api = yield* client(owner.session)
    return yield* api.apiKeys.create({
      params: { tenantId: owner.tenantId },
      payload: { name: `${environment} key`, environment, scopes }
    })
  })
