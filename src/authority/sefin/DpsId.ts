/**
 * The DPS id, the national system's name for a submission: what the worker reconciles by, so the
 * same document must always have the same one.
 */
import { normalizeTaxId } from "../../domain/TaxId.js"

export const isCpf = (taxId: string) => taxId.length === 11

/**
 * The DPS id, 45 characters: "DPS" + cLocEmi (7) + registration type (1 CPF, 2 CNPJ) + tax id (14,
 * a CPF left-padded with zeros) + series (5, zero-padded) + nDPS (15, zero-padded). Deterministic,
 * so the same document always has the same id: reconciliation asks `GET /dps/{id}` with it.
 *
 * An alphanumeric CNPJ keeps its letters here; the v1.01 schema's `TSIdDPS` is digits only, so such
 * a DPS does not validate until the national layout accepts them.
 */
export const dpsId = (p: {
  readonly municipalityCode: string
  readonly taxId: string
  readonly series: string
  readonly number: number
}): string => dpsIdPrefix(p) + String(p.number).padStart(dpsNumberWidth, "0")

/** The DPS id without its number: what the database completes when it numbers the document. */
export const dpsIdPrefix = (p: {
  readonly municipalityCode: string
  readonly taxId: string
  readonly series: string
}): string => {
  const taxId = normalizeTaxId(p.taxId)
  return "DPS" + p.municipalityCode + (isCpf(taxId) ? "1" : "2") + taxId.padStart(14, "0") + p.series.padStart(5, "0")
}

/** nDPS: the number, zero-padded to the id's last 15 characters. */
const dpsNumberWidth = 15

/**
 * A document's DPS id before it has a number (the port's submission id pattern): the same for the
 * national system and the simulator, so a document keeps its id when its target changes.
 */
export const dpsIdPattern = (document: {
  readonly issuer: { readonly taxId: string; readonly municipalityCode: string }
  readonly series: string
}): { readonly prefix: string; readonly width: number } => ({
  prefix: dpsIdPrefix({
    municipalityCode: document.issuer.municipalityCode,
    taxId: document.issuer.taxId,
    series: document.series
  }),
  width: dpsNumberWidth
})
