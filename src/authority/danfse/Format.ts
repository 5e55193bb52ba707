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

/** A decimal amount without a currency ("4000.00" → "4.000,00"), for values in a foreign currency. */
export const formatNumber = (raw: string | undefined): string => !present(raw) ? EMPTY : formatDecimal(raw) ?? raw

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

const BRASILIA_OFFSET_MINUTES = -180

const pad = (n: number) => String(n).padStart(2, "0")

/**
 * "2026-01-15T22:43:39Z" → "15/01/2026 19:43:39": the moment in Brasília time (UTC−3, no daylight
 * saving since 2019), whatever offset the XML wrote it with. Fractions of a second are dropped.
 */
export const formatDateTime = (raw: string): string => {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(Z|[+-]\d{2}:\d{2})?$/.exec(raw.trim())
  if (match === null) return raw
  const [, year, month, day, hour, minute, second, zone] = match
  if (zone === undefined) return `${day}/${month}/${year} ${hour}:${minute}:${second}`
  const offset = zone === "Z"
    ? 0
    : (zone.startsWith("-") ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4)))
  const utc = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second)) -
    offset * 60_000
  const at = new Date(utc + BRASILIA_OFFSET_MINUTES * 60_000)
  return `${pad(at.getUTCDate())}/${pad(at.getUTCMonth() + 1)}/${at.getUTCFullYear()} ` +
    `${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())}:${pad(at.getUTCSeconds())}`
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

/** "São Paulo - SP", or the code when no name is known. */
export const formatMunicipality = (name: string | undefined, code: string | undefined, state?: string): string => {
  const place = present(name) ? name : present(code) ? code : undefined
  if (place === undefined) return EMPTY
  return present(state) ? `${place} - ${state}` : place
}

/** A code and its description, "040303 - Clínicas ...", either alone when the other is absent. */
export const codeAndText = (code: string | undefined, description: string | undefined): string =>
  [code, description].filter(present).join(" - ") || EMPTY

/** What is present of the values, joined by " / ", or "-". */
export const joined = (...values: ReadonlyArray<string | undefined>): string =>
  values.filter((value): value is string => present(value) && value !== EMPTY).join(" / ") || EMPTY

/** The sum of decimal amounts ("12.50" + "3.00" → "15.50"), in centavos, or undefined when none is given. */
export const sumAmounts = (...amounts: ReadonlyArray<string | undefined>): string | undefined => {
  const given = amounts.filter(present).map((amount) => /^(\d+)(?:\.(\d{1,2}))?$/.exec(amount.trim()))
  if (given.length === 0 || given.some((match) => match === null)) return undefined
  const centavos = given.reduce(
    (sum, match) => sum + BigInt(match![1]!) * 100n + BigInt((match![2] ?? "").padEnd(2, "0")),
    0n
  )
  return `${centavos / 100n}.${String(centavos % 100n).padStart(2, "0")}`
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
