/**
 * An oracle for the DANFSe: every value of an NFS-e XML, written as a reader expects it on the
 * page, looked for in the PDF's text as `pdftotext -layout` (poppler, independent of pdfkit) reads
 * it. It is written apart from the renderer: its own formatting of amounts, rates, ids and dates
 * (Brasília time through Intl, not the renderer's arithmetic), its own words for the codes the
 * test notes use, and the IBGE table read from the data file directly. An element it does not know
 * fails the check, so a new field in a test note must be given its expected form here.
 */
import { DOMParser, type Element } from "@xmldom/xmldom"
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import table from "../../src/domain/ibge/municipalities.json" with { type: "json" }

/** `pdftotext -layout` of the whole PDF. */
export const pdfText = (pdf: Uint8Array): string => {
  const dir = mkdtempSync(join(tmpdir(), "danfse-text-"))
  try {
    writeFileSync(join(dir, "note.pdf"), pdf)
    return execFileSync("pdftotext", ["-layout", join(dir, "note.pdf"), "-"], { encoding: "utf8" })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Technical fields no DANFSe prints (software versions, emission type and process); tpAmb is the band's. */
const NOT_PRINTED = new Set(["verAplic", "tpEmis", "procEmi", "tpAmb"])

const MONEY = new Set([
  "vServ",
  "vReceb",
  "vDescIncond",
  "vDescCond",
  "vDR",
  "vCalcDR",
  "vCalcBM",
  "vBC",
  "vISSQN",
  "vTotalRet",
  "vLiq",
  "vBCPisCofins",
  "vPis",
  "vCofins",
  "vRetCP",
  "vRetIRRF",
  "vRetCSLL",
  "vTotTribFed",
  "vTotTribEst",
  "vTotTribMun",
  "vRedBCBM",
  "vTotNF",
  "vIBSTot",
  "vIBSUF",
  "vIBSMun",
  "vCBS",
  "vDedutivelRedutivel",
  "vDeducaoReducao"
])
const RATES = new Set([
  "pAliq",
  "pAliqAplic",
  "pAliqPis",
  "pAliqCofins",
  "pTotTribFed",
  "pTotTribEst",
  "pTotTribMun",
  "pTotTribSN",
  "pDR",
  "pRedBCBM",
  "pRedutor",
  "pIBSUF",
  "pAliqEfetUF",
  "pIBSMun",
  "pAliqEfetMun",
  "pCBS",
  "pAliqEfetCBS"
])
const MUNICIPALITY_CODES = new Set(["cMun", "cLocPrestacao", "cLocIncid", "cLocEmi", "cLocalidadeIncid"])

/** The words expected for the codes the test notes use. */
const WORDS: Record<string, Record<string, string>> = {
  cStat: { "100": "NFS-e gerada", "101": "NFS-e de substituição gerada" },
  tpEmit: { "1": "Prestador" },
  ambGer: { "2": "Sistema Nacional da NFS-e" },
  tribISSQN: { "1": "Operação tributável", "2": "Imunidade", "3": "Exportação de serviço" },
  tpRetISSQN: { "1": "Não retido", "2": "Retido pelo tomador", "3": "Retido pelo intermediário" },
  opSimpNac: { "1": "Não optante", "2": "(MEI)", "3": "(ME/EPP)" },
  regApTribSN: { "1": "Tributos federais e municipal pelo SN", "2": "ISSQN por fora do SN" },
  regEspTrib: { "0": "Nenhum", "5": "Profissional autônomo" },
  tpImunidade: { "2": "(CF88, art. 150, VI, b)", "3": "(CF88, art. 150, VI, c)" },
  tpRetPisCofins: { "1": "PIS/COFINS retidos", "3": "PIS/COFINS/CSLL retidos" },
  cMotivo: { "99": "Outros" },
  mdPrestacao: { "1": "Transfronteiriço" },
  vincPrest: { "0": "Sem vínculo" },
  movTempBens: { "1": "Não" },
  mdic: { "1": "Enviar ao MDIC" },
  cNaoNIF: { "2": "NIF não exigido" },
  indDest: { "0": "O próprio tomador", "1": "Outra pessoa ou estabelecimento" },
  indFinal: { "0": "Não" },
  finNFSe: { "0": "NFS-e regular" },
  indTotTrib: { "0": "Não informado (Decreto 8.264/2014)" },
  tpBM: { "3": "Redução da BC em R$" },
  tpSusp: { "1": "Suspensa por decisão judicial" },
  tpDedRed: { "2": "Materiais" }
}

const ptBr = (decimal: string): string => {
  const [integer, fraction = "00"] = decimal.split(".")
  return `${integer!.replace(/\B(?=(\d{3})+(?!\d))/g, ".")},${fraction.padEnd(2, "0")}`
}

const brasilia = new Intl.DateTimeFormat("pt-BR", {
  timeZone: "America/Sao_Paulo",
  day: "2-digit",
  month: "2-digit",
  year: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hourCycle: "h23"
})

const masked = (digits: string): string =>
  digits.length === 14
    ? digits.replace(/^(\d{2})(\d{3})(\d{3})(\d{4})(\d{2})$/, "$1.$2.$3/$4-$5")
    : digits.replace(/^(\d{3})(\d{3})(\d{3})(\d{2})$/, "$1.$2.$3-$4")

const phone = (digits: string): string =>
  digits.length === 11
    ? digits.replace(/^(\d{2})(\d{5})(\d{4})$/, "($1) $2-$3")
    : digits.replace(/^(\d{2})(\d{4})(\d{4})$/, "($1) $2-$3")

const municipalities = new Map((table as ReadonlyArray<string>).map((row) => {
  const [code, , name] = row.split(";")
  return [code!, name!] as const
}))

/** What the page shows for one element: any of the strings, or null for a field no DANFSe prints. */
const expectedFor = (name: string, parent: string, value: string): ReadonlyArray<string> | null => {
  if (NOT_PRINTED.has(name)) return null
  if (MONEY.has(name)) return [`R$ ${ptBr(value)}`]
  if (RATES.has(name)) return [`${ptBr(value)}%`]
  if (MUNICIPALITY_CODES.has(name)) return [municipalities.get(value) ?? `missing IBGE code ${value}`]
  if (name === "CST" && parent === "piscofins") return [`${value} - `]
  if (WORDS[name] !== undefined) return [WORDS[name]![value] ?? `no expected words for ${name}=${value}`]
  switch (name) {
    case "CNPJ":
    case "CPF":
      return [masked(value), value]
    case "CEP":
      return [value.replace(/^(\d{5})(\d{3})$/, "$1-$2")]
    case "fone":
      return [phone(value)]
    case "UF":
      return [`- ${value}`]
    case "dhProc":
    case "dhEmi":
      return [brasilia.format(new Date(value)).replace(",", "")]
    case "dCompet":
    case "dtEmiDoc":
    case "dtIni":
    case "dtFim":
      return [value.split("-").reverse().join("/")]
    case "cTribNac":
      return [value.replace(/^(\d{2})(\d{2})(\d{2})$/, "$1.$2.$3")]
    case "cNBS":
      return [value.replace(/^(\d)(\d{4})(\d{2})(\d{2})$/, "$1.$2.$3.$4")]
    case "vServMoeda":
      return [ptBr(value)]
    default:
      return [value.trim()]
  }
}

const flat = (text: string) => text.replace(/\s+/g, " ")

/** Found as a phrase, or (for a value wrapped over lines between other columns) word by word. */
const shows = (page: string, expected: string): boolean =>
  page.includes(flat(expected)) || flat(expected).split(" ").every((word) => page.includes(word))

/** The values of the note's XML (its signature aside) that the page does not show, as "element=value". */
export const missingValues = (xml: string, text: string): ReadonlyArray<string> => {
  const page = flat(text)
  const missing: Array<string> = []
  const visit = (element: Element) => {
    if (element.localName === "Signature") return
    const children = Array.from(element.childNodes).filter((node) => node.nodeType === 1) as Array<Element>
    if (children.length === 0) {
      const value = (element.textContent ?? "").trim()
      const expected = expectedFor(element.localName!, (element.parentNode as Element).localName!, value)
      if (value !== "" && expected !== null && !expected.some((form) => shows(page, form))) {
        missing.push(`${element.localName}=${value} (expected ${expected.join(" or ")})`)
      }
    }
    children.forEach(visit)
  }
  const root = new DOMParser().parseFromString(xml, "application/xml").documentElement!
  visit(root)
  const key = /Id="NFS(\d{50})"/.exec(xml)?.[1]
  if (key === undefined || !page.replace(/ /g, "").includes(key)) missing.push(`access key ${key}`)
  const dpsId = /Id="(DPS\d{42})"/.exec(xml)?.[1]
  if (dpsId === undefined || !page.includes(dpsId)) missing.push(`DPS id ${dpsId}`)
  return missing
}

/** Each page's size in points, as poppler's `pdfinfo` reads it. */
export const pageSizes = (pdf: Uint8Array): Array<{ readonly width: number; readonly height: number }> => {
  const dir = mkdtempSync(join(tmpdir(), "pdf-info-"))
  try {
    writeFileSync(join(dir, "doc.pdf"), pdf)
    const info = execFileSync("pdfinfo", ["-f", "1", "-l", "9999", join(dir, "doc.pdf")], { encoding: "utf8" })
    return [...info.matchAll(/^Page\s+\d+ size:\s+([\d.]+) x ([\d.]+) pts/gm)].map((m) => ({
      width: Number(m[1]),
      height: Number(m[2])
    }))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
