/**
 * The DPS (Declaração de Prestação de Serviço) v1.01: the declaration a taxpayer sends to the SEFIN
 * Nacional, which answers with the NFS-e. Built here from a document and its tenant, unsigned
 * (XmlSignature.ts signs it), and read back by the local authority.
 *
 * Field choices follow what the national system accepts in practice, not only the XSD:
 * - `prest` carries only the tax id and `regTrib`. With `tpEmit` 1 (issued by the provider) the
 *   system takes name and address from its own register (CNC), and refuses an `IM` it does not
 *   have there (E0120), so none of them is sent.
 * - `pAliq` goes only for Simples Nacional ME/EPP: for a provider outside the Simples, in a
 *   municipality active in the national system, the rate comes from the municipality's
 *   parameters and informing one is refused (E0617).
 * - `totTrib` (required) is `indTotTrib` 0 only for a MEI; for providers outside the Simples
 *   (E0713) and for ME/EPP (E0712) it is refused there, so they declare the approximate amounts
 *   (`vTotTrib`): the caller's figures, or by default the ISS itself as the municipal amount.
 * - ISS is taxable (`tribISSQN` 1) and not withheld (`tpRetISSQN` 1); deductions are `vDedRed/vDR`.
 */
import type { Element } from "@xmldom/xmldom"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { Address } from "../../domain/Document.js"
import type { Amounts } from "../../domain/Money.js"
import { normalizeTaxId } from "../../domain/TaxId.js"
import {
  brasiliaDateTime,
  escapeAttribute,
  formatCentavos,
  leaf,
  multiLine,
  NFSE_NAMESPACE,
  nfseElement,
  nfseText,
  node,
  optionalField,
  parseXml,
  singleLine,
  XML_DECLARATION
} from "../xml/XmlText.js"
import { dpsId, isCpf } from "./DpsId.js"
import { type DpsSubstitution, readSubstitution, substitutionGroup } from "./SubstitutionDps.js"

/** Written in `verAplic` (1–20 characters): which software produced the DPS. */
export const DPS_APPLICATION_VERSION = "etd-service_0.1.0"

export type SimplesNacionalOption = "not_opted" | "mei" | "me_epp"

/** `opSimpNac`: 1 not opted, 2 MEI, 3 ME/EPP. */
const simplesNacionalCode: Record<SimplesNacionalOption, string> = { not_opted: "1", mei: "2", me_epp: "3" }

export interface DpsInput {
  readonly tpAmb: 1 | 2
  /** dhEmi, written as Brasília local time with its offset, no fraction; must not be in the future. */
  readonly emittedAt: Date
  /** dCompet, "YYYY-MM-DD" (the document's issue date). */
  readonly competence: string
  /** "1".."99999" without leading zeros; written as-is in `serie`, zero-padded to 5 in the id. */
  readonly series: string
  readonly number: number
  readonly issuer: {
    /** Normalized: 14 characters (CNPJ, possibly alphanumeric) or 11 digits (CPF). */
    readonly taxId: string
    readonly municipalityCode: string
    /** Default "not_opted". */
    readonly simplesNacional?: SimplesNacionalOption | undefined
  }
  readonly taker: {
    readonly taxId: string
    readonly name: string
    readonly email?: string | undefined
    readonly address?: Address | undefined
  }
  readonly service: {
    /** cTribNac, 6 digits. */
    readonly code: string
    /** cNBS, 9 digits; required by the schema, so a DPS without it fails validation. */
    readonly nbsCode?: string | undefined
    readonly description: string
    /** Where the service was provided (cLocPrestacao). */
    readonly municipalityCode: string
  }
  /** Centavos, and the rate as a decimal string ("2.00"): the document's computed amounts. */
  readonly amounts: Amounts
  /** serv/infoCompl/xInfComp when present. */
  readonly notes: string | null
  /** The `subst` group of a substitute (SubstitutionDps.ts). */
  readonly substitution?: DpsSubstitution | undefined
  /**
   * Approximate taxes on the service (Lei 12.741/2012), centavos, for `vTotTrib`. Default: federal
   * and state 0, municipal the ISS amount. Not used for a MEI (`indTotTrib` 0).
   */
  readonly approximateTaxes?:
    | { readonly federal: number; readonly state: number; readonly municipal: number }
    | undefined
}

/** `CPF` or `CNPJ` element by the id's length. */
const taxIdElement = (taxId: string): string => leaf(isCpf(taxId) ? "CPF" : "CNPJ", taxId)

/**
 * A rate for `TSDec1V2` ("0" or d.dd): two decimals when it has at most two significant ones.
 * A finer rate ("2.125") is written as it is and fails validation rather than being rounded.
 */
export const formatRateForXml = (rate: string): string => {
  const match = /^(\d+)(?:\.(\d*))?$/.exec(rate)
  if (match === null) return rate
  const integer = String(Number(match[1]))
  const fraction = (match[2] ?? "").replace(/0+$/, "")
  return fraction.length <= 2 ? `${integer}.${fraction.padEnd(2, "0")}` : `${integer}.${fraction}`
}

const takerAddress = (address: Address): string =>
  node(
    "end",
    node("endNac", leaf("cMun", address.municipality_code), leaf("CEP", address.postal_code)),
    leaf("xLgr", singleLine(address.street)),
    leaf("nro", singleLine(address.number)),
    address.complement === undefined || singleLine(address.complement) === ""
      ? ""
      : leaf("xCpl", singleLine(address.complement)),
    leaf("xBairro", singleLine(address.district))
  )

const totalTaxes = (input: DpsInput, option: SimplesNacionalOption): string => {
  if (option === "mei") return node("totTrib", leaf("indTotTrib", "0"))
  const taxes = input.approximateTaxes ?? { federal: 0, state: 0, municipal: input.amounts.iss_amount }
  return node(
    "totTrib",
    node(
      "vTotTrib",
      leaf("vTotTribFed", formatCentavos(taxes.federal)),
      leaf("vTotTribEst", formatCentavos(taxes.state)),
      leaf("vTotTribMun", formatCentavos(taxes.municipal))
    )
  )
}

/**
 * The unsigned DPS: XML declaration, then `<DPS versao="1.01" xmlns=…><infDPS Id=…>…</infDPS></DPS>`
 * with no whitespace between elements and every text escaped. It validates against DPS_v1.01.xsd
 * as it is (the signature is optional in the schema, though the service requires one).
 */
export const buildDps = (input: DpsInput): { readonly id: string; readonly xml: string } => {
  const issuerTaxId = normalizeTaxId(input.issuer.taxId)
  const takerTaxId = normalizeTaxId(input.taker.taxId)
  const option = input.issuer.simplesNacional ?? "not_opted"
  const id = dpsId({
    municipalityCode: input.issuer.municipalityCode,
    taxId: issuerTaxId,
    series: input.series,
    number: input.number
  })
  const notes = input.notes === null ? "" : singleLine(input.notes)
  const email = input.taker.email === undefined ? "" : singleLine(input.taker.email)

  const prest = node(
    "prest",
    taxIdElement(issuerTaxId),
    node(
      "regTrib",
      leaf("opSimpNac", simplesNacionalCode[option]),
      // ME/EPP: federal and municipal taxes both through the Simples Nacional (DAS).
      option === "me_epp" ? leaf("regApTribSN", "1") : "",
      leaf("regEspTrib", "0")
    )
  )
  const toma = node(
    "toma",
    taxIdElement(takerTaxId),
    leaf("xNome", singleLine(input.taker.name)),
    input.taker.address === undefined ? "" : takerAddress(input.taker.address),
    email === "" ? "" : leaf("email", email)
  )
  const serv = node(
    "serv",
    node("locPrest", leaf("cLocPrestacao", input.service.municipalityCode)),
    node(
      "cServ",
      leaf("cTribNac", input.service.code),
      leaf("xDescServ", multiLine(input.service.description)),
      input.service.nbsCode === undefined ? "" : leaf("cNBS", input.service.nbsCode)
    ),
    notes === "" ? "" : node("infoCompl", leaf("xInfComp", notes))
  )
  const valores = node(
    "valores",
    node("vServPrest", leaf("vServ", formatCentavos(input.amounts.services))),
    input.amounts.deductions > 0 ? node("vDedRed", leaf("vDR", formatCentavos(input.amounts.deductions))) : "",
    node(
      "trib",
      node(
        "tribMun",
        leaf("tribISSQN", "1"),
        leaf("tpRetISSQN", "1"),
        option === "me_epp" ? leaf("pAliq", formatRateForXml(input.amounts.iss_rate)) : ""
      ),
      totalTaxes(input, option)
    )
  )
  const infDps = `<infDPS Id="${escapeAttribute(id)}">` +
    leaf("tpAmb", String(input.tpAmb)) +
    leaf("dhEmi", brasiliaDateTime(input.emittedAt)) +
    leaf("verAplic", DPS_APPLICATION_VERSION) +
    leaf("serie", input.series) +
    leaf("nDPS", String(input.number)) +
    leaf("dCompet", input.competence) +
    leaf("tpEmit", "1") +
    leaf("cLocEmi", input.issuer.municipalityCode) +
    substitutionGroup(input.substitution) +
    prest + toma + serv + valores +
    "</infDPS>"
  return { id, xml: `${XML_DECLARATION}<DPS versao="1.01" xmlns="${NFSE_NAMESPACE}">${infDps}</DPS>` }
}

// ---------------------------------------------------------------------------------------------
// Reading (the local authority's side)
// ---------------------------------------------------------------------------------------------

export class DpsUnreadable extends Schema.TaggedError<DpsUnreadable>()("DpsUnreadable", {
  message: Schema.String
}) {}

export interface ParsedAddress {
  readonly street: string
  readonly number: string
  readonly complement?: string
  readonly district: string
  /** Absent for an address abroad (`endExt`). */
  readonly municipalityCode?: string
  readonly postalCode?: string
}

export interface ParsedDps {
  readonly id: string
  readonly tpAmb: 1 | 2
  /** dhEmi as written. */
  readonly emittedAt: string
  /** dCompet as written. */
  readonly competence: string
  readonly series: string
  readonly number: number
  readonly applicationVersion: string
  /** cLocEmi. */
  readonly municipalityCode: string
  readonly issuer: {
    readonly taxId: string
    /** opSimpNac as written: "1" not opted, "2" MEI, "3" ME/EPP. */
    readonly simplesNacional: string
  }
  readonly taker?: {
    readonly taxId?: string
    readonly name: string
    readonly email?: string
    readonly address?: ParsedAddress
  }
  readonly service: {
    readonly code: string
    readonly description: string
    readonly nbsCode?: string
    /** cLocPrestacao (absent when the service was provided abroad). */
    readonly municipalityCode?: string
  }
  /** Strings as in the XML ("1500.00"). */
  readonly amounts: {
    readonly services: string
    readonly deductions?: string
    /** pAliq, only when the DPS informs it. */
    readonly issRate?: string
    /** tribISSQN and tpRetISSQN as written. */
    readonly issTaxation: string
    readonly issRetention: string
  }
  /** xInfComp, or null. */
  readonly notes: string | null
  /** The `subst` group, when the DPS replaces a note. */
  readonly substitution?: DpsSubstitution
}

const unreadable = (message: string) => Result.fail(new DpsUnreadable({ message }))

export const readAddress = (end: Element | undefined): ParsedAddress | undefined => {
  if (end === undefined) return undefined
  const national = nfseElement(end, "endNac")
  return {
    street: nfseText(end, "xLgr") ?? "",
    number: nfseText(end, "nro") ?? "",
    ...optionalField("complement", nfseText(end, "xCpl")),
    district: nfseText(end, "xBairro") ?? "",
    ...optionalField("municipalityCode", nfseText(national, "cMun")),
    ...optionalField("postalCode", nfseText(national, "CEP"))
  }
}

/** The tax id of a person element, whichever of CNPJ / CPF / NIF it carries. */
export const readPersonTaxId = (person: Element | undefined): string | undefined =>
  nfseText(person, "CNPJ") ?? nfseText(person, "CPF") ?? nfseText(person, "NIF")

/**
 * Reads a DPS (signed or not) into plain values. Only structure is checked here: whether it is
 * valid is `validateXml("DPS", …)`'s job, and the local authority runs both.
 */
export const readDps = (xml: string): Result.Result<ParsedDps, DpsUnreadable> => {
  const parsed = parseXml(xml)
  if (Result.isFailure(parsed)) return unreadable(`The DPS is not well-formed XML (${parsed.failure})`)
  const root = parsed.success.documentElement!
  if (root.localName !== "DPS" || root.namespaceURI !== NFSE_NAMESPACE) {
    return unreadable(`The root element is ${root.localName}, not DPS in ${NFSE_NAMESPACE}`)
  }
  return readInfDps(root)
}

/** Reads the `infDPS` of a `DPS` element (also the one embedded in an NFS-e). */
export const readInfDps = (dpsElement: Element): Result.Result<ParsedDps, DpsUnreadable> => {
  const inf = nfseElement(dpsElement, "infDPS")
  if (inf === undefined) return unreadable("The DPS has no infDPS")
  const text = (...path: ReadonlyArray<string>): string | undefined => nfseText(inf, ...path)
  const id = inf.getAttribute("Id") ?? ""
  const tpAmb = text("tpAmb")
  const number = Number(text("nDPS"))
  const issuer = nfseElement(inf, "prest")
  const issuerTaxId = readPersonTaxId(issuer)
  const fields = {
    emittedAt: text("dhEmi"),
    competence: text("dCompet"),
    series: text("serie"),
    municipalityCode: text("cLocEmi"),
    serviceCode: text("serv", "cServ", "cTribNac"),
    description: text("serv", "cServ", "xDescServ"),
    services: text("valores", "vServPrest", "vServ")
  }
  const problems = [
    ...Object.entries(fields).filter(([, v]) => v === undefined).map(([k]) => k),
    ...(id === "" ? ["Id"] : []),
    ...(tpAmb === "1" || tpAmb === "2" ? [] : ["tpAmb"]),
    ...(Number.isSafeInteger(number) && number > 0 ? [] : ["nDPS"]),
    ...(issuerTaxId === undefined ? ["prest tax id"] : [])
  ]
  if (problems.length > 0) return unreadable(`The DPS lacks or has unreadable: ${problems.join(", ")}`)

  const toma = nfseElement(inf, "toma")
  const tribMun = nfseElement(inf, "valores", "trib", "tribMun")
  const notes = nfseText(inf, "serv", "infoCompl", "xInfComp")
  const takerAddress = readAddress(nfseElement(toma, "end"))
  const substitution = readSubstitution(nfseElement(inf, "subst"))
  return Result.succeed({
    id,
    tpAmb: tpAmb === "1" ? 1 : 2,
    emittedAt: fields.emittedAt!,
    competence: fields.competence!,
    series: fields.series!,
    number,
    applicationVersion: nfseText(inf, "verAplic") ?? "",
    municipalityCode: fields.municipalityCode!,
    issuer: { taxId: issuerTaxId!, simplesNacional: nfseText(issuer, "regTrib", "opSimpNac") ?? "" },
    ...(toma === undefined ? {} : {
      taker: {
        ...optionalField("taxId", readPersonTaxId(toma)),
        name: nfseText(toma, "xNome") ?? "",
        ...optionalField("email", nfseText(toma, "email")),
        ...(takerAddress === undefined ? {} : { address: takerAddress })
      }
    }),
    service: {
      code: fields.serviceCode!,
      description: fields.description!,
      ...optionalField("nbsCode", nfseText(inf, "serv", "cServ", "cNBS")),
      ...optionalField("municipalityCode", nfseText(inf, "serv", "locPrest", "cLocPrestacao"))
    },
    amounts: {
      services: fields.services!,
      ...optionalField("deductions", nfseText(inf, "valores", "vDedRed", "vDR")),
      ...optionalField("issRate", nfseText(tribMun, "pAliq")),
      issTaxation: nfseText(tribMun, "tribISSQN") ?? "",
      issRetention: nfseText(tribMun, "tpRetISSQN") ?? ""
    },
    notes: notes ?? null,
    ...(substitution === undefined ? {} : { substitution })
  })
}
