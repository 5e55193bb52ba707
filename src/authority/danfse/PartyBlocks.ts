/**
 * The blocks of the note's people, titled as NT 008's DANFSe v2.0: the provider (prestador /
 * fornecedor, from the NFS-e's `emit` and the DPS's `prest`), the taker (tomador / adquirente,
 * `toma`), the recipient of a note with IBS/CBS (destinatário, `IBSCBS/dest`) and the
 * intermediary (`interm`), each with a national or a foreign address. One the note does not name
 * is one line saying so.
 */
import type { DanfseAddress, DanfseData, DanfseParty } from "./DanfseData.js"
import {
  EMPTY,
  formatMunicipality,
  formatPhone,
  formatPostalCode,
  formatStreetLine,
  formatTaxId,
  joined,
  present
} from "./Format.js"
import * as Labels from "./Labels.js"
import { type Block, type Doc, type Field, prepareBlock, type Row } from "./Layout.js"

const value = (raw: string | undefined) => present(raw) ? raw : EMPTY

const fields = (...list: ReadonlyArray<Field>): Row => ({ kind: "fields", fields: list })

/** A national address's municipality, or a foreign one's city, region and country. */
const placeOf = (address: DanfseAddress | undefined): string =>
  address === undefined
    ? EMPTY
    : present(address.countryCode)
    ? joined(address.city, address.region, `País ${address.countryCode}`)
    : formatMunicipality(address.municipalityName, address.municipalityCode, address.state)

const postalCodeOf = (address: DanfseAddress | undefined): string =>
  present(address?.foreignPostalCode) ? address.foreignPostalCode : formatPostalCode(address?.postalCode)

const taxIdOf = (party: DanfseParty): string =>
  present(party.taxId) ? formatTaxId(party.taxId) : Labels.noTaxIdReason(party.noTaxIdReason)

const identificationRows = (party: DanfseParty): Array<Row> => [
  fields(
    { label: "CNPJ / CPF / NIF", value: taxIdOf(party), span: 3 },
    { label: "INSCRIÇÃO MUNICIPAL", value: value(party.municipalRegistration), span: 2 },
    { label: "TELEFONE", value: formatPhone(party.phone), span: 2 },
    { label: "E-MAIL", value: value(party.email), span: 5 }
  ),
  fields(
    { label: "NOME / NOME EMPRESARIAL", value: value(party.name), span: 6, bold: true },
    { label: "NOME FANTASIA", value: value(party.tradeName), span: 4 },
    { label: "CAEPF", value: value(party.caepf), span: 2 }
  ),
  fields(
    { label: "ENDEREÇO", value: formatStreetLine(party.address), span: 6 },
    {
      label: present(party.address?.countryCode) ? "CIDADE / REGIÃO / PAÍS" : "MUNICÍPIO",
      value: placeOf(party.address),
      span: 4
    },
    {
      label: present(party.address?.foreignPostalCode) ? "CÓDIGO POSTAL" : "CEP",
      value: postalCodeOf(party.address),
      span: 2
    }
  )
]

const named = (party: DanfseParty | undefined): party is DanfseParty =>
  party !== undefined && (present(party.taxId) || present(party.name) || present(party.noTaxIdReason))

const partyBlock = (doc: Doc, title: string, party: DanfseParty | undefined): Block =>
  named(party)
    ? prepareBlock(doc, title, identificationRows(party))
    : prepareBlock(doc, title, [{ kind: "centered", text: `${title} NÃO IDENTIFICADO NA NFS-e` }])

/** Issuer, taker and intermediary. */
export const partyBlocks = (doc: Doc, nfse: DanfseData): Array<Block> => {
  const issuer = nfse.issuer
  const issuerBlock = prepareBlock(doc, "PRESTADOR / FORNECEDOR", [
    ...identificationRows({
      ...issuer,
      address: issuer.address === undefined
        ? undefined
        : { ...issuer.address, municipalityName: issuer.address.municipalityName ?? issuer.municipalityName }
    }),
    fields(
      {
        label: "SIMPLES NACIONAL NA DATA DE COMPETÊNCIA",
        value: Labels.simplesNacional(issuer.simplesNacional),
        span: 5
      },
      {
        label: "REGIME DE APURAÇÃO TRIBUTÁRIA PELO SN",
        value: Labels.simplesApuration(issuer.simplesApuration),
        span: 4
      },
      { label: "REGIME ESPECIAL DE TRIBUTAÇÃO", value: Labels.specialRegime(issuer.specialRegime), span: 3 }
    )
  ])
  // The recipient exists with the IBS/CBS group only: the taker itself (indDest 0), or another.
  const recipient = nfse.ibsCbs === undefined
    ? []
    : nfse.ibsCbs.destinationIndicator === "0" && !named(nfse.recipient)
    ? [
      prepareBlock(doc, "DESTINATÁRIO", [{ kind: "centered", text: "O DESTINATÁRIO É O PRÓPRIO TOMADOR / ADQUIRENTE" }])
    ]
    : [partyBlock(doc, "DESTINATÁRIO", nfse.recipient)]
  return [
    issuerBlock,
    partyBlock(doc, "TOMADOR / ADQUIRENTE", nfse.taker),
    ...recipient,
    partyBlock(doc, "INTERMEDIÁRIO", nfse.intermediary)
  ]
}
