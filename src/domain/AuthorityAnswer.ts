/**
 * What the authority said to a request answered in its own call (a correction letter, a number
 * voiding): `registered` with its protocol (null when the registration was found, not made), or
 * `refused` with the authority's code and message.
 */
export type AuthorityAnswer =
  | { readonly status: "registered"; readonly protocol: string | null; readonly registeredAt: Date }
  | { readonly status: "refused"; readonly error: { readonly code: string; readonly message: string } }
