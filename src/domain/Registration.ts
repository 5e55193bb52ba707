/**
 * The provider's registration (SPEC §5): what a tenant declares about itself as a taxpayer, and what
 * every document's issuer block is written from. Each field names the national field it becomes.
 * Fields are nullable: a tenant fills them in when it needs them, and a document that needs one it
 * lacks is refused with `422 registration_incomplete` (see `missingForServiceInvoice`).
 */
import { Schema } from "effect"
import { described } from "./Described.js"
import { boundedText } from "./Document.js"
import { emailAddress } from "./Email.js"
import { normalizedString } from "./Normalized.js"
import { MunicipalityCode } from "./TaxId.js"

/** The first two digits of an IBGE municipality code are its state's IBGE code. */
const ufOfIbgePrefix: Readonly<Record<string, string>> = {
  "11": "RO",
  "12": "AC",
  "13": "AM",
  "14": "RR",
  "15": "PA",
  "16": "AP",
  "17": "TO",
  "21": "MA",
  "22": "PI",
  "23": "CE",
  "24": "RN",
  "25": "PB",
  "26": "PE",
  "27": "AL",
  "28": "SE",
  "29": "BA",
  "31": "MG",
  "32": "ES",
  "33": "RJ",
  "35": "SP",
  "41": "PR",
  "42": "SC",
  "43": "RS",
  "50": "MS",
  "51": "MT",
  "52": "GO",
  "53": "DF"
}

/** The UF of an IBGE municipality code; undefined when its first two digits name no state. */
export const ufOfMunicipality = (municipalityCode: string): string | undefined =>
  ufOfIbgePrefix[municipalityCode.slice(0, 2)]

export const Uf = Schema.Literals(Object.values(ufOfIbgePrefix)).annotate({
  description: "The state (UF), two capital letters; it must be the state of `municipality_code`. Becomes `UF`.",
  message: "must be a Brazilian state (UF), e.g. \"SP\""
})

const digitsOf = (s: string) => s.replace(/[\s().+-]/gu, "")

export const RegistrationAddress = Schema.Struct({
  street: boundedText(255).pipe(described({ description: "Street (logradouro). Becomes `xLgr`." })),
  number: boundedText(60).pipe(described({ description: "Number, or \"S/N\". Becomes `nro`." })),
  complement: Schema.optionalKey(
    Schema.NullOr(boundedText(156)).annotate({ description: "Complement. Becomes `xCpl`." })
  ),
  district: boundedText(60).pipe(described({ description: "District (bairro). Becomes `xBairro`." })),
  municipality_code: MunicipalityCode.annotate({
    description: "The 7-digit IBGE code of the provider's municipality. Becomes `cMun` of the issuer's address and " +
      "the DPS's `cLocEmi` (where the note is issued)."
  }),
  state: Uf,
  postal_code: normalizedString(
    (s) => s.replace(/[\s.-]/gu, ""),
    Schema.String.check(Schema.isPattern(/^[0-9]{8}$/u, { message: "postal_code must have 8 digits (CEP)" }))
  ).pipe(described({
    description: "CEP, 8 digits (\"01310-100\" is accepted and stored as \"01310100\"). Becomes `CEP`."
  }))
}).annotate({ identifier: "RegistrationAddress" })
export type RegistrationAddress = typeof RegistrationAddress.Type

/** `regApTribSN`: how an ME/EPP in the Simples Nacional pays its federal and municipal taxes. */
export const SimplesNacionalApportionment = Schema.Literals([
  "federal_and_municipal_in_simples",
  "federal_in_simples",
  "outside_simples"
]).annotate({
  identifier: "SimplesNacionalApportionment",
  description: "Only for `simples_nacional: \"me_epp\"`; becomes `regApTribSN`. " +
    "`federal_and_municipal_in_simples` (1, the default): federal taxes and ISS through the Simples Nacional; " +
    "`federal_in_simples` (2): federal taxes through the Simples, ISS outside it (a sublimit was exceeded); " +
    "`outside_simples` (3): federal taxes and ISS outside the Simples."
})
export type SimplesNacionalApportionment = typeof SimplesNacionalApportionment.Type

export const apportionmentCode: Record<SimplesNacionalApportionment, "1" | "2" | "3"> = {
  federal_and_municipal_in_simples: "1",
  federal_in_simples: "2",
  outside_simples: "3"
}

/** `regEspTrib`: the municipal special taxation regime, with the v1.01 schema's codes. */
export const SpecialRegime = Schema.Literals([
  "none",
  "cooperative",
  "estimate",
  "municipal_microenterprise",
  "notary_or_registrar",
  "self_employed_professional",
  "professional_society"
]).annotate({
  identifier: "SpecialRegime",
  description: "The municipal special taxation regime; becomes `regEspTrib`: `none` 0 (the default), " +
    "`cooperative` 1 (ato cooperado), `estimate` 2 (estimativa), `municipal_microenterprise` 3 (microempresa " +
    "municipal), `notary_or_registrar` 4 (notário ou registrador), `self_employed_professional` 5 (profissional " +
    "autônomo), `professional_society` 6 (sociedade de profissionais)."
})
export type SpecialRegime = typeof SpecialRegime.Type

export const specialRegimeCode: Record<SpecialRegime, string> = {
  none: "0",
  cooperative: "1",
  estimate: "2",
  municipal_microenterprise: "3",
  notary_or_registrar: "4",
  self_employed_professional: "5",
  professional_society: "6"
}

/** CRT (código de regime tributário) of the NF-e/NFC-e, for goods. */
export const Crt = Schema.Literals(["simples_nacional", "simples_nacional_excess", "normal", "mei"]).annotate({
  identifier: "Crt",
  description: "The tax regime code of goods invoices (NF-e/NFC-e `CRT`): `simples_nacional` 1, " +
    "`simples_nacional_excess` 2 (gross revenue above the sublimit), `normal` 3, `mei` 4. Not used by NFS-e."
})

/**
 * Each field of the registration: its schema and description (shared by the tenant and its update).
 * Both wrap each field in `NullOr`, which carries the field's description (`nullable`), so the
 * OpenAPI document shows it on the property itself.
 */
const registrationFields = {
  legal_name: boundedText(300).annotate({
    description: "Legal name (razão social), or the person's name for a CPF. Becomes the NFS-e's `emit/xNome` " +
      "and is printed on the DANFSe."
  }),
  trade_name: boundedText(150).annotate({ description: "Trade name (nome fantasia). Becomes `emit/xFant`." }),
  municipal_registration: boundedText(15).annotate({
    description: "Municipal registration (inscrição municipal, IM), 1–15 characters as the municipality " +
      "registers it. Becomes the DPS's `prest/IM` and the NFS-e's `emit/IM`; leave it null where the " +
      "municipality has none in the national register (the system refuses an IM it does not know)."
  }),
  state_registration: boundedText(14).annotate({
    description: "State registration (inscrição estadual, IE), for goods invoices (NF-e `IE`). Not used by NFS-e."
  }),
  address: RegistrationAddress.annotate({
    description: "The provider's address. Becomes the NFS-e's `emit/enderNac`; its municipality is the DPS's " +
      "`cLocEmi`. Replaced as a whole by an update."
  }),
  phone: normalizedString(
    digitsOf,
    Schema.String.check(
      Schema.isPattern(/^[0-9]{6,20}$/u, { message: "phone must have 6 to 20 digits (area code and number)" })
    )
  ).annotate({
    description: "Phone with area code; spaces, dots, dashes, parentheses and `+` are removed (\"(11) 3333-4444\" " +
      "is stored as \"1133334444\"). Becomes `prest/fone` and `emit/fone`."
  }),
  email: emailAddress(Schema.Trim).check(Schema.isMaxLength(80)).annotate({
    description: "E-mail address, at most 80 characters. Becomes `prest/email` and `emit/email`."
  }),
  simples_nacional_apportionment: SimplesNacionalApportionment,
  special_regime: SpecialRegime,
  crt: Crt
} as const

type Fields = typeof registrationFields

const nullable = <S extends Schema.Top>(schema: S) => {
  const description = Schema.resolveAnnotations(schema)?.description
  return description === undefined ? Schema.NullOr(schema) : Schema.NullOr(schema).annotate({ description })
}

/** The registration as the tenant shows it: every field, null where the tenant has not declared it. */
export const Registration = Schema.Struct(
  Object.fromEntries(
    Object.entries(registrationFields).map(([key, schema]) => [key, nullable(schema)])
  ) as { readonly [K in keyof Fields]: Schema.NullOr<Fields[K]> }
).annotate({
  identifier: "Registration",
  description: "The provider's registration: what the issuer block of every document is written from. " +
    "The Simples Nacional option itself is the tenant's `simples_nacional`."
})
export type Registration = typeof Registration.Type

/**
 * An update of the registration: each field given replaces the stored one (`null` clears it), the
 * others are kept; `address` is replaced whole.
 */
export const RegistrationChanges = Schema.Struct(
  Object.fromEntries(
    Object.entries(registrationFields).map(([key, schema]) => [key, Schema.optionalKey(nullable(schema))])
  ) as { readonly [K in keyof Fields]: Schema.optionalKey<Schema.NullOr<Fields[K]>> }
).annotate({
  identifier: "RegistrationChanges",
  description: "Fields of the provider's registration to change: each one given replaces the stored value " +
    "(`null` clears it), the others are kept; `address` is replaced as a whole."
})
export type RegistrationChanges = typeof RegistrationChanges.Type

export const emptyRegistration: Registration = {
  legal_name: null,
  trade_name: null,
  municipal_registration: null,
  state_registration: null,
  address: null,
  phone: null,
  email: null,
  simples_nacional_apportionment: null,
  special_regime: null,
  crt: null
}

/** The address's state must be its municipality's: the national system refuses any other pair. */
export const addressProblem = (
  address: RegistrationAddress
): { readonly field: "municipality_code" | "state"; readonly message: string } | undefined => {
  const uf = ufOfMunicipality(address.municipality_code)
  if (uf === undefined) {
    return {
      field: "municipality_code",
      message: `${address.municipality_code} is not an IBGE municipality code: its first two digits name no state`
    }
  }
  if (uf !== address.state) {
    return {
      field: "state",
      message: `${address.state} is not the state of municipality ${address.municipality_code} (${uf})`
    }
  }
  return undefined
}

const requiredAddressFields = ["street", "number", "district", "municipality_code", "state", "postal_code"] as const

/**
 * What a service invoice (NFS-e) needs of the registration: the legal name (the note's and DANFSe's
 * issuer) and the address, whose municipality is where the note is issued (`cLocEmi`). Paths of the
 * missing fields, empty when none is.
 */
export const missingForServiceInvoice = (registration: Registration): ReadonlyArray<ReadonlyArray<string>> => [
  ...(registration.legal_name === null ? [["registration", "legal_name"]] : []),
  ...(registration.address === null ? requiredAddressFields.map((field) => ["registration", "address", field]) : [])
]
