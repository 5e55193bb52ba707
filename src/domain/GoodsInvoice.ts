/**
 * The goods invoices as the API takes them: the NF-e (`product_invoice`, model 55) and the NFC-e
 * (`consumer_invoice`, model 65), in our own snake_case words. Each field's description names the
 * NF-e 4.00 element it becomes (src/authority/sefaz/NfeXml.ts writes them). The emitter is the
 * tenant (its registration: address, state registration, CRT); the request carries the sale.
 *
 * Money is integer centavos as everywhere in the API. A unit price can be finer than a centavo
 * (fuel is priced to the tenth of a centavo): `unit_amount_decimal` then carries it as a decimal
 * string of centavos, as Stripe's prices do. Quantities and rates are decimal strings.
 */
import { Schema } from "effect"
import { described, omittedFromJsonSchema } from "./Described.js"
import { emailAddress } from "./Email.js"
import { GoodsItemIbsCbs } from "./GoodsIbsCbs.js"
import { GoodsRate, Icms } from "./GoodsIcms.js"
import { Centavos } from "./Money.js"
import { type Crt, type RegistrationAddress, Uf } from "./Registration.js"
import { PIS_COFINS_CSTS } from "./TaxContent.js"
import { MunicipalityCode, TaxId } from "./TaxId.js"
import { boundedText } from "./Text.js"

const pattern = (regex: RegExp, message: string) => Schema.String.check(Schema.isPattern(regex, { message }))

/** Up to 11 integer digits and 4 decimals, more than zero (`TDec_1104v`). */
export const Quantity = pattern(
  /^(?:[0-9]{1,11}(?:\.[0-9]{1,4})?)$/u,
  "must be a decimal string with up to 11 integer digits and 4 decimals, e.g. \"2\" or \"1.5\""
).check(
  Schema.makeFilter((s: string) => /[1-9]/u.test(s), { message: "must be more than zero", ...omittedFromJsonSchema })
)

/** Centavos with up to 8 decimals, so the reais the NF-e writes have up to 10 (`TDec_1110v`). */
export const CentavosDecimal = pattern(
  /^[0-9]{1,13}(?:\.[0-9]{1,8})?$/u,
  "must be centavos as a decimal string with up to 8 decimals, e.g. \"589.9\" (R$ 5,899)"
)

export const GoodsInvoiceType = Schema.Literals(["product_invoice", "consumer_invoice"])
export type GoodsInvoiceType = typeof GoodsInvoiceType.Type

/** An address in Brazil, within the NF-e's lengths (`TEndereco`). */
export const GoodsAddress = Schema.Struct({
  street: boundedText(60).pipe(described({ description: "Street (logradouro): becomes `xLgr`." })),
  number: boundedText(60).pipe(described({ description: "Number, or \"S/N\": becomes `nro`." })),
  complement: Schema.optionalKey(boundedText(60).pipe(described({ description: "Becomes `xCpl`." }))),
  district: boundedText(60).pipe(described({ description: "District (bairro): becomes `xBairro`." })),
  municipality_code: MunicipalityCode.annotate({
    description: "The 7-digit IBGE code: becomes `cMun`, and its name `xMun`."
  }),
  state: Uf,
  postal_code: Schema.optionalKey(
    pattern(/^[0-9]{8}$/u, "postal_code must have 8 digits").annotate({
      description: "CEP, 8 digits: becomes `CEP`."
    })
  ),
  phone: Schema.optionalKey(
    pattern(/^[0-9]{6,14}$/u, "phone must have 6 to 14 digits").annotate({
      description: "Digits only: becomes `fone`."
    })
  )
}).annotate({ identifier: "GoodsAddress", description: "An address in Brazil: becomes `enderDest`." })
export type GoodsAddress = typeof GoodsAddress.Type

export const StateRegistrationIndicator = Schema.Literals(["contributor", "exempt", "non_contributor"]).annotate({
  description: "The recipient's standing with the state tax (ICMS): becomes `indIEDest` — `contributor` 1 (has a " +
    "state registration, `state_registration` required), `exempt` 2 (registered, exempt from it), `non_contributor` " +
    "9 (the default; always on an NFC-e)."
})

export const Recipient = Schema.Struct({
  tax_id: Schema.optionalKey(TaxId.pipe(described({
    description: "CPF (11 digits) or CNPJ (14 characters), checked with its check digits: becomes `CPF` or `CNPJ`."
  }))),
  foreign_id: Schema.optionalKey(
    pattern(/^[A-Za-z0-9.:/-]{0,20}$/u, "foreign_id must have up to 20 letters, digits or . : / -").annotate({
      description: "A foreigner's document (passport…), instead of `tax_id`: becomes `idEstrangeiro`."
    })
  ),
  name: Schema.optionalKey(
    boundedText(60).pipe(described({
      description: "Name (razão social), 2 to 60 characters: becomes `xNome`. Required on an NF-e. In homologation " +
        "the note carries the text the authorities require there instead."
    }))
  ),
  state_registration_indicator: Schema.optionalKey(StateRegistrationIndicator),
  state_registration: Schema.optionalKey(
    pattern(/^[0-9]{2,14}$/u, "state_registration must have 2 to 14 digits")
      .annotate({ description: "State registration (IE), digits only: becomes `IE`." })
  ),
  email: Schema.optionalKey(
    emailAddress(Schema.String).check(Schema.isMaxLength(60)).annotate({
      description: "Becomes `email`."
    })
  ),
  address: Schema.optionalKey(GoodsAddress)
}).annotate({
  identifier: "Recipient",
  description: "The buyer (`dest`). Required on an NF-e, with its address; optional on an NFC-e (a consumer " +
    "may give a CPF, or nothing)."
})
export type Recipient = typeof Recipient.Type

export const IPI_TAXED_CSTS = ["00", "49", "50", "99"] as const
export const IPI_UNTAXED_CSTS = ["01", "02", "03", "04", "05", "51", "52", "53", "54", "55"] as const

export const Ipi = Schema.Struct({
  cst: Schema.Literals([...IPI_TAXED_CSTS, ...IPI_UNTAXED_CSTS]).annotate({
    description: "The IPI tax situation (`CST`): 00, 49, 50 and 99 become `IPITrib` (with `rate`), the others " +
      "`IPINT`."
  }),
  rate: Schema.optionalKey(GoodsRate.annotate({
    description: "The IPI rate (`pIPI`), with a taxed CST. The base and the tax are computed."
  })),
  framing_code: Schema.optionalKey(
    pattern(/^[0-9]{3}$/u, "framing_code must have 3 digits").annotate({
      description: "The legal framing code of the IPI (`cEnq`), 3 digits; \"999\" (the default) when none applies."
    })
  )
}).annotate({ identifier: "Ipi", description: "The item's IPI (`IPI`), on an NF-e only." })
export type Ipi = typeof Ipi.Type

export const PIS_COFINS_RATE_CSTS = ["01", "02"] as const
export const PIS_COFINS_UNTAXED_CSTS = ["04", "05", "06", "07", "08", "09"] as const
/** The CSTs of `PISOutr`/`COFINSOutr`: those the national list has from 49 on (the NFS-e's list, TaxContent.ts). */
export const PIS_COFINS_OTHER_CSTS = PIS_COFINS_CSTS.filter((cst) => cst >= "49")

const pisCofins = (tax: "PIS" | "COFINS") =>
  Schema.Struct({
    cst: Schema.Literals([...PIS_COFINS_RATE_CSTS, ...PIS_COFINS_UNTAXED_CSTS, ...PIS_COFINS_OTHER_CSTS]).annotate({
      description: `The ${tax} tax situation (\`CST\`): 01 and 02 become \`${tax}Aliq\` (with \`rate\`), 04–09 ` +
        `\`${tax}NT\`, the others \`${tax}Outr\` (\`rate\` optional, 0 when absent).`
    }),
    rate: Schema.optionalKey(GoodsRate.annotate({ description: `The ${tax} rate (\`p${tax}\`).` })),
    base: Schema.optionalKey(Centavos.annotate({
      description: `The ${tax} base (\`vBC\`) when it is not the item's value (products + freight + insurance + ` +
        "other expenses − discount), e.g. without the ICMS."
    }))
  }).annotate({
    identifier: tax === "PIS" ? "GoodsPis" : "GoodsCofins",
    description: `The item's ${tax} (\`${tax}\`).`
  })

export const GoodsPis = pisCofins("PIS")
export const GoodsCofins = pisCofins("COFINS")
export type PisCofinsTax = typeof GoodsPis.Type

export const GoodsItem = Schema.Struct({
  code: boundedText(60).pipe(described({ description: "The seller's own product code: becomes `cProd`." })),
  description: boundedText(120).pipe(described({ description: "Becomes `xProd`." })),
  ncm: pattern(/^[0-9]{8}$/u, "ncm must have 8 digits").annotate({
    description: "The Mercosur classification (NCM), 8 digits: becomes `NCM`."
  }),
  cest: Schema.optionalKey(
    pattern(/^[0-9]{7}$/u, "cest must have 7 digits").annotate({
      description: "The CEST code of goods under tax substitution: becomes `CEST`."
    })
  ),
  cfop: pattern(/^[5-7][0-9]{3}$/u, "cfop must be an outgoing CFOP: 4 digits starting with 5, 6 or 7").annotate({
    description: "The operation's code (CFOP): 5xxx within the state, 6xxx to another state, 7xxx abroad. " +
      "Becomes `CFOP`."
  }),
  gtin: Schema.optionalKey(
    pattern(/^(?:[0-9]{8}|[0-9]{12,14})$/u, "gtin must have 8, 12, 13 or 14 digits").annotate({
      description: "The barcode (GTIN-8/12/13/14), checked with its check digit: becomes `cEAN` and `cEANTrib`. " +
        "Absent: \"SEM GTIN\"."
    })
  ),
  unit: boundedText(6).pipe(
    described({ description: "Commercial unit (\"UN\", \"KG\", \"L\"): becomes `uCom` and `uTrib`." })
  ),
  quantity: Quantity.annotate({ description: "Becomes `qCom` and `qTrib`." }),
  unit_amount: Schema.optionalKey(Centavos.annotate({
    description: "Unit price in centavos: becomes `vUnCom` and `vUnTrib`. Exactly one of `unit_amount` and " +
      "`unit_amount_decimal`."
  })),
  unit_amount_decimal: Schema.optionalKey(CentavosDecimal.annotate({
    description: "Unit price in centavos with up to 8 decimals, for prices finer than a centavo (\"589.9\" is " +
      "R$ 5,899)."
  })),
  discount: Schema.optionalKey(Centavos.annotate({ description: "Discount on the item: becomes `vDesc`." })),
  freight: Schema.optionalKey(Centavos.annotate({ description: "The item's share of the freight: `vFrete`." })),
  insurance: Schema.optionalKey(Centavos.annotate({ description: "The item's share of the insurance: `vSeg`." })),
  other_expenses: Schema.optionalKey(Centavos.annotate({ description: "Other expenses charged: `vOutro`." })),
  icms: Icms,
  ipi: Schema.optionalKey(Ipi),
  pis: GoodsPis,
  cofins: GoodsCofins,
  ibs_cbs: Schema.optionalKey(GoodsItemIbsCbs),
  additional_information: Schema.optionalKey(
    boundedText(500).pipe(described({
      description: "Printed under the item: becomes `infAdProd`."
    }))
  )
}).annotate({
  identifier: "GoodsItem",
  description: "One line of goods (`det`): the product (`prod`) and its taxes (`imposto`). Its value (`vProd`) is " +
    "`quantity` × the unit price, rounded to the centavo."
})
export type GoodsItem = typeof GoodsItem.Type

export const FreightMode = Schema.Literals([
  "issuer",
  "recipient",
  "third_party",
  "own_issuer",
  "own_recipient",
  "none"
]).annotate({
  description: "Who pays and carries the freight (`modFrete`): `issuer` 0 (CIF), `recipient` 1 (FOB), " +
    "`third_party` 2, `own_issuer` 3, `own_recipient` 4, `none` 9 (the default, and the only one on an NFC-e)."
})

export const PaymentMethod = Schema.Literals([
  "cash",
  "cheque",
  "credit_card",
  "debit_card",
  "store_credit",
  "food_voucher",
  "meal_voucher",
  "gift_voucher",
  "fuel_voucher",
  "bank_slip",
  "bank_deposit",
  "pix",
  "pix_static",
  "transfer",
  "loyalty",
  "none",
  "other"
]).annotate({
  description: "How it was paid (`tPag`): cash 01, cheque 02, credit_card 03, debit_card 04, store_credit 05, " +
    "food_voucher 10, meal_voucher 11, gift_voucher 12, fuel_voucher 13, bank_slip 15, bank_deposit 16, pix 17 " +
    "(dynamic), pix_static 20, transfer 18, loyalty 19, none 90 (no payment, amount 0: NF-e only), other 99 " +
    "(with `description`)."
})
export type PaymentMethod = typeof PaymentMethod.Type

export const Payment = Schema.Struct({
  method: PaymentMethod,
  amount: Centavos.annotate({ description: "Becomes `vPag`." }),
  description: Schema.optionalKey(
    boundedText(60).pipe(described({
      description: "What `other` is: becomes `xPag` (2 to 60 characters)."
    }))
  ),
  deferred: Schema.optionalKey(Schema.Boolean.annotate({
    description: "true: paid later, in instalments or on credit (`indPag` 1); false or absent: paid at once (0)."
  }))
}).annotate({ identifier: "Payment", description: "One payment of the sale (`detPag`)." })
export type Payment = typeof Payment.Type

export const Presence = Schema.Literals([
  "in_person",
  "internet",
  "telephone",
  "home_delivery",
  "in_person_outside",
  "other"
]).annotate({
  description: "How the buyer was there (`indPres`): `in_person` 1 (the default), `internet` 2, `telephone` 3, " +
    "`home_delivery` 4 (NFC-e only), `in_person_outside` 5 (sold outside the premises), `other` 9."
})

/** The sale of a goods invoice: everything but its kind, reference and series (the emitter is the tenant). */
export const saleFields = {
  operation_nature: Schema.optionalKey(
    boundedText(60).pipe(described({
      description: "What the operation is (`natOp`); default \"Venda de mercadoria\"."
    }))
  ),
  presence: Schema.optionalKey(Presence),
  final_consumer: Schema.optionalKey(Schema.Boolean.annotate({
    description: "Whether the buyer is the final consumer (`indFinal`): always true on an NFC-e; default false on " +
      "an NF-e. It puts the IPI into the ICMS base."
  })),
  recipient: Schema.optionalKey(Recipient),
  items: Schema.Array(GoodsItem).check(
    Schema.isMinLength(1, { message: "items must have at least one item" }),
    Schema.isMaxLength(990, { message: "items must have at most 990 items" })
  ).annotate({ description: "The goods sold, 1 to 990 lines (`det`)." }),
  freight_mode: Schema.optionalKey(FreightMode),
  payments: Schema.Array(Payment).check(
    Schema.isMinLength(1, { message: "payments must have at least one payment" }),
    Schema.isMaxLength(100, { message: "payments must have at most 100 payments" })
  ).annotate({
    description: "How the total was paid (`pag/detPag`): the amounts less `change` must add up to the note's total."
  }),
  offline_contingency: Schema.optionalKey(Schema.Boolean.annotate({
    description: "NFC-e only. true: when the state authority cannot be reached, issue the note offline (contingency, " +
      "`tpEmis` 9) at once rather than wait for it, and transmit it afterwards (status `contingency`, event " +
      "`document.contingency`). Default false: the service keeps asking within its retry window."
  })),
  change: Schema.optionalKey(Centavos.annotate({ description: "Change given back (`vTroco`)." })),
  notes: Schema.optionalKey(
    boundedText(5000).pipe(described({
      description: "Additional information printed on the DANFE (`infAdic/infCpl`). In test mode it also carries " +
        "the magic values (`simulate:reject`…)."
    }))
  )
}

export const GoodsSale = Schema.Struct(saleFields).annotate({
  identifier: "GoodsSale",
  description: "The sale of a goods invoice: recipient, items, freight, payments and notes."
})
export type GoodsSale = typeof GoodsSale.Type

export const numberingFields = {
  reference: Schema.optionalKey(
    boundedText(100).pipe(described({
      description: "Your own id of the sale, unique per tenant and environment (across every type of document). " +
        "Not sent to the authority."
    }))
  ),
  series: Schema.optionalKey(
    pattern(/^(?:0|[1-9][0-9]{0,2})$/u, "series must be a number from 0 to 889").check(
      Schema.makeFilter((s: string) => Number(s) <= 889, {
        message: "series must be a number from 0 to 889 (890–999 are the authorities' own)",
        ...omittedFromJsonSchema
      })
    ).annotate({ description: "The series (`serie`), 0 to 889; default \"1\". Each series is numbered apart." })
  )
}

export const GoodsInvoiceRequest = Schema.Struct({
  type: GoodsInvoiceType.annotate({
    description: "`product_invoice`: an NF-e (model 55), for any buyer; `consumer_invoice`: an NFC-e (model 65), " +
      "for a consumer at the counter."
  }),
  ...numberingFields,
  ...saleFields
}).annotate({
  identifier: "GoodsInvoiceRequest",
  description: "A goods invoice to issue: an NF-e (`product_invoice`) or an NFC-e (`consumer_invoice`)."
})

export type GoodsInvoiceRequest = typeof GoodsInvoiceRequest.Type

/** The emitter (`emit`): the tenant, as its registration declares it. */
export interface GoodsIssuer {
  readonly taxId: string
  readonly legalName: string
  readonly tradeName: string | null
  readonly stateRegistration: string
  readonly crt: typeof Crt.Type
  readonly address: RegistrationAddress
  readonly phone: string | null
}
