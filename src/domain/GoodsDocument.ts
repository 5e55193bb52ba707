/**
 * Goods documents as the API shows them (SPEC §6): an NF-e or an NFC-e in the same lifecycle as a
 * service invoice, with its sale as it was asked, the totals the note states and the state
 * authority's answer. `AnyDocument` is what the document endpoints answer: a document of any type,
 * told apart by `type`.
 */
import { Schema } from "effect"
import { CancellationInfo, Document, DocumentStatus, LastError, Rejection } from "./Document.js"
import type { GoodsTotals } from "./GoodsAmounts.js"
import type { IbsCbsTotals } from "./GoodsIbsCbs.js"
import { GoodsInvoiceType, type GoodsIssuer, GoodsSale } from "./GoodsInvoice.js"
import { Centavos } from "./Money.js"
import { Environment } from "./Principal.js"
import { Crt, RegistrationAddress } from "./Registration.js"
import { DateTime } from "./Time.js"

const amount = (element: string) => Centavos.annotate({ description: `Becomes \`ICMSTot/${element}\`.` })

export const GoodsTotalsView = Schema.Struct({
  products: amount("vProd"),
  discount: amount("vDesc"),
  freight: amount("vFrete"),
  insurance: amount("vSeg"),
  other_expenses: amount("vOutro"),
  icms_base: amount("vBC"),
  icms: amount("vICMS"),
  st_base: amount("vBCST").annotate({ description: "The ICMS-ST bases: becomes `ICMSTot/vBCST`." }),
  st: amount("vST").annotate({ description: "The ICMS charged by substitution, part of the total: `ICMSTot/vST`." }),
  ipi: amount("vIPI"),
  pis: amount("vPIS"),
  cofins: amount("vCOFINS"),
  total: amount("vNF").annotate({ description: "What the buyer pays: becomes `ICMSTot/vNF`." }),
  ibs_cbs: Schema.optionalKey(
    Schema.Struct({
      base: Centavos.annotate({ description: "`IBSCBSTot/vBCIBSCBS`: the items' bases." }),
      state_ibs: Centavos.annotate({ description: "`gIBS/gIBSUF/vIBSUF`." }),
      municipal_ibs: Centavos.annotate({ description: "`gIBS/gIBSMun/vIBSMun`." }),
      ibs: Centavos.annotate({ description: "`gIBS/vIBS`." }),
      cbs: Centavos.annotate({ description: "`gCBS/vCBS`." })
    }).annotate({
      description: "The tax reform's totals (`IBSCBSTot`), when an item declares `ibs_cbs`. Not part of `total` in " +
        "2026 (the taxes are charged \"por fora\" from 2027)."
    })
  )
}).annotate({
  identifier: "GoodsTotals",
  description: "The note's totals (`ICMSTot`), in centavos, computed by the service from the items with the national " +
    "rounding."
})
export type GoodsTotalsView = typeof GoodsTotalsView.Type

export const goodsTotalsView = (totals: GoodsTotals, reform?: IbsCbsTotals | undefined): GoodsTotalsView => ({
  products: totals.products,
  discount: totals.discount,
  freight: totals.freight,
  insurance: totals.insurance,
  other_expenses: totals.otherExpenses,
  icms_base: totals.icmsBase,
  icms: totals.icms,
  st_base: totals.stBase,
  st: totals.st,
  ipi: totals.ipi,
  pis: totals.pis,
  cofins: totals.cofins,
  total: totals.total,
  ...(reform === undefined ? {} : {
    ibs_cbs: {
      base: reform.base,
      state_ibs: reform.stateIbs,
      municipal_ibs: reform.municipalIbs,
      ibs: reform.ibs,
      cbs: reform.cbs
    }
  })
})

export const GoodsAuthorityInfo = Schema.Struct({
  access_key: Schema.String.annotate({
    description: "The note's 44-character access key (chave de acesso, `chNFe`).",
    examples: ["35261112345678000195550010000010421234567891"]
  }),
  protocol: Schema.String.annotate({ description: "The authorization protocol (`nProt`)." }),
  authorized_at: DateTime.annotate({ description: "When the authority received the note (`dhRecbto`)." })
}).annotate({
  identifier: "GoodsAuthorityInfo",
  description: "What the state authority gave an authorized goods invoice: its access key and protocol."
})
export type GoodsAuthorityInfo = typeof GoodsAuthorityInfo.Type

/** How long after its emission an NFC-e issued offline must reach the authority (Ajuste SINIEF 19/16: 24 hours). */
export const OFFLINE_TRANSMISSION_HOURS = 24

export const ContingencyInfo = Schema.Struct({
  access_key: Schema.String.annotate({
    description: "The offline note's 44-character access key (its `tpEmis` is 9): the key the QR code and the DANFE " +
      "NFC-e carry, and the one the authority authorizes.",
    examples: ["35261112345678000195650010000010429123456789"]
  }),
  since: DateTime.annotate({ description: "When the service went offline for this note (`dhCont`)." }),
  reason: Schema.String.annotate({ description: "Why (`xJust`)." }),
  transmit_by: DateTime.annotate({
    description:
      `The deadline to transmit it: ${OFFLINE_TRANSMISSION_HOURS} hours after its emission (\`dhEmi\`). The ` +
      "service keeps transmitting until the authority answers, past the deadline too."
  })
}).annotate({
  identifier: "Contingency",
  description:
    "An NFC-e issued in offline contingency (`tpEmis` 9) because the state authority could not be reached: " +
    "valid for the consumer at once, and transmitted by the service for authorization afterwards."
})
export type ContingencyInfo = typeof ContingencyInfo.Type

/**
 * The emitter as the document was accepted: what its note is built from at every attempt, so a
 * retry builds the same access key whatever the tenant changes meanwhile.
 */
export const GoodsIssuerRecord = Schema.Struct({
  taxId: Schema.String,
  legalName: Schema.String,
  tradeName: Schema.NullOr(Schema.String),
  stateRegistration: Schema.String,
  crt: Crt,
  address: RegistrationAddress,
  phone: Schema.NullOr(Schema.String)
})
export const goodsIssuerRecord = (issuer: GoodsIssuer): typeof GoodsIssuerRecord.Type => ({ ...issuer })

/** What a goods document keeps beside the columns every document has. */
export const GoodsContent = Schema.Struct({
  sale: GoodsSale,
  issuer: GoodsIssuerRecord
})
export type GoodsContent = typeof GoodsContent.Type

export class GoodsDocument extends Schema.Class<GoodsDocument>("GoodsDocument")({
  id: Schema.String.annotate({ examples: ["doc_01m8e314reqq8n7ywyftgbkv47"] }),
  object: Schema.tag("document"),
  environment: Environment,
  type: GoodsInvoiceType.annotate({
    description: "`product_invoice`: an NF-e (model 55); `consumer_invoice`: an NFC-e (model 65)."
  }),
  status: DocumentStatus,
  reference: Schema.NullOr(Schema.String),
  series: Schema.String.annotate({ description: "The note's series (`serie`)." }),
  number: Schema.Int.annotate({ description: "The note's number in its series (`nNF`).", examples: [1042] }),
  issue_date: Schema.String.annotate({ description: "The day of emission in Brasília (the date of `dhEmi`)." }),
  ...GoodsSale.fields,
  totals: GoodsTotalsView,
  currency: Schema.Literal("BRL"),
  authority: Schema.NullOr(GoodsAuthorityInfo),
  contingency: Schema.NullOr(ContingencyInfo).annotate({
    description: "Set when the NFC-e was issued offline (status `contingency`, then `authorized` or `rejected` once " +
      "transmitted); null for a note authorized online and for every NF-e."
  }),
  rejection: Schema.NullOr(Rejection),
  cancellation: Schema.NullOr(CancellationInfo).annotate({
    description: "The note's cancellation (event 110111): `reason` became its `xJust`, `protocol` is the event's. " +
      "`reason_code` is kept but not sent (the NF-e's event has none)."
  }),
  attempts: Schema.Int.annotate({ examples: [1] }),
  last_error: Schema.NullOr(LastError),
  created_at: DateTime,
  updated_at: DateTime
}, {
  description: "A goods invoice of the tenant (NF-e or NFC-e): the sale as it was asked, its totals, where it is in " +
    "its lifecycle and the state authority's answer."
}) {}

/** The kinds of document the API issues. */
export const DocumentType = Schema.Literals(["service_invoice", "product_invoice", "consumer_invoice"])
export type DocumentType = typeof DocumentType.Type

/**
 * What a body whose `type` is none of them is told. The payloads' union is told apart by `type`, so
 * such a body matches no member and the failure is the whole body's: the API reports it at `type`.
 */
export const UNKNOWN_DOCUMENT_TYPE = `type must be one of ${DocumentType.literals.join(", ")}`

export const AnyDocument = Schema.Union([Document, GoodsDocument]).annotate({
  identifier: "AnyDocument",
  description: "A document of any type, told apart by `type`: a service invoice (`Document`, NFS-e) or a goods " +
    "invoice (`GoodsDocument`, NF-e or NFC-e)."
})
export type AnyDocument = typeof AnyDocument.Type
