/**
 * Shared by the national NFS-e XML tests: a realistic DPS input, and an independent schema check
 * with Debian's `xmllint` against the patched copy of the official XSDs.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildAccessKey } from "../../src/authority/sefin/AccessKey.js"
import type { DpsInput } from "../../src/authority/sefin/Dps.js"
import { writePatchedSchemas } from "../../src/authority/xml/Xsd.js"
import { plainAmounts } from "./amounts.js"

/** A São Paulo software house invoicing a Rio company, as a document would carry it. */
export const realisticDpsInput: DpsInput = {
  tpAmb: 2,
  emittedAt: new Date("2026-11-10T14:30:15.123Z"),
  competence: "2026-11-10",
  series: "1",
  number: 42,
  issuer: { taxId: "11222333000181", municipalityCode: "3550308", simplesNacional: "not_opted" },
  taker: {
    tax_id: "45997418000153",
    name: "Comércio de Peças Ação & Cia Ltda",
    email: "financeiro@example.com.br",
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
    nbsCode: "115022000",
    description: "Suporte técnico em informática, inclusive instalação, configuração e manutenção de programas",
    municipalityCode: "3550308"
  },
  amounts: plainAmounts(150000, "2.00"),
  notes: "Pedido de compra 2026/0457"
}

export const hasXmllint = spawnSync("xmllint", ["--version"]).status === 0

let schemaDir: string | undefined

/** The patched schemas written once per test file into a temporary folder. */
export const patchedSchemaDir = (): string => {
  schemaDir ??= writePatchedSchemas(fs.mkdtempSync(path.join(os.tmpdir(), "nfse-xsd-")))
  return schemaDir
}

/** Runs `xmllint --noout --schema <patched>/<schemaFile> <xml>`; ok plus its stderr. */
export const xmllintValidate = (schemaFile: string, xml: string): { readonly ok: boolean; readonly output: string } => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nfse-doc-"))
  const file = path.join(dir, "document.xml")
  fs.writeFileSync(file, xml)
  try {
    const run = spawnSync("xmllint", [
      "--noout",
      "--nonet",
      "--schema",
      path.join(patchedSchemaDir(), schemaFile),
      file
    ], {
      encoding: "utf8"
    })
    return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** The test's title, saying why it is skipped when xmllint (the independent validator) is missing. */
export const withXmllint = (title: string): string =>
  hasXmllint
    ? title
    : `${title} [skipped: xmllint (Debian package libxml2-utils), the independent XSD validator, is not installed]`

/** A 50-digit access key as the national system would issue it for realisticDpsInput's issuer. */
export const sampleAccessKey = buildAccessKey({
  municipalityCode: "3550308",
  issuerTaxId: "11222333000181",
  nfseNumber: 1234,
  yearMonth: "2611",
  randomCode: "123456789"
})
