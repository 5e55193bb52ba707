/**
 * The national NFS-e access key (chave de acesso): 50 digits with a mod-11 check digit. Pure
 * functions, so any adapter that issues or checks keys can share them.
 */
import { normalizeTaxId } from "../../domain/TaxId.js"

/** Mod-11 check digit of the access key: weights 2..9 from the right, remainders 0 and 1 give 0. */
export const accessKeyCheckDigit = (digits: string): number => {
  let sum = 0
  let weight = 2
  for (let i = digits.length - 1; i >= 0; i--) {
    sum += (digits.charCodeAt(i) - 48) * weight
    weight = weight === 9 ? 2 : weight + 1
  }
  const remainder = sum % 11
  return remainder < 2 ? 0 : 11 - remainder
}

/**
 * The issuer's registration as the 14 digits of the key. Alphanumeric CNPJs (from July 2026) keep
 * the key numeric: each character is valued `charCode - 48` (as in their check digits) and only the
 * last decimal digit is kept, so digits stay themselves and letters map deterministically
 * (A→7, B→8, …). Lossy, but the key only has to be unique and numeric; the real id travels with the
 * document. A CPF is left-padded with zeros, as the national layout does.
 */
const registrationDigits = (taxId: string): string =>
  Array.from(normalizeTaxId(taxId), (c) => String((c.charCodeAt(0) - 48) % 10)).join("").padStart(14, "0").slice(-14)

const digitsOnly = (s: string) => s.replace(/[^0-9]/g, "")

export interface AccessKeyParts {
  readonly municipalityCode: string
  readonly issuerTaxId: string
  readonly nfseNumber: number
  /** Year and month of issue, "AAMM". */
  readonly yearMonth: string
  /** The 9 random digits (código numérico). */
  readonly randomCode: string
}

/**
 * The national NFS-e access key, 50 digits: cMun (7) + ambiente gerador (1; 2 = the national system,
 * which is what the simulator stands for) + registration type (1 CPF, 2 CNPJ) + registration (14) +
 * NFS-e number (13) + AAMM (4) + random code (9) + check digit (1). The production/homologation
 * distinction (tpAmb) is not part of the key, as in the national layout.
 */
export const buildAccessKey = (parts: AccessKeyParts): string => {
  const normalizedTaxId = normalizeTaxId(parts.issuerTaxId)
  const body = digitsOnly(parts.municipalityCode).padStart(7, "0").slice(-7) +
    "2" +
    (normalizedTaxId.length === 11 ? "1" : "2") +
    registrationDigits(normalizedTaxId) +
    String(parts.nfseNumber).padStart(13, "0").slice(-13) +
    parts.yearMonth +
    parts.randomCode
  const key = body + String(accessKeyCheckDigit(body))
  if (!/^[0-9]{50}$/.test(key)) {
    // Every part above is fixed-width, so this only fires on a programming error.
    throw new Error(`access key of ${key.length} characters, expected 50 digits`)
  }
  return key
}

/** "AAMM" of the issue date (YYYY-MM-DD), falling back to the authorization time. */
export const yearMonthOf = (issueDate: string, fallback: Date): string => {
  const match = /^\d{2}(\d{2})-(\d{2})/.exec(issueDate)
  return match ? `${match[1]}${match[2]}` : fallback.toISOString().slice(2, 7).replace("-", "")
}
