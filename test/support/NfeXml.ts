/**
 * Shared by the NF-e/NFC-e tests: emitters as tenants declare them, realistic sales, and the
 * independent checks with Debian's `xmllint` (schema) and `xmlsec1` (signature).
 */
import { spawnSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { expect } from "vitest"
import { writeCancellationSchemas } from "../../src/authority/sefaz/NfeCancellation.js"
import { writeEventSchemas } from "../../src/authority/sefaz/NfeCorrection.js"
import { writeVoidingSchemas } from "../../src/authority/sefaz/NfeVoiding.js"
import type { NfeInput } from "../../src/authority/sefaz/NfeXml.js"
import { writeNfeSchemas } from "../../src/authority/sefaz/NfeXsd.js"
import { schemaSet } from "../../src/authority/xml/SchemaSet.js"
import type { GoodsInvoiceRequest, GoodsIssuer, GoodsItem } from "../../src/domain/GoodsInvoice.js"

/** A São Paulo distributor in the normal regime (CRT 3). */
export const spIssuer: GoodsIssuer = {
  taxId: "11222333000181",
  legalName: "Distribuidora Paulista de Peças Ltda",
  tradeName: "Peças SP",
  stateRegistration: "110042490114",
  crt: "normal",
  address: {
    street: "Avenida Paulista",
    number: "1578",
    complement: "Conjunto 42",
    district: "Bela Vista",
    municipality_code: "3550308",
    state: "SP",
    postal_code: "01310200"
  },
  phone: "1133334444"
}

/** A Porto Alegre shop in the Simples Nacional (CRT 1): a state served by SVRS's neighbour, its own SEFAZ. */
export const rsSimplesIssuer: GoodsIssuer = {
  taxId: "45997418000153",
  legalName: "Loja Gaúcha de Utilidades ME",
  tradeName: null,
  stateRegistration: "0960123456",
  crt: "simples_nacional",
  address: {
    street: "Rua dos Andradas",
    number: "1001",
    district: "Centro Histórico",
    municipality_code: "4314902",
    state: "RS",
    postal_code: "90020007"
  },
  phone: null
}

export const taxedItem: GoodsItem = {
  code: "FLT-0042",
  description: "Filtro de óleo para motor diesel",
  ncm: "84212300",
  cfop: "6102",
  gtin: "7891234567895",
  unit: "UN",
  quantity: "3",
  unit_amount: 4590,
  discount: 270,
  icms: { origin: 0, cst: "00", rate: "12.00" },
  ipi: { cst: "50", rate: "5.00" },
  pis: { cst: "01", rate: "1.65" },
  cofins: { cst: "01", rate: "7.60" }
}

/** An NF-e from São Paulo to a contributor in Rio de Janeiro (interstate, CFOP 6xxx). */
export const interstateSale: GoodsInvoiceRequest = {
  type: "product_invoice",
  recipient: {
    tax_id: "33000167000101",
    name: "Auto Peças Carioca S.A.",
    state_registration_indicator: "contributor",
    state_registration: "81234567",
    email: "compras@example.com.br",
    address: {
      street: "Rua da Assembleia",
      number: "10",
      complement: "Loja B",
      district: "Centro",
      municipality_code: "3304557",
      state: "RJ",
      postal_code: "20011000"
    }
  },
  items: [
    taxedItem,
    {
      code: "JNT-7",
      description: "Junta de vedação & anel <borracha>",
      ncm: "40169300",
      cfop: "6102",
      unit: "PC",
      quantity: "10.5",
      unit_amount: 333,
      freight: 150,
      icms: { origin: 2, cst: "20", rate: "12.00", base_reduction: "33.33" },
      ipi: { cst: "52" },
      pis: { cst: "07" },
      cofins: { cst: "07" }
    }
  ],
  freight_mode: "issuer",
  payments: [{ method: "bank_slip", amount: 17822, deferred: true }],
  notes: "Pedido 2026/0457. Entrega em 5 dias úteis."
}

/** An NF-e of a Simples shop in Porto Alegre to a consumer there, sold on its site. */
export const simplesSale: GoodsInvoiceRequest = {
  type: "product_invoice",
  final_consumer: true,
  presence: "internet",
  recipient: {
    tax_id: "52998224725",
    name: "Maria da Silva",
    address: {
      street: "Avenida Ipiranga",
      number: "6681",
      district: "Partenon",
      municipality_code: "4314902",
      state: "RS",
      postal_code: "90619900"
    }
  },
  items: [
    {
      code: "CX-1",
      description: "Caixa organizadora 20 L",
      ncm: "39241000",
      cfop: "5102",
      unit: "UN",
      quantity: "2",
      unit_amount: 4990,
      icms: { origin: 0, csosn: "101", credit_rate: "2.56" },
      pis: { cst: "49" },
      cofins: { cst: "49" }
    },
    {
      code: "CX-2",
      description: "Tampa para caixa organizadora",
      ncm: "39241000",
      cfop: "5102",
      unit: "UN",
      quantity: "1",
      unit_amount: 1290,
      icms: { origin: 0, csosn: "102" },
      pis: { cst: "49" },
      cofins: { cst: "49" }
    }
  ],
  freight_mode: "own_issuer",
  payments: [{ method: "pix", amount: 11270 }]
}

/** An NFC-e at a São Paulo counter: fuel priced below the centavo, water, cash with change. */
export const counterSale: GoodsInvoiceRequest = {
  type: "consumer_invoice",
  items: [{
    code: "GAS-C",
    description: "Gasolina comum",
    ncm: "27101259",
    cfop: "5656",
    unit: "L",
    quantity: "40.123",
    unit_amount_decimal: "589.9",
    icms: { origin: 0, cst: "60" },
    pis: { cst: "04" },
    cofins: { cst: "04" }
  }, {
    code: "AGUA-500",
    description: "Água mineral 500 ml",
    ncm: "22011000",
    cfop: "5102",
    gtin: "7894900530001",
    unit: "UN",
    quantity: "2",
    unit_amount: 350,
    icms: { origin: 0, cst: "00", rate: "18.00" },
    pis: { cst: "01", rate: "1.65" },
    cofins: { cst: "01", rate: "7.60" }
  }],
  payments: [{ method: "cash", amount: 25000 }],
  change: 631
}

export const nfeInput = (overrides: Partial<NfeInput> = {}): NfeInput => ({
  environment: "test",
  documentId: "doc_01m8e314reqq8n7ywyftgbkv47",
  request: interstateSale,
  issuer: spIssuer,
  series: 1,
  number: 1042,
  issuedAt: new Date("2026-11-10T14:30:15.123Z"),
  ...overrides
})

/** The 27 states (UF) of Brazil. */
export const BRAZILIAN_STATES = [
  "AC",
  "AL",
  "AM",
  "AP",
  "BA",
  "CE",
  "DF",
  "ES",
  "GO",
  "MA",
  "MG",
  "MS",
  "MT",
  "PA",
  "PB",
  "PE",
  "PI",
  "PR",
  "RJ",
  "RN",
  "RO",
  "RR",
  "RS",
  "SC",
  "SE",
  "SP",
  "TO"
] as const

export const hasXmllint = spawnSync("xmllint", ["--version"]).status === 0
export const hasXmlsec1 = spawnSync("xmlsec1", ["--version"]).status === 0

let schemaDir: string | undefined
let cancellationSchemaDir: string | undefined

/** Runs `xmllint --noout --schema <schemas>/<schemaFile>` on `xml`; ok plus its output. */
export const xmllintNfe = (schemaFile: string, xml: string): { readonly ok: boolean; readonly output: string } => {
  schemaDir ??= writeNfeSchemas(fs.mkdtempSync(path.join(os.tmpdir(), "nfe-xsd-")))
  return xmllintIn(schemaDir, schemaFile, xml)
}

/** The same against the cancellation event's schemas (schemas/nfe-evento-cancelamento-v1.00/). */
let voidingSchemaDir: string | undefined
/** `xmllint --schema` with the voiding's schemas (schemas/nfe-inutilizacao-v4.00/). */
export const xmllintVoiding = (schemaFile: string, xml: string) => {
  voidingSchemaDir ??= writeVoidingSchemas(fs.mkdtempSync(path.join(os.tmpdir(), "nfe-inut-xsd-")))
  return xmllintIn(voidingSchemaDir, schemaFile, xml)
}

let eventSchemaDir: string | undefined
/** `xmllint --schema` with the generic event envelope (schemas/nfe-evento-v1.00/). */
export const xmllintEvent = (schemaFile: string, xml: string) => {
  eventSchemaDir ??= writeEventSchemas(fs.mkdtempSync(path.join(os.tmpdir(), "nfe-evento-xsd-")))
  return xmllintIn(eventSchemaDir, schemaFile, xml)
}

export const xmllintCancellation = (schemaFile: string, xml: string) => {
  cancellationSchemaDir ??= writeCancellationSchemas(fs.mkdtempSync(path.join(os.tmpdir(), "nfe-canc-xsd-")))
  return xmllintIn(cancellationSchemaDir, schemaFile, xml)
}

const xmllintIn = (schemaDir: string, schemaFile: string, xml: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nfe-doc-"))
  const file = path.join(dir, "document.xml")
  fs.writeFileSync(file, xml)
  try {
    const run = spawnSync("xmllint", ["--noout", "--nonet", "--schema", path.join(schemaDir, schemaFile), file], {
      encoding: "utf8"
    })
    return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** xmlsec1's verdict on a signed NF-e document, trusting the given PEM files, `Id` declared an ID of `element`. */
export const xmlsecVerifyNfe = (xml: string, element: string, trusted: ReadonlyArray<string>) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nfe-sig-"))
  try {
    const trust = trusted.flatMap((pem, i) => {
      const file = path.join(dir, `trusted-${i}.pem`)
      fs.writeFileSync(file, pem)
      return ["--trusted-pem", file]
    })
    const file = path.join(dir, "signed.xml")
    fs.writeFileSync(file, xml)
    const run = spawnSync(
      "xmlsec1",
      ["--verify", "--id-attr:Id", `http://www.portalfiscal.inf.br/nfe:${element}`, ...trust, file],
      { encoding: "utf8" }
    )
    return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

export const skippedWithout = (tool: string, present: boolean, title: string, why: string) =>
  present ? title : `${title} [skipped: ${tool} (${why}) is not installed]`

/** Each `.xsd` of `schemas/<folder>/` byte for byte as its SHA256SUMS lists it, and no other. */
export const expectPublishedSchemas = (folder: string, directoryVariable: string) => {
  const dir = schemaSet({ folder, directoryVariable, virtualBase: "unused:///", entries: {}, namespace: "" })
    .directory()
  const sums = fs.readFileSync(path.join(dir, "SHA256SUMS"), "utf8").trim().split("\n").map((line) => line.split(/\s+/))
  expect(sums.map(([, name]) => name).sort()).toEqual(fs.readdirSync(dir).filter((f) => f.endsWith(".xsd")).sort())
  for (const [sum, name] of sums) {
    expect(crypto.createHash("sha256").update(fs.readFileSync(path.join(dir, name!))).digest("hex"), name).toBe(sum)
  }
}
