/**
 * The documents list's query (SPEC §6): pagination, the original filters, and the finding filters
 * the dashboard's search uses (the taker by tax id or name, the NFS-e number, the DPS number).
 */
import { Schema, SchemaTransformation } from "effect"
import { omittedFromJsonSchema } from "./Described.js"
import { boundedText, DocumentStatus, Series } from "./Document.js"
import { DocumentType } from "./GoodsDocument.js"
import { IdOf } from "./Ids.js"
import { endingBeforeDescription, oneCursor, PageLimit } from "./Pagination.js"
import { Environment } from "./Principal.js"
import { TaxId } from "./TaxId.js"
import { Timestamp } from "./Time.js"

/** nDPS: 1 to 15 digits, no leading zero (TSNumDPS), given as a query string. */
const DpsNumber = Schema.String.annotate({
  expected: "a string that will be decoded as a number",
  contentMediaType: "application/json",
  contentSchema: { type: "integer", minimum: 1, maximum: 999_999_999_999_999 }
}).check(Schema.isPattern(/^[1-9][0-9]{0,14}$/u, { message: "number must be a DPS number: 1 to 15 digits" }))
  .pipe(Schema.decodeTo(Schema.Number, SchemaTransformation.numberFromString))

const NfseNumber = Schema.String.check(
  Schema.isPattern(/^[1-9][0-9]{0,12}$/u, { message: "nfse_number must have 1 to 13 digits, without leading zeros" })
)

const listDocumentsFields = {
  limit: Schema.optionalKey(PageLimit),
  starting_after: Schema.optionalKey(IdOf("document")),
  ending_before: Schema.optionalKey(IdOf("document").annotate({ description: endingBeforeDescription })),
  status: Schema.optionalKey(DocumentStatus),
  type: Schema.optionalKey(DocumentType.annotate({
    description: "Only documents of this type: `service_invoice` (NFS-e), `product_invoice` (NF-e) or " +
      "`consumer_invoice` (NFC-e)."
  })),
  reference: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(100))),
  created_gte: Schema.optionalKey(Timestamp),
  created_lt: Schema.optionalKey(Timestamp),
  taker_tax_id: Schema.optionalKey(TaxId.annotate({
    description: "Only documents to this taker: a CPF or CNPJ, with or without punctuation (exact match)."
  })),
  taker_name: Schema.optionalKey(
    boundedText(150).check(
      // Accents are ignored, so a text of accents alone would search for nothing and find everything.
      Schema.makeFilter((s) => s.normalize("NFD").replace(/[\u0300-\u036f]/gu, "").trim() !== "", {
        message: "taker_name must hold more than accents",
        ...omittedFromJsonSchema
      })
    ).annotate({
      description: "Only documents whose taker's name contains this text, ignoring case and accents " +
        "(`joao` finds \"João\")."
    })
  ),
  nfse_number: Schema.optionalKey(NfseNumber.annotate({
    description: "Only the note the authority numbered so (`authority.nfse_number`, nNFSe)."
  })),
  number: Schema.optionalKey(DpsNumber.annotate({
    description: "Only documents with this DPS number (`number`, nDPS), in any series unless `series` is given."
  })),
  series: Schema.optionalKey(Series.annotate({ description: "Only documents of this DPS series (`series`)." }))
}

/** The key-scoped list (`/v1/documents`): the key's environment, always. */
export const ListDocumentsParams = Schema.Struct(listDocumentsFields).check(oneCursor)

/** The tenant path's list, which a member's session reads too, and so may narrow to one environment. */
export const ListTenantDocumentsParams = Schema.Struct({
  ...listDocumentsFields,
  environment: Schema.optionalKey(Environment.annotate({
    description: "Only this environment's documents. A member's session sees both environments without it; for an " +
      "API key it narrows the key's own environment, so the other one gives an empty page."
  }))
}).check(oneCursor)
/** What the service's list takes: the tenant path's filters (the shorthand's are the same less `environment`). */
export type ListDocumentsParams = typeof ListTenantDocumentsParams.Type
