/** More shortcuts for HTTP tests: users without a tenant, members with a role, error assertions. */
import { expect } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import type { Role } from "../../src/domain/Principal.js"
import { markEmailVerified, PASSWORD, uniqueEmail } from "./fixtures.js"
import { client } from "./TestApp.js"

/** A registered, logged-in user (address verified) that belongs to no tenant yet. */
export const registerUser = (label = "user") =>
  Effect.gen(function*() {
    const email = uniqueEmail(label)
    const api = yield* client()
    const registration = yield* api.auth.register({
      payload: { email, password: Redacted.make(PASSWORD), name: label }
    })
    yield* markEmailVerified(registration.user.id)
    const login = yield* api.auth.login({ payload: { email, password: Redacted.make(PASSWORD) } })
    return { email, userId: registration.user.id, session: login.token }
  })

/**
 * A new user who joined the owner's tenant with the given role, logged in: the owner invites the
 * address and the user accepts from their own list (signed in, the address verified).
 */
export const addMember = (owner: { session: string; tenantId: string }, role: Role, label: string = role) =>
  Effect.gen(function*() {
    const user = yield* registerUser(label)
    const invitation = yield* (yield* client(owner.session)).invitations.create({
      params: { tenantId: owner.tenantId },
      payload: { email: user.email, role }
    })
    yield* (yield* client(user.session)).invitationAcceptance.acceptMine({ params: { invitationId: invitation.id } })
    return { ...user, tenantId: owner.tenantId }
  })

/** A property of a JSON value, if it is an object that has it. */
export const field = (json: unknown, name: string): unknown =>
  typeof json === "object" && json !== null ? Reflect.get(json, name) : undefined

/** The `code` of an error body, if it has one. */
export const codeOf = (json: unknown): unknown => field(json, "code")

/** Asserts a raw response is the SPEC's error: status, stable code and a human message. */
export const expectError = (
  response: { readonly status: number; readonly json: unknown; readonly text: string },
  status: number,
  code: string
) => {
  expect({ status: response.status, code: codeOf(response.json) }, response.text).toEqual({ status, code })
  expect(typeof field(response.json, "message")).toBe("string")
}
