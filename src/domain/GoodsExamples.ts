/**
 * Working examples of goods invoices for `POST …/documents`, shown in the contract (OpenAPI) and
 * issued as they are by the tests (test/documents/GoodsDocuments.test.ts), for an emitter in São
 * Paulo in the normal regime (registration `crt` "normal", with its `state_registration`).
 */

/**
 * An NF-e from São Paulo to a company in Rio de Janeiro (interstate: CFOP 6102): a taxed part (ICMS
 * 12 %, IPI 5 %, PIS/COFINS non-cumulative) with a discount, and a part with a reduced ICMS base
 * (CST 20) and freight; paid by bank slip. vProd 172,67 − discount 2,70 + freight 1,50 + IPI 6,75
 * = vNF 178,22.
 */
export const productInvoiceExample = {
  type: "product_invoice" as const,
  reference: "PED-2026-0457",
  recipient: {
    tax_id: "33000167000101",
    name: "Auto Peças Carioca S.A.",
    state_registration_indicator: "contributor" as const,
    state_registration: "81234567",
    email: "compras@example.com.br",
    address: {
      street: "Rua da Assembleia",
      number: "10",
      complement: "Loja B",
      district: "Centro",
      municipality_code: "3304557",
      state: "RJ" as const,
      postal_code: "20011000"
    }
  },
  items: [
    {
      code: "FLT-OL-01",
      description: "Filtro de óleo automotivo",
      ncm: "84212300",
      cfop: "6102",
      gtin: "7891234567895",
      unit: "UN",
      quantity: "3",
      unit_amount: 4590,
      discount: 270,
      icms: { origin: 0 as const, cst: "00" as const, rate: "12.00" },
      ipi: { cst: "50" as const, rate: "5.00" },
      pis: { cst: "01" as const, rate: "1.65" },
      cofins: { cst: "01" as const, rate: "7.60" }
    },
    {
      code: "JNT-7",
      description: "Junta de vedação e anel de borracha",
      ncm: "40169300",
      cfop: "6102",
      unit: "PC",
      quantity: "10.5",
      unit_amount: 333,
      freight: 150,
      icms: { origin: 2 as const, cst: "20" as const, rate: "12.00", base_reduction: "33.33" },
      ipi: { cst: "52" as const },
      pis: { cst: "07" as const },
      cofins: { cst: "07" as const }
    }
  ],
  freight_mode: "issuer" as const,
  payments: [{ method: "bank_slip" as const, amount: 17822, deferred: true }],
  notes: "Pedido 2026/0457. Entrega em 5 dias úteis."
}

/**
 * An NFC-e at a São Paulo counter to an unnamed consumer: fuel priced below the centavo (ICMS
 * charged before by substitution, CST 60) and bottled water (ICMS 18 %), paid in cash with change.
 */
export const consumerInvoiceExample = {
  type: "consumer_invoice" as const,
  reference: "CAIXA-03-000981",
  items: [
    {
      code: "GAS-C",
      description: "Gasolina comum",
      ncm: "27101259",
      cfop: "5656",
      unit: "L",
      quantity: "40.123",
      unit_amount_decimal: "589.9",
      icms: { origin: 0 as const, cst: "60" as const },
      pis: { cst: "04" as const },
      cofins: { cst: "04" as const }
    },
    {
      code: "AGUA-500",
      description: "Água mineral 500 ml",
      ncm: "22011000",
      cfop: "5102",
      gtin: "7894900530001",
      unit: "UN",
      quantity: "2",
      unit_amount: 350,
      icms: { origin: 0 as const, cst: "00" as const, rate: "18.00" },
      pis: { cst: "01" as const, rate: "1.65" },
      cofins: { cst: "01" as const, rate: "7.60" }
    }
  ],
  payments: [{ method: "cash" as const, amount: 25000 }],
  change: 631
}
