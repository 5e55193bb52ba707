/**
 * The NFS-e v1.01 (Nota Fiscal de Serviço eletrônica): what the national system issues for an
 * accepted DPS. `buildNfse` is the authority's side (the local authority builds and signs one per
 * DPS, modelled on a real production note: samples/real-nfse-manaus-prod-2026-01.redacted.xml);
 * `readNfse` is everyone's side: the sefin adapter records number and dates from it and the DANFSe
 * prints it. `readNfse` reads real notes too, which carry more than ours.
 */
import type { Element } from "@xmldom/xmldom"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { IbsCbsFigures } from "../../domain/Money.js"
import { municipalityOf } from "../../domain/Municipalities.js"
import { ufOfMunicipality } from "../../domain/Registration.js"
import { noteIbsCbsOfInf } from "../NoteIbsCbs.js"
import {
  brasiliaDateTime,
  escapeAttribute,
  leaf,
  NFSE_NAMESPACE,
  nfseElement,
  nfseText,
  node,
  optionalField,
  parseXml,
  singleLine,
  withoutXmlDeclaration,
  XML_DECLARATION
} from "../xml/XmlText.js"
import { type ParsedDps, readAddress, readInfDps, readPersonTaxId } from "./DpsRead.js"
import { nfseIbsCbs, nfseValues } from "./NfseValues.js"

/** The UF of an IBGE municipality code, or undefined for an unknown prefix. */
export const stateOfMunicipality = ufOfMunicipality

export interface NfseIssuerAddress {
  readonly street: string
  readonly number: string
  readonly complement?: string | undefined
  readonly district: string
  readonly municipalityCode: string
  readonly state: string
  readonly postalCode: string
}

export interface BuildNfseInput {
  /** The DPS as received, signed; embedded unchanged so its signature still verifies. */
  readonly signedDpsXml: string
  readonly dps: ParsedDps
  readonly accessKey: string
  /** nNFSe. */
  readonly nfseNumber: number
  /** nDFSe, the national document number; default the NFS-e number. */
  readonly dfseNumber?: number | undefined
  /** dhProc. */
  readonly processedAt: Date
  /** The environment the authority stands for; must be the DPS's tpAmb. */
  readonly tpAmb: 1 | 2
  /**
   * What the real system takes from its register (CNC) and we cannot know from the DPS. Without
   * them the note says so ("Não informado") rather than invent a name or an address.
   */
  readonly issuerName?: string | undefined
  readonly issuerTradeName?: string | undefined
  /** IM; default the DPS's `prest/IM`. */
  readonly issuerMunicipalRegistration?: string | undefined
  readonly issuerAddress?: NfseIssuerAddress | undefined
  readonly issuerEmail?: string | undefined
  readonly issuerPhone?: string | undefined
  /** Names of municipalities by IBGE code (xLocEmi, xLocPrestacao, xLocIncid); default the IBGE table's. */
  readonly municipalityNames?: Readonly<Record<string, string>> | undefined
  /** xTribNac, the national service code's description; default "Código de tributação nacional <code>". */
  readonly nationalServiceName?: string | undefined
  /** xNBS, the NBS code's description; left out by default. */
  readonly nbsName?: string | undefined
  /**
   * The municipality's ISS rate ("2.00"), used when the DPS does not inform one: a provider
   * outside the Simples Nacional does not, and the system applies its parameters.
   */
  readonly issRate?: string | undefined
  /** verAplic of the authority (1–20 characters). */
  readonly applicationVersion?: string | undefined
}

/** The local authority's software version in what it issues. */
const AUTHORITY_VERSION = "LocalSefin_1.0"

const NOT_INFORMED = "Não informado"

/**
 * `emit`, as a real note's: the tax id, IM, phone and e-mail the DPS declares (or the register's),
 * the name, trade name and address from the register.
 */
const issuerElement = (input: BuildNfseInput): string => {
  const taxId = input.dps.issuer.taxId
  const address = input.issuerAddress
  const email = singleLine(input.dps.issuer.email ?? input.issuerEmail ?? "")
  const phone = input.dps.issuer.phone ?? input.issuerPhone
  const municipalRegistration = input.dps.issuer.municipalRegistration ?? input.issuerMunicipalRegistration
  const tradeName = input.issuerTradeName === undefined ? "" : singleLine(input.issuerTradeName)
  return node(
    "emit",
    leaf(taxId.length === 11 ? "CPF" : "CNPJ", taxId),
    municipalRegistration === undefined ? "" : leaf("IM", municipalRegistration),
    leaf("xNome", singleLine(input.issuerName ?? NOT_INFORMED)),
    tradeName === "" ? "" : leaf("xFant", tradeName),
    address === undefined
      ? node(
        "enderNac",
        leaf("xLgr", NOT_INFORMED),
        leaf("nro", "S/N"),
        leaf("xBairro", NOT_INFORMED),
        leaf("cMun", input.dps.municipalityCode),
        leaf("UF", stateOfMunicipality(input.dps.municipalityCode) ?? ""),
        leaf("CEP", "00000000")
      )
      : node(
        "enderNac",
        leaf("xLgr", singleLine(address.street)),
        leaf("nro", singleLine(address.number)),
        address.complement === undefined ? "" : leaf("xCpl", singleLine(address.complement)),
        leaf("xBairro", singleLine(address.district)),
        leaf("cMun", address.municipalityCode),
        leaf("UF", address.state),
        leaf("CEP", address.postalCode)
      ),
    phone === undefined ? "" : leaf("fone", phone),
    email === "" ? "" : leaf("email", email)
  )
}

/**
 * The unsigned NFS-e for an accepted DPS:
 * `<NFSe versao="1.01" xmlns=…><infNFSe Id="NFS<chave>">…<DPS>(signed, embedded)</DPS></infNFSe></NFSe>`.
 * NFSe_v1.01.xsd requires the Signature over infNFSe, so it validates once the authority signs it.
 * ISS is due where the provider is established (cLocIncid = cLocEmi), LC 116's general rule.
 */
export const buildNfse = (input: BuildNfseInput): string => {
  if (input.tpAmb !== input.dps.tpAmb) {
    // The authority refuses a DPS of the other environment (E0006) before building anything.
    throw new Error(`an NFS-e of environment ${input.tpAmb} for a DPS of environment ${input.dps.tpAmb}`)
  }
  const nameOf = (code: string) => input.municipalityNames?.[code] ?? municipalityOf(code)?.name ?? `Município ${code}`
  const emission = input.dps.municipalityCode
  const placeOfService = input.dps.service.municipalityCode ?? emission
  const infNfse = `<infNFSe Id="${escapeAttribute(`NFS${input.accessKey}`)}">` +
    leaf("xLocEmi", nameOf(emission)) +
    leaf("xLocPrestacao", nameOf(placeOfService)) +
    leaf("nNFSe", String(input.nfseNumber)) +
    leaf("cLocIncid", emission) +
    leaf("xLocIncid", nameOf(emission)) +
    leaf(
      "xTribNac",
      singleLine(input.nationalServiceName ?? `Código de tributação nacional ${input.dps.service.code}`)
    ) +
    (input.nbsName === undefined ? "" : leaf("xNBS", singleLine(input.nbsName))) +
    leaf("verAplic", input.applicationVersion ?? AUTHORITY_VERSION) +
    // Generated by the national system, normal emission, through the taxpayer's application (API).
    leaf("ambGer", "2") +
    leaf("tpEmis", "1") +
    leaf("procEmi", "1") +
    leaf("cStat", "100") +
    leaf("dhProc", brasiliaDateTime(input.processedAt)) +
    leaf("nDFSe", String(input.dfseNumber ?? input.nfseNumber)) +
    issuerElement(input) +
    nfseValues(input.dps, input.issRate) +
    nfseIbsCbs(input.dps, input.issRate, { code: emission, name: nameOf(emission) }) +
    withoutXmlDeclaration(input.signedDpsXml) +
    "</infNFSe>"
  return `${XML_DECLARATION}<NFSe versao="1.01" xmlns="${NFSE_NAMESPACE}">${infNfse}</NFSe>`
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

export class NfseUnreadable extends Schema.TaggedError<NfseUnreadable>()("NfseUnreadable", {
  message: Schema.String
}) {}

export interface NfseAddress {
  readonly street: string
  readonly number: string
  readonly complement?: string
  readonly district: string
  readonly municipalityCode?: string
  readonly state?: string
  readonly postalCode?: string
}

export interface ParsedNfse {
  /** The 50 digits of infNFSe's Id without its "NFS". */
  readonly accessKey: string
  /** nNFSe as written. */
  readonly nfseNumber: string
  /** nDFSe as written. */
  readonly dfseNumber?: string
  /** dhProc as written ("2026-01-15T19:43:39-03:00"). */
  readonly processedAt: string
  /** The embedded DPS's tpAmb. */
  readonly tpAmb: 1 | 2
  /** cStat: 100 issued, 102 by court decision, 103 issued by the tax office (avulsa), 107 by a MEI. */
  readonly status: string
  readonly issuer: {
    readonly taxId: string
    readonly name?: string
    readonly tradeName?: string
    readonly municipalRegistration?: string
    /** xLocEmi. */
    readonly municipalityName?: string
    readonly address?: NfseAddress
    readonly email?: string
    readonly phone?: string
  }
  readonly taker: {
    readonly taxId?: string
    readonly name?: string
    readonly email?: string
    readonly phone?: string
    readonly address?: NfseAddress
  }
  readonly service: {
    readonly code: string
    /** xTribNac: the national code's description. */
    readonly codeDescription?: string
    readonly description: string
    readonly nbsCode?: string
    readonly municipalityCode: string
    /** xLocPrestacao. */
    readonly municipalityName?: string
  }
  /** Strings as in the XML ("1500.00", rate "2.00"). */
  readonly amounts: {
    readonly services: string
    readonly deductions?: string
    /** vCalcBM. */
    readonly benefitReduction?: string
    readonly base?: string
    readonly issRate?: string
    readonly issAmount?: string
    /** vTotalRet. */
    readonly totalWithheld?: string
    readonly net?: string
  }
  readonly dps: {
    readonly id: string
    readonly series: string
    readonly number: number
    readonly emittedAt: string
    readonly competence: string
    /** The values the embedded DPS declares (discounts, tpRetISSQN, the federal retentions). */
    readonly amounts: ParsedDps["amounts"]
  }
  /** The DPS's xInfComp, or the note's xOutInf. */
  readonly notes?: string
  /** The authority's IBS/CBS figures (`IBSCBS`); null when the note has no such group or it cannot be read. */
  readonly ibsCbs: IbsCbsFigures | null
}

const unreadable = (message: string) => Result.fail(new NfseUnreadable({ message }))

const trimmedField = <K extends string>(key: K, value: string | undefined) =>
  optionalField(key, value === undefined || value.trim() === "" ? undefined : value.trim())

const readIssuerAddress = (enderNac: Element | undefined): NfseAddress | undefined =>
  enderNac === undefined ? undefined : {
    street: nfseText(enderNac, "xLgr") ?? "",
    number: nfseText(enderNac, "nro") ?? "",
    ...optionalField("complement", nfseText(enderNac, "xCpl")),
    district: nfseText(enderNac, "xBairro") ?? "",
    ...optionalField("municipalityCode", nfseText(enderNac, "cMun")),
    ...optionalField("state", nfseText(enderNac, "UF")),
    ...optionalField("postalCode", nfseText(enderNac, "CEP"))
  }

/** Reads an NFS-e (ours or a real one) into plain values; its signature is not checked here. */
export const readNfse = (xml: string): Result.Result<ParsedNfse, NfseUnreadable> => {
  const parsed = parseXml(xml)
  if (Result.isFailure(parsed)) return unreadable(`The NFS-e is not well-formed XML (${parsed.failure})`)
  const root = parsed.success.documentElement!
  if (root.localName !== "NFSe" || root.namespaceURI !== NFSE_NAMESPACE) {
    return unreadable(`The root element is ${root.localName}, not NFSe in ${NFSE_NAMESPACE}`)
  }
  const inf = nfseElement(root, "infNFSe")
  if (inf === undefined) return unreadable("The NFS-e has no infNFSe")
  const accessKey = /^NFS([0-9]{50})$/.exec(inf.getAttribute("Id") ?? "")?.[1]
  const nfseNumber = nfseText(inf, "nNFSe")
  const processedAt = nfseText(inf, "dhProc")
  const emit = nfseElement(inf, "emit")
  const issuerTaxId = readPersonTaxId(emit)
  const dpsElement = nfseElement(inf, "DPS")
  const problems = [
    ...(accessKey === undefined ? ["Id (NFS + 50 digits)"] : []),
    ...(nfseNumber === undefined ? ["nNFSe"] : []),
    ...(processedAt === undefined ? ["dhProc"] : []),
    ...(issuerTaxId === undefined ? ["emit tax id"] : []),
    ...(dpsElement === undefined ? ["DPS"] : [])
  ]
  if (problems.length > 0) return unreadable(`The NFS-e lacks or has unreadable: ${problems.join(", ")}`)
  const dpsRead = readInfDps(dpsElement!)
  if (Result.isFailure(dpsRead)) return unreadable(`Its DPS: ${dpsRead.failure.message}`)
  const dps = dpsRead.success

  const values = nfseElement(inf, "valores")
  const toma = nfseElement(dpsElement, "infDPS", "toma")
  const issuerAddress = readIssuerAddress(nfseElement(emit, "enderNac"))
  const takerAddress = readAddress(nfseElement(toma, "end"))
  const notes = dps.notes ?? nfseText(inf, "xOutInf")
  return Result.succeed({
    accessKey: accessKey!,
    nfseNumber: nfseNumber!,
    ...optionalField("dfseNumber", nfseText(inf, "nDFSe")),
    processedAt: processedAt!,
    tpAmb: dps.tpAmb,
    status: nfseText(inf, "cStat") ?? "",
    issuer: {
      taxId: issuerTaxId!,
      ...optionalField("name", nfseText(emit, "xNome")),
      ...optionalField("tradeName", nfseText(emit, "xFant")),
      // Real notes pad the municipal registration with spaces ("       51034401").
      ...trimmedField("municipalRegistration", nfseText(emit, "IM")),
      ...optionalField("municipalityName", nfseText(inf, "xLocEmi")),
      ...(issuerAddress === undefined ? {} : { address: issuerAddress }),
      ...optionalField("email", nfseText(emit, "email")),
      ...optionalField("phone", nfseText(emit, "fone"))
    },
    taker: {
      ...optionalField("taxId", dps.taker?.taxId),
      ...optionalField("name", dps.taker?.name),
      ...optionalField("email", dps.taker?.email),
      ...optionalField("phone", nfseText(toma, "fone")),
      ...(takerAddress === undefined ? {} : { address: takerAddress })
    },
    service: {
      code: dps.service.code,
      ...optionalField("codeDescription", nfseText(inf, "xTribNac")),
      description: dps.service.description,
      ...optionalField("nbsCode", dps.service.nbsCode),
      municipalityCode: dps.service.municipalityCode ?? dps.municipalityCode,
      ...optionalField("municipalityName", nfseText(inf, "xLocPrestacao"))
    },
    amounts: {
      services: dps.amounts.services,
      ...optionalField("deductions", dps.amounts.deductions ?? nfseText(values, "vCalcDR")),
      ...optionalField("benefitReduction", nfseText(values, "vCalcBM")),
      ...optionalField("base", nfseText(values, "vBC")),
      ...optionalField("issRate", nfseText(values, "pAliqAplic") ?? dps.amounts.issRate),
      ...optionalField("issAmount", nfseText(values, "vISSQN")),
      ...optionalField("totalWithheld", nfseText(values, "vTotalRet")),
      ...optionalField("net", nfseText(values, "vLiq"))
    },
    dps: {
      id: dps.id,
      series: dps.series,
      number: dps.number,
      emittedAt: dps.emittedAt,
      competence: dps.competence,
      amounts: dps.amounts
    },
    ...optionalField("notes", notes ?? undefined),
    ibsCbs: noteIbsCbsOfInf(inf)
  })
}
