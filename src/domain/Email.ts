import { Schema } from "effect"

/** A deliberately loose shape check: the address is proven by delivering to it, not by a regex. */
export const emailAddress = <S extends Schema.String | Schema.Trim>(self: S) =>
  self.check(
    Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/u, { message: "must be an email address" }),
    Schema.isMaxLength(254)
  )
