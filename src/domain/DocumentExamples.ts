/**
 * Working examples of `POST …/documents` payloads, shown in the contract (OpenAPI) and issued as
 * they are by the tests (test/authority/TaxContent.test.ts), for a provider outside the Simples
 * Nacional (the default regime).
 */

/**
 * A B2B note: R$ 10.000,00 of IT support to a company, R$ 100,00 unconditional discount, ISS
 * (2 %) withheld by the taker; the taker withholds PIS, COFINS and CSLL (`tpRetPisCofins` 3),
 * INSS and IRRF. Base 9.900,00, ISS 198,00. The retentions are the schema's vTotalRet = vRetCP +
 * vRetIRRF + vRetCSLL + the ISS withheld = 1.100 + 150 + 100 + 198 = 1.548,00 (PIS 65,00 and
 * COFINS 300,00 are the provider's contributions due, not counted); net value vLiq = 10.000 - 100 -
 * 1.548 = 8.352,00.
 */
export const b2bWithRetentionsExample = {
  type: "service_invoice" as const,
  reference: "PO-2026-0457",
  taker: {
    tax_id: "45997418000153",
    name: "Comércio de Peças Ação Ltda",
    email: "fiscal@example.com.br",
    address: {
      street: "Avenida Rio Branco",
      number: "156",
      complement: "Sala 1203",
      district: "Centro",
      municipality_code: "3304557",
      state: "RJ",
      postal_code: "20040901"
    }
  },
  service: {
    code: "010701",
    nbs_code: "115022000",
    description: "Suporte técnico em informática, inclusive instalação, configuração e manutenção de programas",
    municipality_code: "3550308"
  },
  amounts: { services: 1_000_000, unconditional_discount: 10_000, iss_rate: "2.00" },
  iss: { withheld_by: "taker" as const },
  federal: {
    pis_cofins: {
      cst: "01" as const,
      base: 1_000_000,
      pis_rate: "0.65",
      cofins_rate: "3.00",
      pis_amount: 6_500,
      cofins_amount: 30_000,
      retention: { pis: true, cofins: true, csll: true }
    },
    inss_withheld: 110_000,
    irrf_withheld: 15_000,
    csll_withheld: 10_000
  },
  approximate_taxes: { rates: { federal: "13.45", state: "0", municipal: "2.00" } }
}

/**
 * An export: software development for a company in the United States, paid in US dollars (BACEN
 * code 220), no ISS on an export (`tribISSQN` 3). Net value = services.
 */
export const exportExample = {
  type: "service_invoice" as const,
  reference: "INV-US-2026-031",
  taker: {
    nif: "94-1234567",
    name: "Acme Software Inc.",
    email: "ap@acme.example",
    foreign_address: {
      country: "US",
      postal_code: "94105",
      city: "San Francisco",
      region: "California",
      street: "Market Street",
      number: "525",
      district: "Financial District"
    }
  },
  service: {
    code: "010101",
    nbs_code: "115013000",
    description: "Análise e desenvolvimento de sistemas sob encomenda",
    municipality_code: "3550308"
  },
  amounts: { services: 2_500_000 },
  iss: { taxation: "export" as const, result_country: "US" },
  foreign_trade: {
    mode: "cross_border" as const,
    relationship: "none" as const,
    currency: "220",
    foreign_amount: 500_000,
    share_with_mdic: true
  }
}
