/** The taxpayer (CNPJ, or CPF for an e-CPF) an ICP-Brasil certificate was issued to. */
import type forge from "node-forge"
import { commonName } from "./CertificateName.js"
import { otherNames } from "./CertificateOtherNames.js"

/** Keeps only [0-9A-Z], so "12.345.678/0001-95" and "12345678000195" compare equal. */
export const normalizeTaxIdChars = (s: string): string => s.toUpperCase().replace(/[^0-9A-Z]/g, "")

// Alphanumeric CNPJs (from July 2026): 12 characters [0-9A-Z] + 2 numeric check digits.
const CNPJ_SHAPE = /^[0-9A-Z]{12}[0-9]{2}$/
const CPF_SHAPE = /^[0-9]{11}$/
// ICP-Brasil fills fields that do not apply with zeros.
const ALL_ZEROS = /^0+$/

const OID_CNPJ = "2.16.76.1.3.3"
// e-CPF holder data: birth date (8) + CPF (11) + NIS (11) + RG (15) + issuer (6).
const OID_PERSON_DATA = "2.16.76.1.3.1"

const asCnpj = (raw: string): string | null => {
  const n = normalizeTaxIdChars(raw)
  return CNPJ_SHAPE.test(n) && !ALL_ZEROS.test(n) ? n : null
}

const asCpf = (raw: string): string | null => {
  const n = normalizeTaxIdChars(raw)
  return CPF_SHAPE.test(n) && !ALL_ZEROS.test(n) ? n : null
}

/** Normalized; looked up in the SAN CNPJ, the CN suffix, then the e-CPF fields. */
export const extractTaxId = (cert: forge.pki.Certificate): string | null => {
  const others = otherNames(cert)
  for (const [oid, text] of others) {
    if (oid === OID_CNPJ) {
      const cnpj = asCnpj(text)
      if (cnpj !== null) return cnpj
    }
  }
  const cnSuffix = /:\s*([0-9A-Za-z./-]+)\s*$/.exec(commonName(cert) ?? "")?.[1]
  const cnCnpj = cnSuffix === undefined ? null : asCnpj(cnSuffix)
  if (cnCnpj !== null) return cnCnpj
  for (const [oid, text] of others) {
    if (oid === OID_PERSON_DATA) {
      const cpf = asCpf(text.slice(8, 19))
      if (cpf !== null) return cpf
    }
  }
  return cnSuffix === undefined ? null : asCpf(cnSuffix)
}
