/**
 * Request fields the server normalizes (trims, strips punctuation) before checking them.
 *
 * The typed client *encodes* a payload with the same schema the server decodes it with, and
 * encoding checks the decoded side first. A schema `raw → normalize → checked` therefore makes
 * the client refuse any form the server would have accepted and normalized (" Acme ",
 * "529.982.247-25"). These schemas add a last step, `checked → plain string`, whose encoding
 * normalizes: both directions check the normalized value, so the client accepts every form the
 * server does, sends the normalized one, and the server's decoding is unchanged.
 */
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"

/**
 * `raw` (what the OpenAPI document shows a client may send) → `normalize` → `checked`, with a
 * decoded side any string can be encoded from. Add checks to `checked`, not to the result: checks
 * on the result would run on the caller's value before it is normalized. `decoded` may document
 * what decoding yields (its checks must then accept every string, e.g. a filter used only for its
 * JSON Schema).
 */
export const normalizedString = (
  normalize: (s: string) => string,
  checked: Schema.String,
  options: { readonly raw?: Schema.String; readonly decoded?: Schema.String } = {}
) =>
  (options.raw ?? Schema.String).pipe(
    Schema.decodeTo(checked, SchemaTransformation.transform({ decode: normalize, encode: (s) => s })),
    Schema.decodeTo(
      options.decoded ?? Schema.String,
      SchemaTransformation.transform({ decode: (s) => s, encode: normalize })
    )
  )

const trim = (s: string): string => s.trim()

/** `Schema.Trim.check(...)` that a client may also hand untrimmed text: the text is trimmed, then checked. */
export const trimmedString = (checked: Schema.String) => normalizedString(trim, checked, { raw: Schema.Trim.from })
