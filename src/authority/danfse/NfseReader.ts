/**
 * Reads an authorized NFS-e v1.01 (ours or a real one) into what the DANFSe prints: the note's own
 * fields (infNFSe: names of places, descriptions of codes, the issuer, the values the system
 * computed, IBS/CBS totals) and those of the DPS it embeds (infDPS: the parties, the service, the
 * declared taxes). Everything is kept as the XML writes it; absent elements stay absent. The
 * structure is NFSe_v1.01.xsd's (tiposComplexos_v1.01.xsd: TCInfNFSe, TCInfDPS and their groups).
 * Its signature is not checked here: the note was checked when it was received.
 */
import type { Element } from "@xmldom/xmldom"
import * as Result from "effect/Result"
import { municipalityOf } from "../../domain/Municipalities.js"
import { NFSE_NAMESPACE, nfseChildren, nfseElement, nfseText, parseXml } from "../xml/XmlText.js"
import type {
  DanfseAddress,
  DanfseApproximateTaxes,
  DanfseData,
  DanfseFederalTax,
  DanfseIbsCbs,
  DanfseMunicipalTax,
  DanfseParty,
  DanfseService
} from "./DanfseData.js"
import { dpsDetailLines } from "./DpsDetails.js"

export interface ReadNote {
  readonly data: DanfseData
  /** The embedded DPS's tpAmb. */
  readonly environment: 1 | 2
}

const text = (from: Element | undefined, ...path: ReadonlyArray<string>): string | undefined => {
  const value = nfseText(from, ...path)?.trim()
  return value === undefined || value === "" ? undefined : value
}

/** The object without its undefined properties, or undefined when none is left. */
const compact = <A extends object>(value: A): A | undefined => {
  const kept = Object.entries(value).filter(([, v]) => v !== undefined)
  return kept.length === 0 ? undefined : Object.fromEntries(kept) as A
}

const municipalityName = (code: string | undefined) => code === undefined ? undefined : municipalityOf(code)?.name

/** TCEndereco (national or foreign) and TCEnderecoEmitente share their street fields. */
const readAddress = (end: Element | undefined): DanfseAddress | undefined => {
  if (end === undefined) return undefined
  const national = nfseElement(end, "endNac")
  const foreign = nfseElement(end, "endExt")
  const code = text(national, "cMun") ?? text(end, "cMun")
  return compact({
    street: text(end, "xLgr"),
    number: text(end, "nro"),
    complement: text(end, "xCpl"),
    district: text(end, "xBairro"),
    municipalityCode: code,
    municipalityName: municipalityName(code),
    state: text(end, "UF") ?? (code === undefined ? undefined : municipalityOf(code)?.state),
    postalCode: text(national, "CEP") ?? text(end, "CEP"),
    countryCode: text(foreign, "cPais"),
    foreignPostalCode: text(foreign, "cEndPost"),
    city: text(foreign, "xCidade"),
    region: text(foreign, "xEstProvReg")
  })
}

const readParty = (element: Element | undefined, addressElement: string): DanfseParty | undefined =>
  element === undefined ? undefined : compact({
    taxId: text(element, "CNPJ") ?? text(element, "CPF") ?? text(element, "NIF"),
    noTaxIdReason: text(element, "cNaoNIF"),
    caepf: text(element, "CAEPF"),
    municipalRegistration: text(element, "IM"),
    name: text(element, "xNome"),
    tradeName: text(element, "xFant"),
    email: text(element, "email"),
    phone: text(element, "fone"),
    address: readAddress(nfseElement(element, addressElement))
  })

const readService = (inf: Element, serv: Element | undefined): DanfseService => {
  const cServ = nfseElement(serv, "cServ")
  const comExt = nfseElement(serv, "comExt")
  const place = text(serv, "locPrest", "cLocPrestacao")
  return {
    code: text(cServ, "cTribNac") ?? "",
    description: nfseText(cServ, "xDescServ") ?? "",
    ...compact({
      codeDescription: text(inf, "xTribNac"),
      municipalCode: text(cServ, "cTribMun"),
      municipalCodeDescription: text(inf, "xTribMun"),
      nbsCode: text(cServ, "cNBS"),
      nbsDescription: text(inf, "xNBS"),
      internalCode: text(cServ, "cIntContrib"),
      municipalityCode: place,
      municipalityName: text(inf, "xLocPrestacao") ?? municipalityName(place),
      countryCode: text(serv, "locPrest", "cPaisPrestacao"),
      foreignTrade: comExt === undefined ? undefined : compact({
        mode: text(comExt, "mdPrestacao"),
        link: text(comExt, "vincPrest"),
        currency: text(comExt, "tpMoeda"),
        amountInCurrency: text(comExt, "vServMoeda"),
        providerSupport: text(comExt, "mecAFComexP"),
        takerSupport: text(comExt, "mecAFComexT"),
        temporaryGoods: text(comExt, "movTempBens"),
        importDeclaration: text(comExt, "nDI"),
        exportRegistration: text(comExt, "nRE"),
        mdic: text(comExt, "mdic")
      })
    })
  }
}

const readMunicipalTax = (inf: Element, tribMun: Element | undefined): DanfseMunicipalTax | undefined =>
  compact({
    taxation: text(tribMun, "tribISSQN"),
    resultCountry: text(tribMun, "cPaisResult"),
    immunity: text(tribMun, "tpImunidade"),
    suspension: text(tribMun, "exigSusp", "tpSusp"),
    suspensionProcess: text(tribMun, "exigSusp", "nProcesso"),
    benefitNumber: text(tribMun, "BM", "nBM"),
    benefitKind: text(inf, "valores", "tpBM"),
    benefitReductionAmount: text(tribMun, "BM", "vRedBCBM"),
    benefitReductionRate: text(tribMun, "BM", "pRedBCBM"),
    retention: text(tribMun, "tpRetISSQN"),
    declaredRate: text(tribMun, "pAliq"),
    incidenceCode: text(inf, "cLocIncid"),
    incidenceName: text(inf, "xLocIncid") ?? municipalityName(text(inf, "cLocIncid"))
  })

const readFederalTax = (tribFed: Element | undefined): DanfseFederalTax | undefined =>
  tribFed === undefined ? undefined : compact({
    pisCofinsCst: text(tribFed, "piscofins", "CST"),
    pisCofinsBase: text(tribFed, "piscofins", "vBCPisCofins"),
    pisRate: text(tribFed, "piscofins", "pAliqPis"),
    cofinsRate: text(tribFed, "piscofins", "pAliqCofins"),
    pis: text(tribFed, "piscofins", "vPis"),
    cofins: text(tribFed, "piscofins", "vCofins"),
    pisCofinsRetention: text(tribFed, "piscofins", "tpRetPisCofins"),
    socialSecurity: text(tribFed, "vRetCP"),
    incomeTax: text(tribFed, "vRetIRRF"),
    csll: text(tribFed, "vRetCSLL")
  })

const readApproximateTaxes = (totTrib: Element | undefined): DanfseApproximateTaxes | undefined =>
  totTrib === undefined ? undefined : compact({
    federal: text(totTrib, "vTotTrib", "vTotTribFed"),
    state: text(totTrib, "vTotTrib", "vTotTribEst"),
    municipal: text(totTrib, "vTotTrib", "vTotTribMun"),
    federalRate: text(totTrib, "pTotTrib", "pTotTribFed"),
    stateRate: text(totTrib, "pTotTrib", "pTotTribEst"),
    municipalRate: text(totTrib, "pTotTrib", "pTotTribMun"),
    simplesRate: text(totTrib, "pTotTribSN"),
    indicator: text(totTrib, "indTotTrib")
  })

const readIbsCbs = (declared: Element | undefined, computed: Element | undefined): DanfseIbsCbs | undefined => {
  if (declared === undefined && computed === undefined) return undefined
  const rates = nfseElement(computed, "valores")
  const totals = nfseElement(computed, "totCIBS")
  return compact({
    purpose: text(declared, "finNFSe"),
    finalConsumer: text(declared, "indFinal"),
    operationIndicator: text(declared, "cIndOp"),
    operationType: text(declared, "tpOper"),
    destinationIndicator: text(declared, "indDest"),
    cst: text(declared, "valores", "trib", "gIBSCBS", "CST"),
    classification: text(declared, "valores", "trib", "gIBSCBS", "cClassTrib"),
    incidenceCode: text(computed, "cLocalidadeIncid"),
    incidenceName: text(computed, "xLocalidadeIncid"),
    reduction: text(computed, "pRedutor"),
    base: text(rates, "vBC"),
    ibsStateRate: text(rates, "uf", "pIBSUF"),
    ibsStateEffectiveRate: text(rates, "uf", "pAliqEfetUF"),
    ibsMunicipalRate: text(rates, "mun", "pIBSMun"),
    ibsMunicipalEffectiveRate: text(rates, "mun", "pAliqEfetMun"),
    cbsRate: text(rates, "fed", "pCBS"),
    cbsEffectiveRate: text(rates, "fed", "pAliqEfetCBS"),
    ibsState: text(totals, "gIBS", "gIBSUFTot", "vIBSUF"),
    ibsMunicipal: text(totals, "gIBS", "gIBSMunTot", "vIBSMun"),
    ibsTotal: text(totals, "gIBS", "vIBSTot"),
    cbs: text(totals, "gCBS", "vCBS"),
    noteTotal: text(totals, "vTotNF")
  })
}

/** The free texts a reader of the note needs, each under its own heading, in the XSD's order. */
const notesOf = (inf: Element, infoCompl: Element | undefined): string | undefined => {
  const group = nfseElement(infoCompl, "gItemPed")
  const items = (group === undefined ? [] : nfseChildren(group, "xItemPed"))
    .map((item) => item.textContent?.trim() ?? "").filter((item) => item !== "")
  const parts = [
    text(infoCompl, "xInfComp"),
    text(inf, "xOutInf"),
    text(infoCompl, "idDocTec") === undefined
      ? undefined
      : `Documento de responsabilidade técnica: ${text(infoCompl, "idDocTec")}`,
    text(infoCompl, "docRef") === undefined ? undefined : `Documento de referência: ${text(infoCompl, "docRef")}`,
    text(infoCompl, "xPed") === undefined ? undefined : `Pedido: ${text(infoCompl, "xPed")}`,
    items.length === 0 ? undefined : `Itens do pedido: ${items.join(", ")}`,
    ...dpsDetailLines(nfseElement(inf, "DPS", "infDPS"))
  ].filter((part): part is string => part !== undefined)
  return parts.length === 0 ? undefined : parts.join("\n")
}

/** Reads the note, or says what it lacks. */
export const readNote = (xml: string): Result.Result<ReadNote, string> => {
  const parsed = parseXml(xml)
  if (Result.isFailure(parsed)) return Result.fail(`the NFS-e is not well-formed XML (${parsed.failure})`)
  const root = parsed.success.documentElement!
  if (root.localName !== "NFSe" || root.namespaceURI !== NFSE_NAMESPACE) {
    return Result.fail(`the root element is ${root.localName}, not NFSe in ${NFSE_NAMESPACE}`)
  }
  const inf = nfseElement(root, "infNFSe")
  const accessKey = /^NFS([0-9]{50})$/.exec(inf?.getAttribute("Id") ?? "")?.[1]
  const dps = nfseElement(inf, "DPS", "infDPS")
  const emit = nfseElement(inf, "emit")
  const issuerTaxId = text(emit, "CNPJ") ?? text(emit, "CPF")
  const missing = [
    ...(accessKey === undefined ? ["Id (NFS + 50 digits)"] : []),
    ...(text(inf, "nNFSe") === undefined ? ["nNFSe"] : []),
    ...(text(inf, "dhProc") === undefined ? ["dhProc"] : []),
    ...(issuerTaxId === undefined ? ["emit's CNPJ/CPF"] : []),
    ...(dps === undefined ? ["DPS/infDPS"] : []),
    ...(text(dps, "valores", "vServPrest", "vServ") === undefined ? ["vServ"] : [])
  ]
  if (inf === undefined || missing.length > 0) {
    return Result.fail(`the NFS-e lacks or has unreadable: ${missing.join(", ") || "infNFSe"}`)
  }
  const prest = nfseElement(dps, "prest")
  const valores = nfseElement(dps, "valores")
  const trib = nfseElement(valores, "trib")
  const computed = nfseElement(inf, "valores")
  const emitAddress = readAddress(nfseElement(emit, "enderNac"))
  const issuerCode = text(dps, "cLocEmi")
  const issuer = compact({
    ...readParty(prest, "end"),
    ...readParty(emit, "enderNac"),
    address: emitAddress,
    municipalityName: text(inf, "xLocEmi") ?? municipalityName(issuerCode),
    simplesNacional: text(prest, "regTrib", "opSimpNac"),
    simplesApuration: text(prest, "regTrib", "regApTribSN"),
    specialRegime: text(prest, "regTrib", "regEspTrib")
  })
  const substitution = nfseElement(dps, "subst")
  const data: DanfseData = {
    accessKey: accessKey!,
    nfseNumber: text(inf, "nNFSe")!,
    ...compact({
      dfseNumber: text(inf, "nDFSe"),
      status: text(inf, "cStat"),
      emitter: text(dps, "tpEmit"),
      generator: text(inf, "ambGer")
    }),
    processedAt: text(inf, "dhProc")!,
    issuer: { ...issuer, taxId: issuerTaxId! },
    ...compact({
      taker: readParty(nfseElement(dps, "toma"), "end"),
      intermediary: readParty(nfseElement(dps, "interm"), "end"),
      recipient: readParty(nfseElement(dps, "IBSCBS", "dest"), "end"),
      municipalTax: readMunicipalTax(inf, nfseElement(trib, "tribMun")),
      federalTax: readFederalTax(nfseElement(trib, "tribFed")),
      approximateTaxes: readApproximateTaxes(nfseElement(trib, "totTrib")),
      ibsCbs: readIbsCbs(nfseElement(dps, "IBSCBS"), nfseElement(inf, "IBSCBS")),
      replaces: substitution === undefined ? undefined : {
        accessKey: text(substitution, "chSubstda") ?? "",
        ...compact({ reasonCode: text(substitution, "cMotivo"), reason: text(substitution, "xMotivo") })
      },
      notes: notesOf(inf, nfseElement(dps, "serv", "infoCompl"))
    }),
    service: readService(inf, nfseElement(dps, "serv")),
    amounts: {
      services: text(valores, "vServPrest", "vServ")!,
      ...compact({
        received: text(valores, "vServPrest", "vReceb"),
        unconditionalDiscount: text(valores, "vDescCondIncond", "vDescIncond"),
        conditionalDiscount: text(valores, "vDescCondIncond", "vDescCond"),
        deductions: text(computed, "vCalcDR") ?? text(valores, "vDedRed", "vDR"),
        deductionRate: text(valores, "vDedRed", "pDR"),
        benefitCalculation: text(computed, "vCalcBM"),
        base: text(computed, "vBC"),
        issRate: text(computed, "pAliqAplic"),
        issAmount: text(computed, "vISSQN"),
        totalWithheld: text(computed, "vTotalRet"),
        net: text(computed, "vLiq")
      })
    },
    dps: {
      id: (dps!.getAttribute("Id") ?? "").trim(),
      series: text(dps, "serie") ?? "",
      number: text(dps, "nDPS") ?? "",
      emittedAt: text(dps, "dhEmi") ?? "",
      competence: text(dps, "dCompet") ?? ""
    }
  }
  return Result.succeed({ data, environment: text(dps, "tpAmb") === "1" ? 1 : 2 })
}
