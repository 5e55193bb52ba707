/**
 * The rules of a goods invoice before anything is taken: the emitter's registration (422, naming
 * the field) and the sale (one 400 naming every field broken), each rule with a request that breaks
 * it alone, so a rule that stopped being checked fails its own case.
 */
import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { goodsIssuerOf } from "../../src/documents/GoodsEmitter.js"
import { checkGoodsInvoice, isValidGtin } from "../../src/documents/GoodsRules.js"
import {
  type GoodsInvoiceRequest,
  GoodsInvoiceRequest as RequestSchema,
  type GoodsIssuer
} from "../../src/domain/GoodsInvoice.js"
import { emptyRegistration, type Registration } from "../../src/domain/Registration.js"
import { counterSale, interstateSale, rsSimplesIssuer, simplesSale, spIssuer, taxedItem } from "../support/NfeXml.js"

const NOW = new Date("2026-11-10T14:30:00Z")

const issuesOfSale = (request: GoodsInvoiceRequest, issuer: GoodsIssuer = spIssuer, at = NOW) => {
  const result = checkGoodsInvoice(request, issuer, at)
  return Result.isFailure(result) ? (result.failure.issues ?? []).map((issue) => issue.path.join(".")) : []
}
const issuesOf = issuesOfSale

/** The request with its first item changed, the others kept. */
const withItem = (changes: Partial<typeof taxedItem>, request: GoodsInvoiceRequest = interstateSale) => ({
  ...request,
  items: request.items.map((item, i) => (i === 0 ? { ...item, ...changes } : item))
})

describe("the emitter's registration", () => {
  const complete: Registration = {
    ...emptyRegistration,
    legal_name: spIssuer.legalName,
    trade_name: "Peças SP",
    state_registration: "110042490114",
    crt: "normal",
    address: spIssuer.address,
    phone: "1133334444"
  }

  it("gives the emitter when everything a goods invoice needs is declared and writable", () => {
    const issuer = Result.getOrThrow(goodsIssuerOf("11222333000181", complete))
    expect(issuer).toEqual({ ...spIssuer })
  })

  it("is 422 registration_incomplete naming each field missing", () => {
    const result = goodsIssuerOf("11222333000181", { ...emptyRegistration, legal_name: "Empresa Ltda" })
    expect(Result.isFailure(result)).toBe(true)
    if (Result.isFailure(result)) {
      expect(result.failure.code).toBe("registration_incomplete")
      expect(result.failure.issues.map((issue) => issue.path.join("."))).toEqual([
        "registration.state_registration",
        "registration.crt",
        "registration.address.street",
        "registration.address.number",
        "registration.address.district",
        "registration.address.municipality_code",
        "registration.address.state",
        "registration.address.postal_code"
      ])
    }
  })

  it("refuses what the NF-e cannot carry: a long name, an IE with dots, a symbol outside Latin-1, a state not the municipality's", () => {
    const cases: ReadonlyArray<readonly [Partial<Registration>, string]> = [
      [{ legal_name: "A".repeat(61) }, "registration.legal_name"],
      [{ state_registration: "110.042.490.114" }, "registration.state_registration"],
      [{ trade_name: "Peças SP ★" }, "registration.trade_name"],
      [{ address: { ...spIssuer.address, state: "RJ" } }, "registration.address.state"],
      [{ address: { ...spIssuer.address, street: "R".repeat(61) } }, "registration.address.street"],
      [{ phone: "551133334444999" }, "registration.phone"]
    ]
    for (const [change, path] of cases) {
      const result = goodsIssuerOf("11222333000181", { ...complete, ...change })
      expect(Result.isFailure(result) && result.failure.issues.map((i) => i.path.join(".")), path).toEqual([path])
    }
    expect(Result.isSuccess(goodsIssuerOf("11222333000181", { ...complete, state_registration: "ISENTO" }))).toBe(true)
  })
})

describe("the sale", () => {
  it("accepts the realistic NF-e, the Simples NF-e and the NFC-e", () => {
    expect(issuesOf(interstateSale)).toEqual([])
    expect(issuesOf(simplesSale, rsSimplesIssuer)).toEqual([])
    expect(issuesOf(counterSale)).toEqual([])
  })

  const cases: ReadonlyArray<readonly [string, GoodsInvoiceRequest, GoodsIssuer, string]> = [
    [
      "a CST from a Simples emitter",
      withItem({ icms: { origin: 0, cst: "41" } }, simplesSale),
      rsSimplesIssuer,
      "items.0.icms.cst"
    ],
    [
      "a CSOSN from a normal-regime emitter",
      withItem({ icms: { origin: 0, csosn: "102" } }),
      spIssuer,
      "items.0.icms.csosn"
    ],
    ["neither CST nor CSOSN", withItem({ icms: { origin: 0 } }), spIssuer, "items.0.icms.cst"],
    ["CST 00 without rate", withItem({ icms: { origin: 0, cst: "00" } }), spIssuer, "items.0.icms.rate"],
    [
      "CST 20 without base_reduction",
      withItem({ icms: { origin: 0, cst: "20", rate: "12" } }),
      spIssuer,
      "items.0.icms.base_reduction"
    ],
    ["a rate with CST 40", withItem({ icms: { origin: 0, cst: "40", rate: "12" } }), spIssuer, "items.0.icms.rate"],
    [
      "a base reduction with CST 90 and no rate",
      withItem({ icms: { origin: 0, cst: "90", base_reduction: "10" } }),
      spIssuer,
      "items.0.icms.base_reduction"
    ],
    [
      "CSOSN 101 without credit_rate",
      withItem({ icms: { origin: 0, csosn: "101" } }, simplesSale),
      rsSimplesIssuer,
      "items.0.icms.credit_rate"
    ],
    [
      "a credit rate with CSOSN 102",
      withItem({ icms: { origin: 0, csosn: "102", credit_rate: "2" } }, simplesSale),
      rsSimplesIssuer,
      "items.0.icms.credit_rate"
    ],
    ["IPI on an NFC-e", withItem({ ipi: { cst: "53" } }, counterSale), spIssuer, "items.0.ipi"],
    [
      "a taxed IPI without rate",
      { ...withItem({ ipi: { cst: "50" } }), payments: [{ method: "bank_slip", amount: 17822 - 675 }] },
      spIssuer,
      "items.0.ipi.rate"
    ],
    ["PIS CST 01 without rate", withItem({ pis: { cst: "01" } }), spIssuer, "items.0.pis.rate"],
    [
      "a COFINS rate with an untaxed CST",
      withItem({ cofins: { cst: "07", rate: "7.6" } }),
      spIssuer,
      "items.0.cofins.rate"
    ],
    ["a discount above the item's value", withItem({ discount: 999_999 }), spIssuer, "items.0.discount"],
    ["a GTIN with a wrong check digit", withItem({ gtin: "7891234567890" }), spIssuer, "items.0.gtin"],
    [
      "both unit_amount and unit_amount_decimal",
      withItem({ unit_amount_decimal: "4590" }),
      spIssuer,
      "items.0.unit_amount"
    ],
    ["a CFOP 5 for goods going to another state", withItem({ cfop: "5102" }), spIssuer, "items.0.cfop"],
    [
      "a CFOP 6 for goods staying in the state",
      withItem({ cfop: "6102" }, simplesSale),
      rsSimplesIssuer,
      "items.0.cfop"
    ],
    ["an NF-e without recipient", { ...interstateSale, recipient: undefined }, spIssuer, "recipient"],
    [
      "an NF-e to a foreign id",
      { ...interstateSale, recipient: { ...interstateSale.recipient!, tax_id: undefined, foreign_id: "X1234567" } },
      spIssuer,
      "recipient.foreign_id"
    ],
    [
      "a contributor without state registration",
      { ...interstateSale, recipient: { ...interstateSale.recipient!, state_registration: undefined } },
      spIssuer,
      "recipient.state_registration"
    ],
    [
      "a sale to a non-contributor not marked final_consumer",
      { ...simplesSale, final_consumer: undefined },
      rsSimplesIssuer,
      "final_consumer"
    ],
    [
      "an NFC-e to a contributor",
      {
        ...counterSale,
        recipient: {
          tax_id: "33000167000101",
          state_registration_indicator: "contributor",
          state_registration: "81234567"
        }
      },
      spIssuer,
      "recipient.state_registration_indicator"
    ],
    ["an NFC-e not to the final consumer", { ...counterSale, final_consumer: false }, spIssuer, "final_consumer"],
    ["an NFC-e sold on the internet", { ...counterSale, presence: "internet" }, spIssuer, "presence"],
    ["an NFC-e with freight at the counter", { ...counterSale, freight_mode: "issuer" }, spIssuer, "freight_mode"],
    ["an NFC-e with a CFOP it does not take", withItem({ cfop: "5933" }, counterSale), spIssuer, "items.0.cfop"],
    ["an NF-e delivered like an NFC-e", { ...interstateSale, presence: "home_delivery" }, spIssuer, "presence"],
    [
      "payments below the total",
      { ...interstateSale, payments: [{ method: "bank_slip", amount: 17800 }] },
      spIssuer,
      "payments"
    ],
    ["change that does not close the sum", { ...counterSale, change: 1600 }, spIssuer, "payments"],
    [
      "no payment on an NFC-e",
      { ...counterSale, payments: [{ method: "none", amount: 0 }], change: undefined },
      spIssuer,
      "payments.0.method"
    ],
    [
      "other without its description",
      { ...counterSale, payments: [{ method: "other", amount: 25000 }] },
      spIssuer,
      "payments.0.description"
    ],
    ["text outside Latin-1", withItem({ description: "Filtro ✓ premium" }), spIssuer, "items.0.description"]
  ]

  for (const [rule, request, issuer, path] of cases) {
    it(`refuses ${rule}, on ${path}`, () => {
      expect(issuesOf(request, issuer)).toEqual([path])
    })
  }

  it("refuses an item or a total beyond the largest amount the API takes, before comparing payments", () => {
    // 99,999,999,999 units at R$ 999.999.999,99: an attacker's product, far beyond the note's 13 digits of reais.
    expect(issuesOf(withItem({ quantity: "99999999999", unit_amount: 99_999_999_999 }))).toEqual(["items.0.quantity"])
    // Each line within the bound, their sum not: 2 × R$ 60 billion.
    const big = { ...taxedItem, quantity: "1", unit_amount: 6_000_000_000_000, discount: 0 }
    expect(issuesOf({ ...interstateSale, items: [big, big] })).toEqual(["items"])
  })

  it("lets an NFC-e delivered home carry freight", () => {
    expect(issuesOf({ ...counterSale, presence: "home_delivery", freight_mode: "issuer" })).toEqual([])
  })

  it("refuses an interstate sale to a consumer: the DIFAL is not computed yet, and says so", () => {
    const result = checkGoodsInvoice(
      {
        ...simplesSale,
        recipient: { ...simplesSale.recipient!, address: { ...interstateSale.recipient!.address!, phone: undefined } },
        items: simplesSale.items.map((item) => ({ ...item, cfop: "6102" }))
      },
      rsSimplesIssuer,
      NOW
    )
    expect(Result.isFailure(result) && result.failure.message).toContain("DIFAL")
  })

  it("takes the IBS/CBS of a normal-regime emitter in 2026; refuses it for the Simples and for a year without published rates", () => {
    const full = { cst: "000", class_code: "000001" } as const
    expect(issuesOf(withItem({ ibs_cbs: full }))).toEqual([])
    expect(issuesOf(withItem({ ibs_cbs: full }, simplesSale), rsSimplesIssuer)).toEqual(["items.0.ibs_cbs"])
    // 2027's CBS rate awaits a Senate resolution.
    expect(issuesOf(withItem({ ibs_cbs: full }), spIssuer, new Date("2027-01-05T12:00:00Z"))).toEqual([
      "items.0.ibs_cbs"
    ])
    // Only full taxation is offered so far: another CST is the payload's 400.
    const reduced = { ...interstateSale, items: [{ ...taxedItem, ibs_cbs: { cst: "200", class_code: "200003" } }] }
    expect(Result.isFailure(Schema.decodeUnknownResult(RequestSchema)(reduced))).toBe(true)
  })

  it("takes ICMS-ST with CST 10 and 70 and CSOSN 201 and 202 only, the Simples naming its own rate, never on an NFC-e", () => {
    const st = { margin: "40.00", rate: "18.00" }
    // The tax it adds changes the total the payments must make: only the ICMS's issues matter here.
    const issuesOf = (...args: Parameters<typeof issuesOfSale>) =>
      issuesOfSale(...args).filter((path) => path.includes("icms"))
    expect(issuesOf(withItem({ icms: { origin: 0, cst: "10", rate: "18.00", st } }))).toEqual([])
    expect(issuesOf(withItem({ icms: { origin: 0, cst: "10", rate: "18.00" } }))).toEqual(["items.0.icms.st"])
    expect(issuesOf(withItem({ icms: { origin: 0, cst: "00", rate: "18.00", st } }))).toEqual(["items.0.icms.st"])
    expect(issuesOf(withItem({ icms: { origin: 0, cst: "70", rate: "18.00", st } }))).toEqual([
      "items.0.icms.base_reduction"
    ])
    expect(issuesOf(withItem({ icms: { origin: 0, cst: "10", rate: "18.00", st: { ...st, own_rate: "12.00" } } })))
      .toEqual(["items.0.icms.st.own_rate"])
    const simplesItem = (icms: (typeof taxedItem)["icms"]) => withItem({ icms }, simplesSale)
    expect(issuesOf(simplesItem({ origin: 0, csosn: "202", st: { ...st, own_rate: "12.00" } }), rsSimplesIssuer))
      .toEqual([])
    expect(issuesOf(simplesItem({ origin: 0, csosn: "202", st }), rsSimplesIssuer)).toEqual([
      "items.0.icms.st.own_rate"
    ])
    expect(issuesOf(simplesItem({ origin: 0, csosn: "203", st }), rsSimplesIssuer)).toEqual([
      "items.0.icms.st.own_rate"
    ])
    // An exempt own operation: the deduction is the request's to name, or none.
    expect(issuesOf(withItem({ icms: { origin: 0, cst: "30", st } }))).toEqual([])
    expect(issuesOf(withItem({ icms: { origin: 0, cst: "30", st: { ...st, own_rate: "12.00" } } }))).toEqual([])
    expect(issuesOf(withItem({ icms: { origin: 0, cst: "30", rate: "18.00", st } }))).toEqual(["items.0.icms.rate"])
    expect(issuesOf(simplesItem({ origin: 0, csosn: "201", st: { ...st, own_rate: "12.00" } }), rsSimplesIssuer))
      .toEqual(["items.0.icms.credit_rate"])
    expect(issuesOf(withItem({ icms: { origin: 0, cst: "10", rate: "18.00", st } }, counterSale))).toEqual([
      "items.0.icms.st"
    ])
  })

  it("reports every broken rule at once, as a 400 whose message names the first", () => {
    const result = checkGoodsInvoice(
      { ...withItem({ cfop: "5102", gtin: "7891234567890", pis: { cst: "01" } }), presence: "home_delivery" },
      spIssuer,
      NOW
    )
    expect(Result.isFailure(result)).toBe(true)
    if (Result.isFailure(result)) {
      expect(result.failure.code).toBe("invalid_request")
      expect(result.failure.issues!.map((issue) => issue.path.join("."))).toEqual([
        "presence",
        "items.0.cfop",
        "items.0.gtin",
        "items.0.pis.rate"
      ])
      expect(result.failure.message).toMatch(/^The document breaks the NF-e rules\. presence: /)
    }
  })
})

describe("the payload's schema", () => {
  const decode = Schema.decodeUnknownResult(RequestSchema)
  const failurePaths = (input: unknown) => {
    const result = decode(input)
    return Result.isFailure(result) ? String(result.failure) : ""
  }

  it("decodes the fixtures as JSON and refuses malformed fields with their own message", () => {
    expect(Result.isSuccess(decode(JSON.parse(JSON.stringify(interstateSale))))).toBe(true)
    expect(failurePaths({ ...interstateSale, series: "890" })).toContain("890–999 are the authorities' own")
    expect(failurePaths(withItem({ ncm: "8421" }))).toContain("ncm must have 8 digits")
    expect(failurePaths(withItem({ cfop: "1102" }))).toContain("cfop must be an outgoing CFOP")
    expect(failurePaths(withItem({ quantity: "0.0000" }))).toContain("must be more than zero")
    expect(failurePaths(withItem({ quantity: "1.23456" }))).toContain("4 decimals")
    expect(failurePaths(withItem({ unit_amount_decimal: "1.123456789" }))).toContain("8 decimals")
    expect(failurePaths({ ...interstateSale, items: [] })).toContain("at least one item")
  })

  it("checks GTINs by the GS1 check digit", () => {
    for (const valid of ["7891234567895", "7894900530001", "96385074", "036000291452", "10012345678902"]) {
      expect(isValidGtin(valid), valid).toBe(true)
    }
    for (const invalid of ["7891234567890", "96385070", "036000291453"]) {
      expect(isValidGtin(invalid), invalid).toBe(false)
    }
  })
})
