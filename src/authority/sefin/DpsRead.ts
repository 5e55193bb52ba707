/**
 * Reading a DPS back (the local authority's side, and the NFS-e reader's for the embedded one):
 * plain values, strings as written, for the checks and the note's `valores`.
 */
import type { Element } from "@xmldom/xmldom"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { IbsCbs } from "../../domain/IbsCbs.js"
import { NFSE_NAMESPACE, nfseChildren, nfseElement, nfseText, optionalField, parseXml } from "../xml/XmlText.js"
import { readDpsIbsCbs } from "./IbsCbs.js"
import { type DpsSubstitution, readSubstitution } from "./SubstitutionDps.js"

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
    /** IM, fone and email as written, when the DPS carries them. */
    readonly municipalRegistration?: string
    readonly phone?: string
    readonly email?: string
  }
  readonly taker?: ParsedParty
  readonly intermediary?: ParsedParty
  readonly service: {
    readonly code: string
    readonly description: string
    readonly nbsCode?: string
    /** cLocPrestacao (absent when the service was provided abroad). */
    readonly municipalityCode?: string
    /** cPaisPrestacao, for a service provided abroad. */
    readonly countryCode?: string
    /** Whether `comExt` is present. */
    readonly foreignTrade: boolean
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
    readonly unconditionalDiscount?: string
    readonly conditionalDiscount?: string
    /** pDR. */
    readonly deductionRate?: string
    /** Each docDedRed's vDeducaoReducao. */
    readonly deductionDocuments: ReadonlyArray<string>
    /** tpImunidade. */
    readonly immunity?: string
    readonly benefitReductionAmount?: string
    readonly benefitReductionRate?: string
    readonly inss?: string
    readonly irrf?: string
    readonly csll?: string
    readonly pis?: string
    readonly cofins?: string
    /** tpRetPisCofins as written ("1" withheld). */
    readonly pisCofinsRetention?: string
    /** The totTrib choice's element: vTotTrib, pTotTrib, indTotTrib or pTotTribSN. */
    readonly totalTaxesKind?: string
  }
  /** xInfComp, or null. */
  readonly notes: string | null
  /** The `subst` group, when the DPS replaces a note. */
  readonly substitution?: DpsSubstitution
  /** The tax reform group (`IBSCBS`), when the DPS declares it. */
  readonly ibsCbs?: IbsCbs
}

export interface ParsedParty {
  /** CNPJ, CPF or NIF, whichever is present. */
  readonly taxId?: string
  /** Which one: "CNPJ", "CPF", "NIF" or "cNaoNIF". */
  readonly idKind?: string
  readonly name: string
  readonly email?: string
  readonly address?: ParsedAddress
}

const withSubstitution = (substitution: DpsSubstitution | undefined) =>
  substitution === undefined ? {} : { substitution }

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

const readParty = (person: Element | undefined): ParsedParty | undefined => {
  if (person === undefined) return undefined
  const address = readAddress(nfseElement(person, "end"))
  const idKind = ["CNPJ", "CPF", "NIF", "cNaoNIF"].find((kind) => nfseElement(person, kind) !== undefined)
  return {
    ...optionalField("taxId", readPersonTaxId(person)),
    ...optionalField("idKind", idKind),
    name: nfseText(person, "xNome") ?? "",
    ...optionalField("email", nfseText(person, "email")),
    ...(address === undefined ? {} : { address })
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

  const tribMun = nfseElement(inf, "valores", "trib", "tribMun")
  const tribFed = nfseElement(inf, "valores", "trib", "tribFed")
  const discounts = nfseElement(inf, "valores", "vDescCondIncond")
  const deductions = nfseElement(inf, "valores", "vDedRed")
  const documents = nfseChildren(nfseElement(deductions, "documentos") ?? inf, "docDedRed")
  const totTrib = nfseElement(inf, "valores", "trib", "totTrib")
  const notes = nfseText(inf, "serv", "infoCompl", "xInfComp")
  const taker = readParty(nfseElement(inf, "toma"))
  const intermediary = readParty(nfseElement(inf, "interm"))
  const ibsCbs = readDpsIbsCbs(inf)
  if (Result.isFailure(ibsCbs)) return unreadable(ibsCbs.failure.message)
  return Result.succeed({
    id,
    tpAmb: tpAmb === "1" ? 1 : 2,
    emittedAt: fields.emittedAt!,
    competence: fields.competence!,
    series: fields.series!,
    number,
    applicationVersion: nfseText(inf, "verAplic") ?? "",
    municipalityCode: fields.municipalityCode!,
    issuer: {
      taxId: issuerTaxId!,
      simplesNacional: nfseText(issuer, "regTrib", "opSimpNac") ?? "",
      ...optionalField("municipalRegistration", nfseText(issuer, "IM")),
      ...optionalField("phone", nfseText(issuer, "fone")),
      ...optionalField("email", nfseText(issuer, "email"))
    },
    ...(taker === undefined ? {} : { taker }),
    ...(intermediary === undefined ? {} : { intermediary }),
    service: {
      code: fields.serviceCode!,
      description: fields.description!,
      ...optionalField("nbsCode", nfseText(inf, "serv", "cServ", "cNBS")),
      ...optionalField("municipalityCode", nfseText(inf, "serv", "locPrest", "cLocPrestacao")),
      ...optionalField("countryCode", nfseText(inf, "serv", "locPrest", "cPaisPrestacao")),
      foreignTrade: nfseElement(inf, "serv", "comExt") !== undefined
    },
    amounts: {
      services: fields.services!,
      ...optionalField("deductions", nfseText(deductions, "vDR")),
      ...optionalField("issRate", nfseText(tribMun, "pAliq")),
      issTaxation: nfseText(tribMun, "tribISSQN") ?? "",
      issRetention: nfseText(tribMun, "tpRetISSQN") ?? "",
      ...optionalField("unconditionalDiscount", nfseText(discounts, "vDescIncond")),
      ...optionalField("conditionalDiscount", nfseText(discounts, "vDescCond")),
      ...optionalField("deductionRate", nfseText(deductions, "pDR")),
      deductionDocuments: documents.map((document) => nfseText(document, "vDeducaoReducao") ?? "0"),
      ...optionalField("immunity", nfseText(tribMun, "tpImunidade")),
      ...optionalField("benefitReductionAmount", nfseText(tribMun, "BM", "vRedBCBM")),
      ...optionalField("benefitReductionRate", nfseText(tribMun, "BM", "pRedBCBM")),
      ...optionalField("inss", nfseText(tribFed, "vRetCP")),
      ...optionalField("irrf", nfseText(tribFed, "vRetIRRF")),
      ...optionalField("csll", nfseText(tribFed, "vRetCSLL")),
      ...optionalField("pis", nfseText(tribFed, "piscofins", "vPis")),
      ...optionalField("cofins", nfseText(tribFed, "piscofins", "vCofins")),
      ...optionalField("pisCofinsRetention", nfseText(tribFed, "piscofins", "tpRetPisCofins")),
      ...optionalField(
        "totalTaxesKind",
        ["vTotTrib", "pTotTrib", "indTotTrib", "pTotTribSN"].find((kind) => nfseElement(totTrib, kind) !== undefined)
      )
    },
    notes: notes ?? null,
    ...withSubstitution(readSubstitution(nfseElement(inf, "subst"))),
    ...(ibsCbs.success === undefined ? {} : { ibsCbs: ibsCbs.success })
  })
}
