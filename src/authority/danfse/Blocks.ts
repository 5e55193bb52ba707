/**
 * The blocks of page 1 that carry the note's data: issuer, taker and intermediary; the service
 * with its description; municipal taxation and totals; the complementary information. The two free
 * texts (description, notes) come in already wrapped: how much of them page 1 holds is decided by
 * the caller (Danfse.ts), which measures these blocks first with the texts empty.
 */
import type { DanfseData } from "./DanfseData.js"
import {
  EMPTY,
  formatMoney,
  formatMunicipality,
  formatNbsCode,
  formatPhone,
  formatPostalCode,
  formatRate,
  formatServiceCode,
  formatStreetLine,
  formatTaxId,
  present
} from "./Format.js"
import { type Block, type Doc, prepareBlock, type Row } from "./Layout.js"

/** Issuer, taker (or a line saying the note names none) and intermediary (the data carries none). */
export const partyBlocks = (doc: Doc, nfse: DanfseData): Array<Block> => {
  const issuer = nfse.issuer
  const issuerBlock = prepareBlock(doc, "EMITENTE DA NFS-e - PRESTADOR DO SERVIÇO", [
    {
      kind: "fields",
      fields: [
        { label: "CNPJ / CPF / NIF", value: formatTaxId(issuer.taxId), span: 4 },
        { label: "TELEFONE", value: formatPhone(issuer.phone), span: 3 },
        { label: "E-MAIL", value: present(issuer.email) ? issuer.email : EMPTY, span: 5 }
      ]
    },
    {
      kind: "fields",
      fields: [{
        label: "NOME / NOME EMPRESARIAL",
        value: present(issuer.name) ? issuer.name : EMPTY,
        span: 12,
        bold: true
      }]
    },
    {
      kind: "fields",
      fields: [
        { label: "ENDEREÇO", value: formatStreetLine(issuer.address), span: 7 },
        {
          label: "MUNICÍPIO",
          value: formatMunicipality(
            issuer.address?.municipalityName ?? issuer.municipalityName,
            issuer.address?.municipalityCode,
            issuer.address?.state
          ),
          span: 3
        },
        { label: "CEP", value: formatPostalCode(issuer.address?.postalCode), span: 2 }
      ]
    }
  ])
  const taker = nfse.taker
  const takerBlock = taker === undefined || (!present(taker.taxId) && !present(taker.name))
    ? prepareBlock(doc, "TOMADOR DO SERVIÇO", [{
      kind: "centered",
      text: "TOMADOR DO SERVIÇO NÃO IDENTIFICADO NA NFS-e"
    }])
    : prepareBlock(doc, "TOMADOR DO SERVIÇO", [
      {
        kind: "fields",
        fields: [
          { label: "CNPJ / CPF / NIF", value: formatTaxId(taker.taxId), span: 4 },
          { label: "E-MAIL", value: present(taker.email) ? taker.email : EMPTY, span: 8 }
        ]
      },
      {
        kind: "fields",
        fields: [{
          label: "NOME / NOME EMPRESARIAL",
          value: present(taker.name) ? taker.name : EMPTY,
          span: 12,
          bold: true
        }]
      },
      {
        kind: "fields",
        fields: [
          { label: "ENDEREÇO", value: formatStreetLine(taker.address), span: 7 },
          {
            label: "MUNICÍPIO",
            value: formatMunicipality(
              taker.address?.municipalityName,
              taker.address?.municipalityCode,
              taker.address?.state
            ),
            span: 3
          },
          { label: "CEP", value: formatPostalCode(taker.address?.postalCode), span: 2 }
        ]
      }
    ])
  const intermediaryBlock = prepareBlock(doc, "INTERMEDIÁRIO DO SERVIÇO", [
    { kind: "centered", text: "INTERMEDIÁRIO DO SERVIÇO NÃO IDENTIFICADO NA NFS-e" }
  ])
  return [issuerBlock, takerBlock, intermediaryBlock]
}

const serviceFields = (nfse: DanfseData): Row => ({
  kind: "fields",
  fields: [
    { label: "CÓDIGO DE TRIBUTAÇÃO NACIONAL", value: formatServiceCode(nfse.service.code), span: 4 },
    { label: "CÓDIGO NBS", value: formatNbsCode(nfse.service.nbsCode), span: 3 },
    {
      label: "LOCAL DA PRESTAÇÃO",
      value: formatMunicipality(nfse.service.municipalityName, nfse.service.municipalityCode),
      span: 5
    }
  ]
})

/** The service's codes and place, then `lines` of its description, and `note` under them when it continues elsewhere. */
export const serviceBlock = (
  doc: Doc,
  nfse: DanfseData,
  lines: ReadonlyArray<string>,
  size: number,
  note?: string
): Block =>
  prepareBlock(doc, "SERVIÇO PRESTADO", [
    serviceFields(nfse),
    { kind: "text", label: "DESCRIÇÃO DO SERVIÇO", lines, size, note }
  ])

/** Municipal taxation (ISSQN) and the note's totals. */
export const amountBlocks = (doc: Doc, nfse: DanfseData): Array<Block> => {
  const amounts = nfse.amounts
  const taxation = prepareBlock(doc, "TRIBUTAÇÃO MUNICIPAL (ISSQN)", [
    {
      kind: "fields",
      fields: [
        {
          label: "MUNICÍPIO DE INCIDÊNCIA DO ISSQN",
          value: formatMunicipality(nfse.service.municipalityName, nfse.service.municipalityCode),
          span: 3
        },
        { label: "BASE DE CÁLCULO DO ISSQN", value: formatMoney(amounts.base), span: 3 },
        { label: "ALÍQUOTA APLICADA", value: formatRate(amounts.issRate), span: 3 },
        { label: "ISSQN APURADO", value: formatMoney(amounts.issAmount), span: 3 }
      ]
    }
  ])
  const totals = prepareBlock(doc, "VALOR TOTAL DA NFS-e", [
    {
      kind: "fields",
      fields: [
        { label: "VALOR DO SERVIÇO", value: formatMoney(amounts.services), span: 3 },
        { label: "TOTAL DEDUÇÕES / REDUÇÕES", value: formatMoney(amounts.deductions), span: 3 },
        { label: "ISSQN APURADO", value: formatMoney(amounts.issAmount), span: 3 },
        { label: "VALOR LÍQUIDO DA NFS-e", value: formatMoney(amounts.net), span: 3, bold: true }
      ]
    }
  ])
  return [taxation, totals]
}

/** `lines` of the note's complementary information, and `note` under them when it continues elsewhere. */
export const notesBlock = (doc: Doc, lines: ReadonlyArray<string>, size: number, note?: string): Block =>
  prepareBlock(doc, "INFORMAÇÕES COMPLEMENTARES", [{ kind: "text", lines, size, note }])
