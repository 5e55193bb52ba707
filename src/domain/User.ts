/** Users as the API shows them, shared by the auth module (which owns them) and tenants (members). */
import { Schema } from "effect"
import { emailAddress } from "./Email.js"
import { trimmedString } from "./Normalized.js"
import { DateTime } from "./Time.js"

export class PublicUser extends Schema.Class<PublicUser>("User")({
  id: Schema.String.annotate({ examples: ["usr_01m8e314g7v16kd442kfr9mgt7"] }),
  object: Schema.tag("user"),
  email: Schema.String.annotate({ examples: ["ana@example.com"] }),
  name: Schema.NullOr(Schema.String),
  email_verified: Schema.Boolean.annotate({
    description: "Whether the user proved they read the mailbox (a verification or password-reset link). Until " +
      "then they can sign in, but not create live API keys, upload certificates or join tenants."
  }),
  created_at: DateTime
}, { description: "A registered user, as the user and the tenant's members see them." }) {}

// Trimmed before the checks, on the server and in the typed client alike.
export const Email = trimmedString(emailAddress(Schema.String)).annotate({
  description: "An email address.",
  examples: ["ana@example.com"]
})

/** Emails compare case-insensitively; the address is kept as the user typed it. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase()
