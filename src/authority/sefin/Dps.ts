/**
 * The DPS (Declaração de Prestação de Serviço) v1.01: the declaration a taxpayer sends to the SEFIN
 * Nacional, which answers with the NFS-e. Built here from a document and its tenant, unsigned
 * (XmlSignature.ts signs it); DpsRead.ts reads it back for the local authority.
 *
 * Field choices follow what the national system accepts in practice, not only the XSD:
 * - `prest` carries the tax id, the municipal registration (`IM`) when the provider declares one,
 *   phone, e-mail and `regTrib`, as the real notes do. With `tpEmit` 1 (issued by the provider) the
 *   system takes name and address from its own register (CNC) and refuses them in the DPS, so
 *   neither is sent; it also refuses an `IM` it does not have there (E0120), so none is invented.
 * - The values, the rate rules per regime and the approximate taxes: DpsValues.ts. The taker and
 *   the intermediary: DpsParties.ts.
 */
import type { Amounts } from "../../domain/Money.js"
import type { Party, TaxDetails } from "../../domain/TaxContent.js"
import { normalizeTaxId } from "../../domain/TaxId.js"
import {
  brasiliaDateTime,
  escapeAttribute,
  leaf,
  multiLine,
  NFSE_NAMESPACE,
  node,
  singleLine,
  XML_DECLARATION
} from "../xml/XmlText.js"
import { dpsId, isCpf } from "./DpsId.js"
import { partyElement } from "./DpsParties.js"
import { foreignTradeElement, type SimplesNacionalOption, valuesElement } from "./DpsValues.js"

export { formatRateForXml, type SimplesNacionalOption } from "./DpsValues.js"
import { type DpsSubstitution, substitutionGroup } from "./SubstitutionDps.js"

/** Written in `verAplic` (1–20 characters): which software produced the DPS. */
export const DPS_APPLICATION_VERSION = "etd-service_0.1.0"

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
    /** IM, as the municipality registers it; absent: not sent. */
    readonly municipalRegistration?: string | undefined
    /** fone, digits only. */
    readonly phone?: string | undefined
    readonly email?: string | undefined
    /** regApTribSN, only for ME/EPP; default "1" (federal taxes and ISS through the Simples). */
    readonly simplesNacionalApportionment?: "1" | "2" | "3" | undefined
    /** regEspTrib; default "0" (none). */
    readonly specialRegime?: string | undefined
  }
  /** `toma`; absent for a note to an unidentified consumer. */
  readonly taker?: Party | null | undefined
  /** `interm`. */
  readonly intermediary?: Party | null | undefined
  readonly service: {
    /** cTribNac, 6 digits. */
    readonly code: string
    /** cTribMun, 3 digits. */
    readonly municipalCode?: string | undefined
    /** cNBS, 9 digits; required by the schema, so a DPS without it fails validation. */
    readonly nbsCode?: string | undefined
    readonly description: string
    /** Where the service was provided (cLocPrestacao). */
    readonly municipalityCode: string
    /** Provided abroad: cPaisPrestacao instead of cLocPrestacao. */
    readonly countryCode?: string | undefined
  }
  /** The document's computed amounts (TaxComputation.ts). */
  readonly amounts: Amounts
  /** The declared tax content; empty for a plain note. */
  readonly tax?: TaxDetails | undefined
  /** serv/infoCompl/xInfComp when present. */
  readonly notes: string | null
  /** The `subst` group of a substitute (SubstitutionDps.ts). */
  readonly substitution?: DpsSubstitution | undefined
  /**
   * The tax reform group `IBSCBS` as written by its own module (src/authority/sefin/IbsCbs.ts), the
   * last child of `infDPS`; absent while the document declares none.
   */
  readonly ibsCbsXml?: string | undefined
}

/** `CPF` or `CNPJ` element by the id's length. */
const taxIdElement = (taxId: string): string => leaf(isCpf(taxId) ? "CPF" : "CNPJ", taxId)

/**
 * The unsigned DPS: XML declaration, then `<DPS versao="1.01" xmlns=…><infDPS Id=…>…</infDPS></DPS>`
 * with no whitespace between elements and every text escaped. It validates against DPS_v1.01.xsd
 * as it is (the signature is optional in the schema, though the service requires one).
 */
export const buildDps = (input: DpsInput): { readonly id: string; readonly xml: string } => {
  const issuerTaxId = normalizeTaxId(input.issuer.taxId)
  const option = input.issuer.simplesNacional ?? "not_opted"
  const tax = input.tax ?? {}
  const id = dpsId({
    municipalityCode: input.issuer.municipalityCode,
    taxId: issuerTaxId,
    series: input.series,
    number: input.number
  })
  const notes = input.notes === null ? "" : singleLine(input.notes)

  const issuerEmail = input.issuer.email === undefined ? "" : singleLine(input.issuer.email)
  const prest = node(
    "prest",
    taxIdElement(issuerTaxId),
    input.issuer.municipalRegistration === undefined ? "" : leaf("IM", singleLine(input.issuer.municipalRegistration)),
    input.issuer.phone === undefined ? "" : leaf("fone", input.issuer.phone),
    issuerEmail === "" ? "" : leaf("email", issuerEmail),
    node(
      "regTrib",
      leaf("opSimpNac", simplesNacionalCode[option]),
      // Only an ME/EPP says how it pays; by default federal taxes and ISS both through the Simples (DAS).
      option === "me_epp" ? leaf("regApTribSN", input.issuer.simplesNacionalApportionment ?? "1") : "",
      leaf("regEspTrib", input.issuer.specialRegime ?? "0")
    )
  )
  const serv = node(
    "serv",
    node(
      "locPrest",
      input.service.countryCode === undefined
        ? leaf("cLocPrestacao", input.service.municipalityCode)
        : leaf("cPaisPrestacao", input.service.countryCode)
    ),
    node(
      "cServ",
      leaf("cTribNac", input.service.code),
      input.service.municipalCode === undefined ? "" : leaf("cTribMun", input.service.municipalCode),
      leaf("xDescServ", multiLine(input.service.description)),
      input.service.nbsCode === undefined ? "" : leaf("cNBS", input.service.nbsCode)
    ),
    foreignTradeElement(tax.foreign_trade),
    notes === "" ? "" : node("infoCompl", leaf("xInfComp", notes))
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
    prest +
    partyElement("toma", input.taker) +
    partyElement("interm", input.intermediary) +
    serv +
    valuesElement(input.amounts, tax, option) +
    (input.ibsCbsXml ?? "") +
    "</infDPS>"
  return { id, xml: `${XML_DECLARATION}<DPS versao="1.01" xmlns="${NFSE_NAMESPACE}">${infDps}</DPS>` }
}
