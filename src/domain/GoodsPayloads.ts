/**
 * The API's goods payloads (`POST …/documents`), one per type: a single literal `type` lets the
 * union of payloads pick its member by the type alone, so a body's issues are those of the document
 * it says it is. Their fields are GoodsInvoice.ts's.
 */
import { Schema } from "effect"
import { consumerInvoiceExample, productInvoiceExample } from "./GoodsExamples.js"
import { numberingFields, saleFields } from "./GoodsInvoice.js"

export const NewProductInvoice = Schema.Struct({
  type: Schema.Literal("product_invoice").annotate({
    description: "A product invoice, NF-e (model 55): for any buyer, a company or a person."
  }),
  ...numberingFields,
  ...saleFields
}).annotate({
  identifier: "NewProductInvoice",
  description: "An NF-e (model 55) to issue: the sale (recipient, items and their taxes, freight, payments); the " +
    "emitter is the tenant's registration. The example is an emitter's in São Paulo.",
  examples: [productInvoiceExample]
})

export const NewConsumerInvoice = Schema.Struct({
  type: Schema.Literal("consumer_invoice").annotate({
    description: "A consumer invoice, NFC-e (model 65): a retail sale to a consumer at the counter or delivered."
  }),
  ...numberingFields,
  ...saleFields
}).annotate({
  identifier: "NewConsumerInvoice",
  description: "An NFC-e (model 65) to issue: the sale to a final consumer (who may stay unnamed), its items and " +
    "payments; the emitter is the tenant's registration. The example is an emitter's in São Paulo.",
  examples: [consumerInvoiceExample]
})
