/**
 * Who may change a tenant's memberships (SPEC §5), as one rule every member change applies to the
 * caller's role read under the tenant's row lock (`MemberService.lockForChange`). The route's role
 * check ran before the lock: a demotion or removal that commits in between must still count, so
 * the rule is applied again, in full, to the role as it is now.
 */
import { Effect } from "effect"
import { Forbidden } from "../domain/Errors.js"
import type { Role } from "../domain/Principal.js"

/** A change to a tenant's memberships, with what the rule needs to know of it. */
export type MemberChange =
  /** A new member with `role` (an addition, or an accepted invitation made by the caller). */
  | { readonly _tag: "Add"; readonly role: Role }
  /** A member's role from `from` to `to`. */
  | { readonly _tag: "ChangeRole"; readonly from: Role; readonly to: Role }
  /** Removing a member whose role is `role`; `self` when the caller leaves. */
  | { readonly _tag: "Remove"; readonly role: Role; readonly self: boolean }

/** Why `actorRole` may not make `change`, or undefined when it may. */
export const memberChangeRefusal = (actorRole: Role, change: MemberChange): string | undefined => {
  // Every member may leave; whether the tenant keeps an owner is the caller's separate check.
  if (change._tag === "Remove" && change.self) return undefined
  if (actorRole === "developer") {
    return change._tag === "Remove"
      ? "A developer may remove only themselves."
      : "A developer cannot change the tenant's members."
  }
  if (actorRole === "owner") return undefined
  switch (change._tag) {
    case "Add":
      return change.role === "owner" ? "Only an owner can add another owner." : undefined
    case "ChangeRole":
      return change.from === "owner" || change.to === "owner"
        ? "Only an owner can grant or take away the owner role."
        : undefined
    case "Remove":
      return change.role === "owner" ? "Only an owner can remove an owner." : undefined
  }
}

/** `memberChangeRefusal` as an effect: fails with `403 forbidden` naming the reason. */
export const checkMemberChange = (actorRole: Role, change: MemberChange): Effect.Effect<void, Forbidden> => {
  const refusal = memberChangeRefusal(actorRole, change)
  return refusal === undefined ? Effect.void : Effect.fail(new Forbidden({ message: refusal }))
}
