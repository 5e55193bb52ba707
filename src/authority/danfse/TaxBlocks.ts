/**
 * The blocks of what was sold and what it owes, in the national layout's order: the service,
 * municipal taxation (ISSQN), federal taxation, the note's total with its retentions and net value,
 * the approximate taxes, the IBS/CBS of the tax reform when the note carries it, and the note this
 * one replaces. Values are the XML's, in pt-BR; "-" where the XML has nothing.
 */
import { municipalityOf } from "../../domain/Municipalities.js"
import type { DanfseData } from "./DanfseData.js"
import {
  codeAndText,
  EMPTY,
  formatMoney,
  formatMunicipality,
  formatNbsCode,
  formatNumber,
  formatRate,
  formatServiceCode,
  joined,
  present,
  sumAmounts
} from "./Format.js"
import * as Labels from "./Labels.js"
import { type Block, type Doc, type Field, FONT, prepareBlock, type Row, TEXT_WIDTH, wrapText } from "./Layout.js"

const value = (raw: string | undefined) => present(raw) ? raw : EMPTY

const stateOf = (code: string | undefined) => present(code) ? municipalityOf(code)?.state : undefined

const fields = (...list: ReadonlyArray<Field>): Row => ({ kind: "fields", fields: list })

const field = (label: string, text: string, span: number, bold = false): Field => ({ label, value: text, span, bold })

/** The service's codes and place, and its foreign-trade data when it is an export or import. */
export const serviceBlock = (doc: Doc, nfse: DanfseData): Block => {
  const service = nfse.service
  const trade = service.foreignTrade
  return prepareBlock(doc, "SERVIÇO PRESTADO", [
    fields(
      field("CÓDIGO DE TRIBUTAÇÃO NACIONAL", codeAndText(formatServiceCode(service.code), service.codeDescription), 6),
      field("CÓDIGO DE TRIBUTAÇÃO MUNICIPAL", codeAndText(service.municipalCode, service.municipalCodeDescription), 6)
    ),
    fields(
      field(
        "CÓDIGO NBS",
        codeAndText(present(service.nbsCode) ? formatNbsCode(service.nbsCode) : undefined, service.nbsDescription),
        5
      ),
      field(
        "LOCAL DA PRESTAÇÃO",
        formatMunicipality(service.municipalityName, service.municipalityCode, stateOf(service.municipalityCode)),
        3
      ),
      field("PAÍS DA PRESTAÇÃO", value(service.countryCode), 2),
      field("CÓDIGO INTERNO", value(service.internalCode), 2)
    ),
    ...(trade === undefined ? [] : [
      fields(
        field("MODO DE PRESTAÇÃO", Labels.tradeMode(trade.mode), 3),
        field("VÍNCULO ENTRE AS PARTES", Labels.tradeLink(trade.link), 2),
        field(
          "MOEDA / VALOR NA MOEDA",
          joined(trade.currency, present(trade.amountInCurrency) ? formatNumber(trade.amountInCurrency) : undefined),
          3
        ),
        field("APOIO AO COMEX: PRESTADOR / TOMADOR", joined(trade.providerSupport, trade.takerSupport), 4)
      ),
      fields(
        field("MOVIMENTAÇÃO TEMPORÁRIA DE BENS", Labels.temporaryGoods(trade.temporaryGoods), 4),
        field("DECLARAÇÃO DE IMPORTAÇÃO", value(trade.importDeclaration), 2),
        field("REGISTRO DE EXPORTAÇÃO", value(trade.exportRegistration), 3),
        field("COMPARTILHAR COM O MDIC", Labels.mdic(trade.mdic), 3)
      )
    ])
  ])
}

const benefitOf = (nfse: DanfseData): string => {
  const tax = nfse.municipalTax
  if (!present(tax?.benefitNumber)) return EMPTY
  const reduction = present(tax.benefitReductionAmount)
    ? `redução de ${formatMoney(tax.benefitReductionAmount)}`
    : present(tax.benefitReductionRate)
    ? `redução de ${formatRate(tax.benefitReductionRate)}`
    : undefined
  return joined(
    tax.benefitNumber,
    Labels.benefitKind(tax.benefitKind) === EMPTY ? undefined : Labels.benefitKind(tax.benefitKind),
    reduction
  )
}

/** ISSQN: how the service is taxed, where, withheld or not, and the base, rate and amount. */
export const municipalTaxBlock = (doc: Doc, nfse: DanfseData): Block => {
  const tax = nfse.municipalTax
  const amounts = nfse.amounts
  return prepareBlock(doc, "TRIBUTAÇÃO MUNICIPAL (ISSQN)", [
    fields(
      field("TRIBUTAÇÃO DO ISSQN", Labels.issTaxation(tax?.taxation), 3),
      field("PAÍS RESULTADO DA PRESTAÇÃO", value(tax?.resultCountry), 2),
      field(
        "MUNICÍPIO DE INCIDÊNCIA DO ISSQN",
        formatMunicipality(tax?.incidenceName, tax?.incidenceCode, stateOf(tax?.incidenceCode)),
        4
      ),
      field("RETENÇÃO DO ISSQN", Labels.issRetention(tax?.retention), 3)
    ),
    fields(
      field("TIPO DE IMUNIDADE", Labels.immunity(tax?.immunity), 3),
      field("SUSPENSÃO DA EXIGIBILIDADE", Labels.suspension(tax?.suspension), 3),
      field("PROCESSO DA SUSPENSÃO", value(tax?.suspensionProcess), 3),
      field("BENEFÍCIO MUNICIPAL", benefitOf(nfse), 3)
    ),
    fields(
      field("VALOR DO SERVIÇO", formatMoney(amounts.services), 2),
      field("DESCONTO INCONDICIONADO", formatMoney(amounts.unconditionalDiscount), 2),
      field(
        "DEDUÇÕES / REDUÇÕES",
        joined(
          formatMoney(amounts.deductions),
          present(amounts.deductionRate) ? formatRate(amounts.deductionRate) : undefined
        ),
        2
      ),
      field("CÁLCULO DO BM", formatMoney(amounts.benefitCalculation), 2),
      field(
        "BC ISSQN / ALÍQUOTA",
        joined(formatMoney(amounts.base), formatRate(amounts.issRate ?? tax?.declaredRate)),
        2
      ),
      field("ISSQN APURADO", formatMoney(amounts.issAmount), 2)
    )
  ])
}

/** PIS/COFINS and the federal retentions, or one line when the note has no federal group. */
export const federalTaxBlock = (doc: Doc, nfse: DanfseData): Block => {
  const tax = nfse.federalTax
  if (tax === undefined) {
    return prepareBlock(doc, "TRIBUTAÇÃO FEDERAL", [{
      kind: "centered",
      text: "SEM TRIBUTAÇÃO FEDERAL INFORMADA NA NFS-e"
    }])
  }
  return prepareBlock(doc, "TRIBUTAÇÃO FEDERAL", [
    fields(
      field("IRRF RETIDO", formatMoney(tax.incomeTax), 2),
      field("CONTRIBUIÇÃO PREVIDENCIÁRIA RETIDA", formatMoney(tax.socialSecurity), 3),
      field("CSLL RETIDA", formatMoney(tax.csll), 2),
      field("PIS", formatMoney(tax.pis), 2),
      field("COFINS", formatMoney(tax.cofins), 3)
    ),
    fields(
      field("SITUAÇÃO TRIBUTÁRIA PIS/COFINS (CST)", Labels.pisCofinsCst(tax.pisCofinsCst), 4),
      field("BC PIS/COFINS", formatMoney(tax.pisCofinsBase), 2),
      field("ALÍQUOTA PIS / COFINS", joined(formatRate(tax.pisRate), formatRate(tax.cofinsRate)), 3),
      field("TIPO DE RETENÇÃO DO PIS/COFINS", Labels.pisCofinsRetention(tax.pisCofinsRetention), 3)
    )
  ])
}

/**
 * The federal amounts withheld, as `vTotalRet` counts them: CP, IRRF and CSLL. PIS and COFINS are
 * the provider's contributions due, whatever tpRetPisCofins says (the package of 27/07/2026).
 */
const federalWithheld = (nfse: DanfseData): string | undefined => {
  const tax = nfse.federalTax
  if (tax === undefined) return undefined
  return sumAmounts(tax.socialSecurity, tax.incomeTax, tax.csll)
}

/** The note's total: the service's value, discounts, what was withheld and the net value. */
export const totalsBlock = (doc: Doc, nfse: DanfseData): Block => {
  const amounts = nfse.amounts
  const retained = nfse.municipalTax?.retention === "2" || nfse.municipalTax?.retention === "3"
  return prepareBlock(doc, "VALOR TOTAL DA NFS-e", [
    fields(
      field("VALOR DO SERVIÇO", formatMoney(amounts.services), 3),
      field("DESCONTO CONDICIONADO", formatMoney(amounts.conditionalDiscount), 3),
      field("DESCONTO INCONDICIONADO", formatMoney(amounts.unconditionalDiscount), 3),
      field("VALOR RECEBIDO PELO INTERMEDIÁRIO", formatMoney(amounts.received), 3)
    ),
    fields(
      field("ISSQN RETIDO", retained ? formatMoney(amounts.issAmount) : EMPTY, 3),
      field("RETENÇÕES FEDERAIS", formatMoney(federalWithheld(nfse)), 3),
      field("TOTAL DAS RETENÇÕES", formatMoney(amounts.totalWithheld), 3),
      field("VALOR LÍQUIDO DA NFS-e", formatMoney(amounts.net), 3, true)
    )
  ])
}

/** Lei 12.741/2012's approximate taxes, as the note gives them (amounts, percentages or the Simples rate). */
export const approximateTaxesBlock = (doc: Doc, nfse: DanfseData): Block => {
  const taxes = nfse.approximateTaxes
  const title = "TOTAIS APROXIMADOS DOS TRIBUTOS"
  if (taxes === undefined) return prepareBlock(doc, title, [{ kind: "centered", text: "NÃO INFORMADOS NA NFS-e" }])
  if (present(taxes.indicator) && !present(taxes.federal) && !present(taxes.federalRate)) {
    return prepareBlock(doc, title, [fields(field("INDICADOR", Labels.totalTaxesIndicator(taxes.indicator), 12))])
  }
  if (present(taxes.simplesRate)) {
    return prepareBlock(doc, title, [
      fields(field("PERCENTUAL APROXIMADO DOS TRIBUTOS (SIMPLES NACIONAL)", formatRate(taxes.simplesRate), 12))
    ])
  }
  const of = (amount: string | undefined, rate: string | undefined) =>
    joined(present(amount) ? formatMoney(amount) : undefined, present(rate) ? formatRate(rate) : undefined)
  return prepareBlock(doc, title, [
    fields(
      field("FEDERAIS", of(taxes.federal, taxes.federalRate), 4),
      field("ESTADUAIS", of(taxes.state, taxes.stateRate), 4),
      field("MUNICIPAIS", of(taxes.municipal, taxes.municipalRate), 4)
    )
  ])
}

/** IBS and CBS (LC 214/2025), only for a note that carries the group. */
export const ibsCbsBlocks = (doc: Doc, nfse: DanfseData): Array<Block> => {
  const group = nfse.ibsCbs
  if (group === undefined) return []
  const rates = (rate: string | undefined, effective: string | undefined) =>
    joined(formatRate(rate), formatRate(effective))
  return [prepareBlock(doc, "IBS / CBS (REFORMA TRIBUTÁRIA DO CONSUMO)", [
    fields(
      field("CST / CLASSIFICAÇÃO TRIBUTÁRIA", joined(group.cst, group.classification), 3),
      field("INDICADOR DA OPERAÇÃO", value(group.operationIndicator), 2),
      field("TIPO DE OPERAÇÃO", value(group.operationType), 2),
      field("USO OU CONSUMO PESSOAL", Labels.yesNo(group.finalConsumer), 2),
      field("DESTINATÁRIO", Labels.destination(group.destinationIndicator), 3)
    ),
    fields(
      field("LOCALIDADE DE INCIDÊNCIA", codeAndText(group.incidenceCode, group.incidenceName), 4),
      field("BASE DE CÁLCULO", formatMoney(group.base), 2),
      field("REDUTOR", formatRate(group.reduction), 2),
      field("FINALIDADE", group.purpose === "0" ? "NFS-e regular" : value(group.purpose), 2),
      field("VALOR TOTAL DA NFS-e", formatMoney(group.noteTotal), 2)
    ),
    fields(
      field("IBS UF: ALÍQUOTA / EFETIVA", rates(group.ibsStateRate, group.ibsStateEffectiveRate), 3),
      field("IBS UF", formatMoney(group.ibsState), 1),
      field("IBS MUNICIPAL: ALÍQ. / EFETIVA", rates(group.ibsMunicipalRate, group.ibsMunicipalEffectiveRate), 3),
      field("IBS MUN.", formatMoney(group.ibsMunicipal), 1),
      field("IBS TOTAL", formatMoney(group.ibsTotal), 1),
      field("CBS: ALÍQUOTA / EFETIVA", rates(group.cbsRate, group.cbsEffectiveRate), 2),
      field("CBS", formatMoney(group.cbs), 1)
    )
  ])]
}

/** The note this one replaces (subst), only for a substitute note. */
export const replacesBlocks = (doc: Doc, nfse: DanfseData): Array<Block> =>
  nfse.replaces === undefined ? [] : [prepareBlock(doc, "SUBSTITUIÇÃO", [
    fields(
      field("CHAVE DE ACESSO DA NFS-e SUBSTITUÍDA", nfse.replaces.accessKey, 6),
      field("MOTIVO", Labels.substitutionReason(nfse.replaces.reasonCode), 6)
    ),
    ...(present(nfse.replaces.reason)
      ? [
        {
          kind: "text",
          label: "DESCRIÇÃO DO MOTIVO",
          lines: wrapText(doc, nfse.replaces.reason, TEXT_WIDTH, FONT, 8),
          size: 8
        } as const
      ]
      : [])
  ])]
