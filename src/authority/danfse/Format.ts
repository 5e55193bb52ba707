/**
 * How the DANFSe writes what the NFS-e says, in pt-BR: amounts and rates regrouped from the XML's
 * decimal strings, dates and times as the authority wrote them, tax ids, postal codes, phones,
 * the national service codes, addresses. A value the note does not have prints as `EMPTY`.
 *
 * And `printable`: the text the standard PDF fonts can draw.
 */
import { isValidCnpj, isValidCpf, normalizeTaxId } from "../../domain/TaxId.js"
import type { DanfseAddress } from "./DanfseData.js"

export const EMPTY = "-"

export const present = (s: string | undefined | null): s is string => s !== undefined && s !== null && s.trim() !== ""

/** "1500.00" → "1.500,00": decimal strings are regrouped as text, never through floats. */
const formatDecimal = (raw: string): string | null => {
  const match = /^\s*(-?)(\d+)(?:\.(\d+))?\s*$/.exec(raw)
  if (match === null) return null
  const [, sign, integer, fraction = ""] = match
  const digits = integer!.replace(/^0+(?=\d)/, "")
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ".")
  return `${sign}${grouped},${fraction.padEnd(2, "0")}`
}

export const formatMoney = (raw: string | undefined): string => {
  if (!present(raw)) return EMPTY
  const decimal = formatDecimal(raw)
  return decimal === null ? raw : `R$ ${decimal}`
}

export const formatRate = (raw: string | undefined): string => {
  if (!present(raw)) return EMPTY
  const decimal = formatDecimal(raw)
  return decimal === null ? raw : `${decimal}%`
}

/** "2026-01-15T19:43:39-03:00" → "15/01/2026 19:43:39", the wall-clock time the authority wrote. */
export const formatDateTime = (raw: string): string => {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})/.exec(raw)
  return match === null ? raw : `${match[3]}/${match[2]}/${match[1]} ${match[4]}:${match[5]}:${match[6]}`
}

export const formatDate = (raw: string): string => {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(raw)
  return match === null ? raw : `${match[3]}/${match[2]}/${match[1]}`
}

/**
 * CNPJ "00.000.000/0000-00" (alphanumeric ones too: 12 characters [0-9A-Z] + 2 digits), CPF
 * "000.000.000-00". Only ids whose check digits hold get the punctuation: a foreign NIF can have
 * the shape of a CNPJ once its own punctuation is stripped, and is printed as given.
 */
export const formatTaxId = (raw: string | undefined): string => {
  if (!present(raw)) return EMPTY
  const id = normalizeTaxId(raw.trim())
  if (isValidCnpj(id)) return `${id.slice(0, 2)}.${id.slice(2, 5)}.${id.slice(5, 8)}/${id.slice(8, 12)}-${id.slice(12)}`
  if (isValidCpf(id)) return `${id.slice(0, 3)}.${id.slice(3, 6)}.${id.slice(6, 9)}-${id.slice(9)}`
  return raw.trim()
}

/** The 50-digit key in groups of four, as printed documents show keys to be read aloud. */
export const groupAccessKey = (key: string): string => key.replace(/(.{4})(?=.)/g, "$1 ")

export const formatPostalCode = (raw: string | undefined): string => {
  if (!present(raw)) return EMPTY
  const digits = raw.replace(/\D/g, "")
  return digits.length === 8 ? `${digits.slice(0, 5)}-${digits.slice(5)}` : raw.trim()
}

export const formatPhone = (raw: string | undefined): string => {
  if (!present(raw)) return EMPTY
  const digits = raw.replace(/\D/g, "")
  if (digits.length === 10) return `(${digits.slice(0, 2)}) ${digits.slice(2, 6)}-${digits.slice(6)}`
  if (digits.length === 11) return `(${digits.slice(0, 2)}) ${digits.slice(2, 7)}-${digits.slice(7)}`
  return raw.trim()
}

/** cTribNac "040303" → "04.03.03" (item, subitem, desdobro of the national list). */
export const formatServiceCode = (raw: string): string =>
  /^\d{6}$/.test(raw) ? `${raw.slice(0, 2)}.${raw.slice(2, 4)}.${raw.slice(4)}` : raw

/** NBS "123012200" → "1.2301.22.00". */
export const formatNbsCode = (raw: string | undefined): string =>
  !present(raw) ? EMPTY : /^\d{9}$/.test(raw) ? `${raw[0]}.${raw.slice(1, 5)}.${raw.slice(5, 7)}.${raw.slice(7)}` : raw

export const formatStreetLine = (address: DanfseAddress | undefined): string => {
  if (address === undefined) return EMPTY
  const parts = [
    [address.street, address.number].filter(present).join(", "),
    address.complement,
    address.district
  ].filter(present)
  return parts.length === 0 ? EMPTY : parts.join(" - ")
}

export const formatMunicipality = (name: string | undefined, code: string | undefined, state?: string): string => {
  const place = present(name) ? name : present(code) ? code : undefined
  if (place === undefined) return EMPTY
  return present(state) ? `${place} - ${state}` : place
}

// WinAnsiEncoding (the standard fonts' encoding) beyond Latin-1: what it can print in 0x80–0x9F.
const WIN_ANSI_EXTRAS = new Set(Array.from("€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ"))

/**
 * Text the standard fonts can draw: composed accents (NFC), tabs as spaces, control characters
 * dropped, and any character outside WinAnsi (emoji, other scripts) as "?", rather than as the
 * garbage glyphs pdfkit would pick for them.
 */
export const printable = (text: string): string => {
  let out = ""
  for (const char of text.normalize("NFC").replace(/\r\n?/g, "\n").replace(/\t/g, " ")) {
    const code = char.codePointAt(0)!
    if (
      char === "\n" || (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRAS.has(char)
    ) {
      out += char
    } else if (code >= 0x20 && code !== 0x7f && !(code >= 0x80 && code < 0xa0)) {
      out += "?"
    }
  }
  return out
}
