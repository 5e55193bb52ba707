/** Shortcuts for HTTP tests: a registered owner with a tenant, and API keys for it. */
import { Effect, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import type { Environment, Scope } from "../../src/domain/Principal.js"
import { allScopes } from "../../src/domain/Principal.js"
import { client } from "./TestApp.js"

export const PASSWORD = "correct horse battery staple"

/** Valid CNPJs (check digits computed) so every tenant in a run has its own. */
export const cnpj = (): string => {
  const digits = Array.from(randomBytes(12), (b) => b % 10)
  const check = (base: Array<number>) => {
    const weights = base.length === 12 ? [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] : [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
    const sum = base.reduce((acc, d, i) => acc + d * weights[i]!, 0)
    const rest = sum % 11
    return rest < 2 ? 0 : 11 - rest
  }
  const d1 = check(digits)
  const d2 = check([...digits, d1])
  return [...digits, d1, d2].join("")
}

export const uniqueEmail = (label = "user") => `${label}-${randomBytes(5).toString("hex")}@example.com`

export const registerOwner = (label = "owner") =>
  Effect.gen(function*() {
    const email = uniqueEmail(label)
    const api = yield* client()
    const registration = yield* api.auth.register({
      payload: { email, password: Redacted.make(PASSWORD), name: label, tenant: { name: `${label} Ltda`, tax_id: cnpj() } }
    })
    const login = yield* api.auth.login({ payload: { email, password: Redacted.make(PASSWORD) } })
    return { email, userId: registration.user.id, tenantId: registration.tenant!.id, session: login.token }
  })

export const createKey = (
  owner: { session: string; tenantId: string },
  environment: Environment = "test",
  scopes: ReadonlyArray<Scope> = allScopes
) =>
  Effect.gen(function*() {
    const api = yield* client(owner.session)
    return yield* api.apiKeys.create({
      path: { tenantId: owner.tenantId },
      payload: { name: `${environment} key`, environment, scopes }
    })
  })
