/**
 * The local SEFAZ's number voiding (`/ws/NFeInutilizacao4.asmx`): an `inutNFe` checked as a SEFAZ
 * checks it (schema 215, signature 297), the range refused when one of its numbers was used by a
 * note this SEFAZ authorized (241) or overlaps a range voided before (256); the same range again is
 * the duplicity (563), a retry's; otherwise voided (102) with a protocol.
 */
import * as Result from "effect/Result"
import { validateVoiding, voidingAnswer, type VoidingInput } from "../../src/authority/sefaz/NfeVoiding.js"
import { verifyEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { parseXml } from "../../src/authority/xml/XmlText.js"
import type { Environment } from "../../src/domain/Principal.js"

const NFE = "http://www.portalfiscal.inf.br/nfe"

/** A range this SEFAZ voided. */
export interface VoidedRange {
  readonly issuerTaxId: string
  readonly model: string
  readonly series: number
  readonly from: number
  readonly to: number
  readonly protocol: string
  /** The signed request as received. */
  readonly requestXml: string
}

export interface LocalVoidingOptions {
  readonly environment: Environment
  readonly application: string
  /** The access keys of the notes this SEFAZ authorized. */
  readonly usedKeys: () => ReadonlyArray<string>
  readonly protocolFor: (stateCode: string, at: Date) => string
}

export const makeLocalVoiding = (options: LocalVoidingOptions) => {
  const voided: Array<VoidedRange> = []

  const answer = (message: string, at: Date): string => {
    const parsed = parseXml(message)
    const text = (name: string) =>
      Result.isFailure(parsed) ? "" : parsed.success.getElementsByTagNameNS(NFE, name).item(0)?.textContent ?? ""
    const request: VoidingInput = {
      environment: options.environment,
      stateCode: text("cUF") || "35",
      issuerTaxId: text("CNPJ"),
      model: text("mod") === "65" ? "65" : "55",
      series: Number(text("serie")),
      from: Number(text("nNFIni")),
      to: Number(text("nNFFin")),
      reason: text("xJust"),
      requestedAt: at
    }
    const outcome = (status: string, reason: string, protocol?: string) =>
      voidingAnswer({ request, application: options.application, at, status, reason, protocol })
    if (Result.isFailure(validateVoiding("inutNFe", message))) return outcome("215", "Rejeição: Falha no schema XML")
    if (Result.isFailure(verifyEnveloped(message, "infInut"))) {
      return outcome("297", "Rejeição: Assinatura difere do calculado")
    }
    const sameSeries = (range: { issuerTaxId: string; model: string; series: number }) =>
      range.issuerTaxId === request.issuerTaxId && range.model === request.model && range.series === request.series
    const used = options.usedKeys().some((key) => {
      const number = Number(key.slice(25, 34))
      return sameSeries({
        issuerTaxId: key.slice(6, 20),
        model: key.slice(20, 22),
        series: Number(key.slice(22, 25))
      }) &&
        number >= request.from && number <= request.to
    })
    if (used) return outcome("241", "Rejeição: Um número da faixa já foi utilizado")
    const before = voided.filter(sameSeries)
    if (before.some((range) => range.from === request.from && range.to === request.to)) {
      return outcome("563", "Rejeição: Já existe pedido de Inutilização com a mesma faixa de inutilização")
    }
    if (before.some((range) => range.from <= request.to && request.from <= range.to)) {
      return outcome("256", "Rejeição: Uma NF-e da faixa já está inutilizada na Base de dados da SEFAZ")
    }
    const protocol = options.protocolFor(request.stateCode, at)
    voided.push({ ...request, protocol, requestXml: message })
    return outcome("102", "Inutilização de número homologado", protocol)
  }

  return { answer, voided: (): ReadonlyArray<VoidedRange> => voided }
}
