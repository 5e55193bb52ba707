/**
 * The IBS/CBS groups in the national XML (layout v1.01, package of 27/07/2026):
 *
 * - the DPS's `IBSCBS` (`TCRTCInfoIBSCBS`), what the provider declares: the last child of `infDPS`,
 *   right after `valores` (and before the enveloped Signature, which follows `infDPS`);
 * - the NFS-e's `IBSCBS` (`TCRTCIBSCBS`), what the authority computes: in `infNFSe` after `valores`
 *   and `xOutInf`, right before the embedded `DPS`.
 *
 * Both are written in schema order and read back (the local authority and the DANFSe read them).
 */
import type { Element } from "@xmldom/xmldom"
import * as Data from "effect/Data"
import * as Result from "effect/Result"
import type { IbsCbs } from "../../domain/IbsCbs.js"
import type { IbsCbsComputation, IbsCbsPart } from "../../domain/IbsCbsAmounts.js"
import { normalizeTaxId } from "../../domain/TaxId.js"
import { formatCentavos, leaf, nfseElement, nfseText, node, singleLine } from "../xml/XmlText.js"

/** Hundredths of a percent as the schema's TSDec2V2/TSDec3V2 want them: 90 → "0.90", 6000 → "60.00". */
export const formatPercent = (hundredths: number): string =>
  `${Math.trunc(hundredths / 100)}.${String(hundredths % 100).padStart(2, "0")}`

/** "0.90" / "60" / "0" (as the schema admits) → hundredths of a percent; NaN when not a number. */
const parsePercent = (text: string | undefined): number => {
  if (text === undefined || !/^[0-9]+(\.[0-9]{1,2})?$/u.test(text)) return Number.NaN
  const [whole, fraction = ""] = text.split(".")
  return Number(whole) * 100 + Number(fraction.padEnd(2, "0"))
}

/** "1500.00" / "0" → centavos; NaN when not a TSDec15V2-like amount. */
const parseCentavos = (text: string | undefined): number => {
  if (text === undefined || !/^[0-9]+(\.[0-9]{2})?$/u.test(text)) return Number.NaN
  const [whole, fraction = "00"] = text.split(".")
  return Number(whole) * 100 + Number(fraction)
}

const percentInput = (percent: string): string => formatPercent(parsePercent(percent))

const destination = (group: IbsCbs): string => {
  const dest = group.destination
  if (dest === undefined) return ""
  const id = dest.tax_id === undefined
    ? leaf("NIF", singleLine(dest.nif ?? ""))
    : leaf(normalizeTaxId(dest.tax_id).length === 11 ? "CPF" : "CNPJ", normalizeTaxId(dest.tax_id))
  return node(
    "dest",
    id,
    leaf("xNome", singleLine(dest.name)),
    dest.email === undefined ? "" : leaf("email", dest.email)
  )
}

/**
 * The DPS's `<IBSCBS>…</IBSCBS>` for a decoded (and table-checked) group. `finNFSe` is 0: the only
 * purpose the layout has (a regular note).
 */
export const buildDpsIbsCbs = (group: IbsCbs): string => {
  const regular = group.regular_taxation
  const deferral = group.deferral
  return node(
    "IBSCBS",
    leaf("finNFSe", "0"),
    group.personal_use === undefined ? "" : leaf("indFinal", group.personal_use ? "1" : "0"),
    leaf("cIndOp", group.operation_indicator),
    leaf("indDest", group.destination === undefined ? "0" : "1"),
    destination(group),
    node(
      "valores",
      node(
        "trib",
        node(
          "gIBSCBS",
          leaf("CST", group.cst),
          leaf("cClassTrib", group.class_code),
          regular === undefined
            ? ""
            : node("gTribRegular", leaf("CSTReg", regular.cst), leaf("cClassTribReg", regular.class_code)),
          deferral === undefined ? "" : node(
            "gDif",
            leaf("pDifUF", percentInput(deferral.state_ibs_percent)),
            leaf("pDifMun", percentInput(deferral.municipal_ibs_percent)),
            leaf("pDifCBS", percentInput(deferral.cbs_percent))
          )
        )
      )
    )
  )
}

export class IbsCbsUnreadable extends Data.TaggedError("IbsCbsUnreadable")<{ readonly message: string }> {}

const unreadable = (message: string) => Result.fail(new IbsCbsUnreadable({ message }))

/** A TSDec3V2 percentage back as our JSON writes it: "40.00" → "40", "12.50" → "12.5". */
const percentOutput = (text: string | undefined): string | undefined => {
  const hundredths = parsePercent(text)
  if (Number.isNaN(hundredths)) return undefined
  const whole = Math.trunc(hundredths / 100)
  const fraction = hundredths % 100
  return fraction === 0 ? String(whole) : `${whole}.${String(fraction).padStart(2, "0").replace(/0$/u, "")}`
}

/**
 * Reads the `IBSCBS` child of an `infDPS` element back into our JSON: `undefined` (as a success)
 * when the DPS has no group.
 */
export const readDpsIbsCbs = (infDps: Element): Result.Result<IbsCbs | undefined, IbsCbsUnreadable> => {
  const group = nfseElement(infDps, "IBSCBS")
  if (group === undefined) return Result.succeed(undefined)
  const sitClas = nfseElement(group, "valores", "trib", "gIBSCBS")
  const operation = nfseText(group, "cIndOp")
  const cst = nfseText(sitClas, "CST")
  const classCode = nfseText(sitClas, "cClassTrib")
  if (operation === undefined || cst === undefined || classCode === undefined) {
    return unreadable("The IBSCBS group lacks cIndOp, CST or cClassTrib")
  }
  const indFinal = nfseText(group, "indFinal")
  const dest = nfseElement(group, "dest")
  const taxId = nfseText(dest, "CNPJ") ?? nfseText(dest, "CPF")
  const nif = nfseText(dest, "NIF")
  const email = nfseText(dest, "email")
  const regular = nfseElement(sitClas, "gTribRegular")
  const regularCst = nfseText(regular, "CSTReg")
  const regularClass = nfseText(regular, "cClassTribReg")
  const dif = nfseElement(sitClas, "gDif")
  const deferral = dif === undefined ? undefined : {
    state_ibs_percent: percentOutput(nfseText(dif, "pDifUF")),
    municipal_ibs_percent: percentOutput(nfseText(dif, "pDifMun")),
    cbs_percent: percentOutput(nfseText(dif, "pDifCBS"))
  }
  if (deferral !== undefined && Object.values(deferral).some((v) => v === undefined)) {
    return unreadable("The IBSCBS gDif group has an unreadable percentage")
  }
  return Result.succeed({
    operation_indicator: operation,
    ...(indFinal === undefined ? {} : { personal_use: indFinal === "1" }),
    ...(dest === undefined ? {} : {
      destination: {
        ...(taxId === undefined ? {} : { tax_id: taxId }),
        ...(nif === undefined ? {} : { nif }),
        name: nfseText(dest, "xNome") ?? "",
        ...(email === undefined ? {} : { email })
      }
    }),
    cst,
    class_code: classCode,
    ...(regularCst === undefined || regularClass === undefined
      ? {}
      : { regular_taxation: { cst: regularCst, class_code: regularClass } }),
    ...(deferral === undefined ? {} : {
      deferral: {
        state_ibs_percent: deferral.state_ibs_percent!,
        municipal_ibs_percent: deferral.municipal_ibs_percent!,
        cbs_percent: deferral.cbs_percent!
      }
    })
  })
}

export interface NfseIbsCbsInput {
  /** cLocalidadeIncid: IBGE code of the place the IBS/CBS is due (the operation's place). */
  readonly localityCode: string
  /** xLocalidadeIncid: that place's name. */
  readonly localityName: string
  readonly computation: IbsCbsComputation
}

const rates = (name: string, rate: string, reduction: string, effectiveName: string, p: IbsCbsPart) =>
  node(
    name,
    leaf(rate, formatPercent(p.rate)),
    p.reduction === 0 ? "" : leaf(reduction, formatPercent(p.reduction)),
    leaf(effectiveName, formatPercent(p.effectiveRate))
  )

/**
 * The NFS-e's `<IBSCBS>…</IBSCBS>` (TCRTCIBSCBS) from the computation: what the simulator and the
 * local authority put in `infNFSe` after `valores`/`xOutInf`, before `DPS`, when the DPS declared
 * the group (rules E1515/E1517: both or neither).
 */
export const buildNfseIbsCbs = (input: NfseIbsCbsInput): string => {
  const c = input.computation
  const deferred = (name: string, p: IbsCbsPart) => p.deferred === 0 ? "" : leaf(name, formatCentavos(p.deferred))
  return node(
    "IBSCBS",
    leaf("cLocalidadeIncid", input.localityCode),
    leaf("xLocalidadeIncid", singleLine(input.localityName)),
    node(
      "valores",
      leaf("vBC", formatCentavos(c.base)),
      c.reimbursements === 0 ? "" : leaf("vCalcReeRepRes", formatCentavos(c.reimbursements)),
      rates("uf", "pIBSUF", "pRedAliqUF", "pAliqEfetUF", c.stateIbs),
      rates("mun", "pIBSMun", "pRedAliqMun", "pAliqEfetMun", c.municipalIbs),
      rates("fed", "pCBS", "pRedAliqCBS", "pAliqEfetCBS", c.cbs)
    ),
    node(
      "totCIBS",
      leaf("vTotNF", formatCentavos(c.noteTotal)),
      node(
        "gIBS",
        leaf("vIBSTot", formatCentavos(c.ibsTotal)),
        node("gIBSUFTot", deferred("vDifUF", c.stateIbs), leaf("vIBSUF", formatCentavos(c.stateIbs.amount))),
        node(
          "gIBSMunTot",
          deferred("vDifMun", c.municipalIbs),
          leaf("vIBSMun", formatCentavos(c.municipalIbs.amount))
        )
      ),
      node("gCBS", deferred("vDifCBS", c.cbs), leaf("vCBS", formatCentavos(c.cbs.amount)))
    )
  )
}

/** The NFS-e's IBS/CBS values as a reader (the DANFSe, the document's values) needs them. */
export interface NfseIbsCbsValues {
  readonly localityCode: string
  readonly localityName: string
  readonly computation: IbsCbsComputation
}

const readPart = (
  values: Element | undefined,
  totals: Element | undefined,
  names: readonly [string, string, string, string, string, string]
): IbsCbsPart => {
  const [group, rate, reduction, effectiveRate, deferred, amount] = names
  const reductionText = nfseText(values, group, reduction)
  const deferredText = nfseText(totals, deferred)
  return {
    rate: parsePercent(nfseText(values, group, rate)),
    reduction: reductionText === undefined ? 0 : parsePercent(reductionText),
    effectiveRate: parsePercent(nfseText(values, group, effectiveRate)),
    deferred: deferredText === undefined ? 0 : parseCentavos(deferredText),
    amount: parseCentavos(nfseText(totals, amount))
  }
}

/** Reads the `IBSCBS` child of an `infNFSe` element: `undefined` (a success) when there is none. */
export const readNfseIbsCbs = (infNfse: Element): Result.Result<NfseIbsCbsValues | undefined, IbsCbsUnreadable> => {
  const group = nfseElement(infNfse, "IBSCBS")
  if (group === undefined) return Result.succeed(undefined)
  const values = nfseElement(group, "valores")
  const totals = nfseElement(group, "totCIBS")
  const reimbursements = nfseText(values, "vCalcReeRepRes")
  const computation: IbsCbsComputation = {
    base: parseCentavos(nfseText(values, "vBC")),
    reimbursements: reimbursements === undefined ? 0 : parseCentavos(reimbursements),
    stateIbs: readPart(values, nfseElement(totals, "gIBS", "gIBSUFTot"), [
      "uf",
      "pIBSUF",
      "pRedAliqUF",
      "pAliqEfetUF",
      "vDifUF",
      "vIBSUF"
    ]),
    municipalIbs: readPart(values, nfseElement(totals, "gIBS", "gIBSMunTot"), [
      "mun",
      "pIBSMun",
      "pRedAliqMun",
      "pAliqEfetMun",
      "vDifMun",
      "vIBSMun"
    ]),
    cbs: readPart(values, nfseElement(totals, "gCBS"), [
      "fed",
      "pCBS",
      "pRedAliqCBS",
      "pAliqEfetCBS",
      "vDifCBS",
      "vCBS"
    ]),
    ibsTotal: parseCentavos(nfseText(totals, "gIBS", "vIBSTot")),
    noteTotal: parseCentavos(nfseText(totals, "vTotNF"))
  }
  const localityCode = nfseText(group, "cLocalidadeIncid")
  const localityName = nfseText(group, "xLocalidadeIncid")
  const numbers = [
    computation.base,
    computation.ibsTotal,
    computation.noteTotal,
    ...[computation.stateIbs, computation.municipalIbs, computation.cbs].flatMap((p) => Object.values(p))
  ]
  if (localityCode === undefined || localityName === undefined || numbers.some(Number.isNaN)) {
    return unreadable("The NFS-e's IBSCBS group lacks its locality or has an unreadable rate or amount")
  }
  return Result.succeed({ localityCode, localityName, computation })
}
