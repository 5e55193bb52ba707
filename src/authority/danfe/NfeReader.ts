/**
 * Reads an authorized NF-e or NFC-e (`nfeProc`: the note and its `protNFe`, layout 4.00) into what
 * its DANFE prints. Values are kept as the XML writes them (amounts as decimal strings, dates with
 * their offset); absent elements stay absent. The structure is leiauteNFe_v4.00.xsd's. The
 * signature is not checked here: the note was checked when the authority's answer was received.
 */
import type { Element } from "@xmldom/xmldom"
import * as Result from "effect/Result"
import { childrenIn, elementIn, parseXml, textIn } from "../xml/XmlText.js"

const NFE = "http://www.portalfiscal.inf.br/nfe"

export interface DanfeAddress {
  readonly street: string
  readonly number: string
  readonly complement?: string | undefined
  readonly district: string
  readonly municipality: string
  readonly state: string
  readonly postalCode?: string | undefined
  readonly phone?: string | undefined
}

export interface DanfeParty {
  readonly name?: string | undefined
  /** CNPJ or CPF digits, or a foreigner's id. */
  readonly taxId?: string | undefined
  readonly foreignId?: string | undefined
  readonly stateRegistration?: string | undefined
  readonly address?: DanfeAddress | undefined
  readonly email?: string | undefined
}

export interface DanfeItem {
  readonly code: string
  readonly description: string
  readonly ncm: string
  /** Origin and CST (or CSOSN) together, as the DANFE's O/CST column prints them: "000", "0102". */
  readonly taxSituation: string
  readonly cfop: string
  readonly unit: string
  readonly quantity: string
  readonly unitValue: string
  readonly value: string
  readonly discount?: string | undefined
  readonly icmsBase?: string | undefined
  readonly icms?: string | undefined
  readonly icmsRate?: string | undefined
  readonly ipi?: string | undefined
  readonly ipiRate?: string | undefined
  readonly additional?: string | undefined
}

/** ICMSTot, the note's totals. */
export interface DanfeTotals {
  readonly icmsBase: string
  readonly icms: string
  readonly stBase: string
  readonly st: string
  readonly fcpSt?: string | undefined
  readonly importTax?: string | undefined
  readonly products: string
  readonly freight: string
  readonly insurance: string
  readonly discount: string
  readonly other: string
  readonly ipi: string
  readonly pis: string
  readonly cofins: string
  readonly total: string
  readonly approximateTaxes?: string | undefined
}

export interface DanfePayment {
  /** tPag, the national code of the means of payment. */
  readonly method: string
  readonly description?: string | undefined
  readonly amount: string
}

export interface DanfeNote {
  readonly accessKey: string
  readonly model: "55" | "65"
  readonly series: string
  readonly number: string
  readonly issuedAt: string
  readonly operationNature: string
  /** tpNF: 0 an entry, 1 an exit. */
  readonly direction: string
  /** tpAmb: 1 production, 2 homologation. */
  readonly environment: 1 | 2
  /** tpEmis: 1 normal, 9 NFC-e offline contingency. */
  readonly emissionType: string
  readonly contingency?: { readonly since: string; readonly reason: string } | undefined
  readonly issuer: DanfeParty & { readonly tradeName?: string | undefined; readonly crt: string }
  readonly recipient?: DanfeParty | undefined
  readonly items: ReadonlyArray<DanfeItem>
  readonly totals: DanfeTotals
  /** modFrete. */
  readonly freightMode: string
  readonly payments: ReadonlyArray<DanfePayment>
  readonly change?: string | undefined
  readonly notes?: string | undefined
  readonly fiscoNotes?: string | undefined
  /** The NFC-e's consumer QR code and query address (infNFeSupl). */
  readonly qrCode?: string | undefined
  readonly queryUrl?: string | undefined
  /** The authorization (protNFe): absent on a note not yet transmitted. */
  readonly protocol?: { readonly number: string; readonly receivedAt: string } | undefined
}

const text = (from: Element | undefined, ...path: ReadonlyArray<string>): string | undefined => {
  const value = textIn(NFE, from, ...path)?.trim()
  return value === undefined || value === "" ? undefined : value
}

const required = (from: Element | undefined, ...path: ReadonlyArray<string>): string => {
  const value = text(from, ...path)
  if (value === undefined) throw new MissingElement(path.join("/"))
  return value
}

class MissingElement extends Error {}

const addressOf = (element: Element | undefined): DanfeAddress | undefined =>
  element === undefined ? undefined : {
    street: required(element, "xLgr"),
    number: required(element, "nro"),
    complement: text(element, "xCpl"),
    district: required(element, "xBairro"),
    municipality: required(element, "xMun"),
    state: required(element, "UF"),
    postalCode: text(element, "CEP"),
    phone: text(element, "fone")
  }

/** The one child of a choice group (ICMS00, ICMSSN102, IPITrib…), whatever its name. */
const onlyChild = (parent: Element | undefined): Element | undefined => {
  if (parent === undefined) return undefined
  for (let n = parent.firstChild; n !== null; n = n.nextSibling) {
    if (n.nodeType === 1) return n as Element // an element node
  }
  return undefined
}

const itemOf = (det: Element): DanfeItem => {
  const prod = elementIn(NFE, det, "prod")
  const icms = onlyChild(elementIn(NFE, det, "imposto", "ICMS"))
  const ipi = elementIn(NFE, det, "imposto", "IPI", "IPITrib")
  return {
    code: required(prod, "cProd"),
    description: required(prod, "xProd"),
    ncm: required(prod, "NCM"),
    taxSituation: `${text(icms, "orig") ?? ""}${text(icms, "CST") ?? text(icms, "CSOSN") ?? ""}`,
    cfop: required(prod, "CFOP"),
    unit: required(prod, "uCom"),
    quantity: required(prod, "qCom"),
    unitValue: required(prod, "vUnCom"),
    value: required(prod, "vProd"),
    discount: text(prod, "vDesc"),
    icmsBase: text(icms, "vBC"),
    icms: text(icms, "vICMS"),
    icmsRate: text(icms, "pICMS"),
    ipi: text(ipi, "vIPI"),
    ipiRate: text(ipi, "pIPI"),
    additional: text(det, "infAdProd")
  }
}

const partyOf = (element: Element, address: string): DanfeParty => ({
  name: text(element, "xNome"),
  taxId: text(element, "CNPJ") ?? text(element, "CPF"),
  foreignId: text(element, "idEstrangeiro"),
  stateRegistration: text(element, "IE"),
  address: addressOf(elementIn(NFE, element, address)),
  email: text(element, "email")
})

const read = (root: Element): DanfeNote => {
  const nfe = root.localName === "nfeProc" ? elementIn(NFE, root, "NFe") : root
  const inf = elementIn(NFE, nfe, "infNFe")
  if (inf === undefined) throw new MissingElement("infNFe")
  const ide = elementIn(NFE, inf, "ide")
  const emit = elementIn(NFE, inf, "emit")
  if (emit === undefined) throw new MissingElement("emit")
  const dest = elementIn(NFE, inf, "dest")
  const tot = elementIn(NFE, inf, "total", "ICMSTot")
  const infProt = elementIn(NFE, root, "protNFe", "infProt")
  const model = required(ide, "mod")
  const since = text(ide, "dhCont")
  const nProt = text(infProt, "nProt")
  return {
    accessKey: (inf.getAttribute("Id") ?? "").replace(/^NFe/, ""),
    model: model === "65" ? "65" : "55",
    series: required(ide, "serie"),
    number: required(ide, "nNF"),
    issuedAt: required(ide, "dhEmi"),
    operationNature: required(ide, "natOp"),
    direction: required(ide, "tpNF"),
    environment: required(ide, "tpAmb") === "1" ? 1 : 2,
    emissionType: required(ide, "tpEmis"),
    contingency: since === undefined ? undefined : { since, reason: text(ide, "xJust") ?? "" },
    issuer: { ...partyOf(emit, "enderEmit"), tradeName: text(emit, "xFant"), crt: required(emit, "CRT") },
    recipient: dest === undefined ? undefined : partyOf(dest, "enderDest"),
    items: childrenIn(NFE, inf, "det").map(itemOf),
    totals: {
      icmsBase: required(tot, "vBC"),
      icms: required(tot, "vICMS"),
      stBase: required(tot, "vBCST"),
      st: required(tot, "vST"),
      fcpSt: text(tot, "vFCPST"),
      importTax: text(tot, "vII"),
      products: required(tot, "vProd"),
      freight: required(tot, "vFrete"),
      insurance: required(tot, "vSeg"),
      discount: required(tot, "vDesc"),
      other: required(tot, "vOutro"),
      ipi: required(tot, "vIPI"),
      pis: required(tot, "vPIS"),
      cofins: required(tot, "vCOFINS"),
      total: required(tot, "vNF"),
      approximateTaxes: text(tot, "vTotTrib")
    },
    freightMode: required(inf, "transp", "modFrete"),
    payments: childrenIn(NFE, elementIn(NFE, inf, "pag") ?? inf, "detPag").map((detPag) => ({
      method: required(detPag, "tPag"),
      description: text(detPag, "xPag"),
      amount: required(detPag, "vPag")
    })),
    change: text(inf, "pag", "vTroco"),
    notes: text(inf, "infAdic", "infCpl"),
    fiscoNotes: text(inf, "infAdic", "infAdFisco"),
    qrCode: text(nfe, "infNFeSupl", "qrCode"),
    queryUrl: text(nfe, "infNFeSupl", "urlChave"),
    protocol: nProt === undefined ? undefined : { number: nProt, receivedAt: required(infProt, "dhRecbto") }
  }
}

/** The note's printable values, or why its XML is not an NF-e 4.00 this reader knows. */
export const readNfe = (xml: string): Result.Result<DanfeNote, string> =>
  Result.flatMap(parseXml(xml), (doc) => {
    const root = doc.documentElement
    if (root === null || root.namespaceURI !== NFE || (root.localName !== "nfeProc" && root.localName !== "NFe")) {
      return Result.fail("not an nfeProc or NFe of the NF-e namespace")
    }
    try {
      return Result.succeed(read(root))
    } catch (error) {
      if (error instanceof MissingElement) return Result.fail(`the note has no ${error.message}`)
      throw error
    }
  })
