/**
 * Brazilian taxpayer ids (CPF for people, CNPJ for companies) and IBGE municipality codes.
 *
 * CNPJ: from July 2026 the Receita Federal also issues alphanumeric CNPJs (IN RFB 2.229/2024):
 * the 12-character root + branch may contain [0-9A-Z], the 2 check digits stay numeric. The check
 * digits use the same mod-11 weights as before, with every character valued at
 * `charCode - 48`, so numeric CNPJs keep validating exactly as they always did.
 *
 * All ids are stored and emitted normalized (no punctuation, upper-case) so that equality,
 * uniqueness constraints and the tax-authority XML never depend on how a client typed them.
 */
import * as Schema from "effect/Schema"
import { normalizedString } from "./Normalized.js"

// Clients paste ids formatted as printed on documents ("123.456.789-09", "12.345.678/0001-95").
const SEPARATORS = /[./\-\s]/g

export const normalizeTaxId = (s: string): string => s.replace(SEPARATORS, "").toUpperCase()

const CPF_SHAPE = /^[0-9]{11}$/
const CNPJ_SHAPE = /^[0-9A-Z]{12}[0-9]{2}$/

const CPF_WEIGHTS_1 = [10, 9, 8, 7, 6, 5, 4, 3, 2] as const
const CPF_WEIGHTS_2 = [11, 10, 9, 8, 7, 6, 5, 4, 3, 2] as const
const CNPJ_WEIGHTS_1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] as const
const CNPJ_WEIGHTS_2 = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] as const

const charValue = (c: string): number => c.charCodeAt(0) - 48

const mod11Digit = (chars: string, weights: ReadonlyArray<number>): number => {
  let sum = 0
  for (let i = 0; i < weights.length; i++) {
    sum += charValue(chars[i]!) * weights[i]!
  }
  const r = sum % 11
  return r < 2 ? 0 : 11 - r
}

// Same-character sequences (000.000.000-00, 00.000.000/0000-00, ...) satisfy or nearly satisfy
// the mod-11 rule but are placeholders, never real registrations.
const isRepeated = (s: string): boolean => s.split("").every((c) => c === s[0])

const isValidNormalizedCpf = (d: string): boolean =>
  CPF_SHAPE.test(d) &&
  !isRepeated(d) &&
  mod11Digit(d, CPF_WEIGHTS_1) === charValue(d[9]!) &&
  mod11Digit(d, CPF_WEIGHTS_2) === charValue(d[10]!)

const isValidNormalizedCnpj = (d: string): boolean =>
  CNPJ_SHAPE.test(d) &&
  !isRepeated(d) &&
  mod11Digit(d, CNPJ_WEIGHTS_1) === charValue(d[12]!) &&
  mod11Digit(d, CNPJ_WEIGHTS_2) === charValue(d[13]!)

export const isValidCpf = (s: string): boolean => isValidNormalizedCpf(normalizeTaxId(s))

export const isValidCnpj = (s: string): boolean => isValidNormalizedCnpj(normalizeTaxId(s))

export const isValidTaxId = (s: string): boolean => {
  const n = normalizeTaxId(s)
  return isValidNormalizedCpf(n) || isValidNormalizedCnpj(n)
}

/** Which kind of id a (valid) tax id is; the NFS-e XML uses different elements for each. */
export const taxIdKind = (s: string): "cpf" | "cnpj" | undefined => {
  const n = normalizeTaxId(s)
  if (isValidNormalizedCpf(n)) return "cpf"
  if (isValidNormalizedCnpj(n)) return "cnpj"
  return undefined
}

// ---------------------------------------------------------------------------------------------
// Schemas
//
// Shape: String --(normalize)--> String.filter.brand. The OpenAPI generator documents the encoded
// (`from`) side, so that side carries the description, examples and a pattern describing what a
// client may send; the decoded side carries the strict pattern of the normalized value.
// ---------------------------------------------------------------------------------------------

// Anything outside this character set can never normalize into a valid id.
const RAW_PATTERN = "^[0-9A-Za-z./ -]+$"

export const CPF_MESSAGE = "must be a valid CPF (11 digits) with correct check digits"
export const CNPJ_MESSAGE = "must be a valid CNPJ (14 characters) with correct check digits"
export const TAX_ID_MESSAGE = "tax_id must be a valid CPF (11 digits) or CNPJ (14 characters) with correct check digits"

const rawInput = (description: string, examples: ReadonlyArray<string>) =>
  Schema.String.annotate({ description, examples: [...examples] }).check(
    // Documents the raw shape only; the check digits are enforced after normalization.
    Schema.makeFilter(() => true, { toJsonSchema: () => ({ pattern: RAW_PATTERN, minLength: 11 }) })
  )

// No brands: these schemas type request payloads, and the typed client should take plain strings,
// formatted or not: it normalizes before checking, as the server does (see Normalized.ts).
const normalizing = (
  from: Schema.String,
  isValid: (s: string) => boolean,
  annotations: { readonly message: string; readonly pattern: string; readonly description: string }
) =>
  normalizedString(
    normalizeTaxId,
    Schema.String.check(Schema.makeFilter(isValid, { message: annotations.message })),
    {
      raw: from,
      // Decoding always yields the normalized form: the decoded side documents it (checking nothing,
      // since the client encodes from that side and may hold a formatted id).
      decoded: Schema.String.check(
        Schema.makeFilter(() => true, {
          description: annotations.description,
          toJsonSchema: () => ({ pattern: annotations.pattern })
        })
      )
    }
  )

const CpfNormalized = {
  message: CPF_MESSAGE,
  pattern: "^[0-9]{11}$",
  description: "CPF, 11 digits"
}

const CnpjNormalized = {
  message: CNPJ_MESSAGE,
  pattern: "^[0-9A-Z]{12}[0-9]{2}$",
  description: "CNPJ, 14 characters without punctuation"
}

const TaxIdNormalized = {
  message: TAX_ID_MESSAGE,
  pattern: "^([0-9]{11}|[0-9A-Z]{12}[0-9]{2})$",
  description: "CPF (11 digits) or CNPJ (14 characters), without punctuation"
}

/** CPF; decoding accepts punctuation and yields the 11 digits. */
export const Cpf = normalizing(
  rawInput("CPF (11 digits, punctuation optional); stored and returned as digits only", [
    "52998224725",
    "529.982.247-25"
  ]),
  isValidNormalizedCpf,
  CpfNormalized
)
export type Cpf = typeof Cpf.Type

/** CNPJ, numeric or alphanumeric; decoding strips punctuation and upper-cases. */
export const Cnpj = normalizing(
  rawInput(
    "CNPJ (14 characters: 12 of [0-9A-Z] then 2 check digits; punctuation optional); " +
      "stored and returned without punctuation, upper-case",
    ["11222333000181", "11.222.333/0001-81", "12ABC34501DE35"]
  ),
  isValidNormalizedCnpj,
  CnpjNormalized
)
export type Cnpj = typeof Cnpj.Type

/** CPF or CNPJ, validated with check digits; decoding normalizes. */
export const TaxId = normalizing(
  rawInput(
    "CPF (11 digits) or CNPJ (14 characters, alphanumeric CNPJs accepted), validated with " +
      "check digits; punctuation optional, stored and returned normalized (no punctuation, upper-case)",
    ["11222333000181", "11.222.333/0001-81", "529.982.247-25", "12ABC34501DE35"]
  ),
  (s) => isValidNormalizedCpf(s) || isValidNormalizedCnpj(s),
  TaxIdNormalized
)
export type TaxId = typeof TaxId.Type

/**
 * IBGE municipality code: 7 digits. Only the format is checked: the IBGE 7th-digit check has
 * historical exceptions for a few real municipalities, and the authority rejects unknown codes.
 */
export const MunicipalityCode = Schema.String.check(
  Schema.isPattern(/^[0-9]{7}$/u, { message: "municipality_code must be a 7-digit IBGE municipality code" })
).annotate({ description: "7-digit IBGE municipality code", examples: ["3550308", "3304557"] })
export type MunicipalityCode = typeof MunicipalityCode.Type
