/**
 * The access key (chave de acesso) of an NF-e or NFC-e: 44 characters, the last a mod-11 check
 * digit. Unlike the NFS-e's, the key keeps an alphanumeric CNPJ as it is (the schema's `TChNFe`
 * takes `[0-9A-Z]` in those 12 places), each character weighing `charCode - 48` in the check digit.
 */
import { createHash } from "node:crypto"
import { normalizeTaxId } from "../../domain/TaxId.js"
import { accessKeyCheckDigit } from "../sefin/AccessKey.js"

/** The model of a goods invoice: 55 NF-e, 65 NFC-e. */
export type NfeModel = "55" | "65"

/** How the note is issued (tpEmis): 1 normal, 9 NFC-e offline contingency. */
export type EmissionType = "1" | "9"

export interface NfeKeyParts {
  /** The emitter's state, as its IBGE code (cUF, 2 digits). */
  readonly stateCode: string
  /** When the note is issued; the key carries its year and month (AAMM) in Brasília. */
  readonly yearMonth: string
  /** The emitter's CNPJ (14 characters) or CPF (11 digits, left-padded with zeros in the key). */
  readonly issuerTaxId: string
  readonly model: NfeModel
  readonly series: number
  readonly number: number
  readonly emissionType: EmissionType
  /** The 8-digit numeric code (cNF); see `numericCodeOf`. */
  readonly numericCode: string
}

export const ACCESS_KEY_PATTERN = /^[0-9]{6}[0-9A-Z]{12}[0-9]{26}$/

/** cUF + AAMM + CNPJ/CPF + mod + serie + nNF + tpEmis + cNF, then cDV. */
export const nfeAccessKey = (parts: NfeKeyParts): string => {
  const body = parts.stateCode +
    parts.yearMonth +
    normalizeTaxId(parts.issuerTaxId).padStart(14, "0") +
    parts.model +
    String(parts.series).padStart(3, "0") +
    String(parts.number).padStart(9, "0") +
    parts.emissionType +
    parts.numericCode
  const key = body + String(accessKeyCheckDigit(body))
  if (!ACCESS_KEY_PATTERN.test(key)) {
    // Every part is fixed-width and checked by the payload's schema: only a programming error gets here.
    throw new Error(`an NF-e access key must be 44 characters of the layout, got ${key.length}`)
  }
  return key
}

/** The check digit (cDV) of a 44-character key: its last character. */
export const checkDigitOf = (accessKey: string): string => accessKey.slice(-1)

/** Whether a 44-character key's check digit is right. */
export const isValidNfeAccessKey = (accessKey: string): boolean =>
  ACCESS_KEY_PATTERN.test(accessKey) && String(accessKeyCheckDigit(accessKey.slice(0, 43))) === accessKey.slice(43)

/**
 * Codes the authorities refuse as too easy to guess (rejection 897, NT 2019.001): one digit eight
 * times, and the ascending runs 12345678 … 01234567.
 */
const GUESSABLE_CODES: ReadonlySet<string> = new Set([
  ...Array.from({ length: 10 }, (_, d) => String(d).repeat(8)),
  ...Array.from({ length: 10 }, (_, d) => Array.from({ length: 8 }, (_, i) => String((d + i) % 10)).join(""))
])

/** Whether the authorities refuse a numeric code (897): a guessable one, or the note's own number. */
export const isRefusedNumericCode = (code: string, number: number): boolean =>
  GUESSABLE_CODES.has(code) || Number(code) === number

/**
 * The numeric code (cNF) of a document: 8 digits drawn from a hash of its id, so that every attempt
 * of one document builds the same access key (a retry after a timeout is reconciled by that key,
 * never issued as a second note), and a key cannot be guessed from the emitter, series and number
 * alone (the document id carries random bits). Never the note's own number (rejection 897) nor an
 * easily guessed code.
 */
export const numericCodeOf = (documentId: string, number: number): string => {
  for (let round = 0;; round++) {
    const digest = createHash("sha256").update(`${documentId}:${round}`).digest()
    const code = String(digest.readUInt32BE(0) % 100_000_000).padStart(8, "0")
    if (!isRefusedNumericCode(code, number)) return code
  }
}

/**
 * What a key begins with before the note's number: cUF + AAMM + CNPJ/CPF + mod + serie, 25
 * characters. With the 9-digit number after it, the part of the key that names a note (who, which
 * model, series and number, which month): a goods document's submission id.
 */
export const keyPrefixOf = (parts: Pick<NfeKeyParts, "stateCode" | "yearMonth" | "issuerTaxId" | "model" | "series">) =>
  parts.stateCode + parts.yearMonth + normalizeTaxId(parts.issuerTaxId).padStart(14, "0") + parts.model +
  String(parts.series).padStart(3, "0")
