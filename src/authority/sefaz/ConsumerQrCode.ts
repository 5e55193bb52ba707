/**
 * The consumer's QR code of an NFC-e (`infNFeSupl`), layout version 3 of the national manual
 * ("Manual de Padrões Técnicos do DANFE NFC-e e QR Code", v6.0, item 4.4). Version 3 needs no CSC:
 * a note issued online carries only its key, the version and the environment; a note issued in
 * offline contingency adds the day of issue, the total and the buyer, signed (RSA-SHA1, base64) with
 * the certificate that signs the note, so a consumer's reader can trust a note the authority has
 * not seen yet. The supplement goes between `infNFe` and the signature, before the note is signed.
 */
import { createSign } from "node:crypto"
import type { Environment } from "../../domain/Principal.js"
import { normalizeTaxId } from "../../domain/TaxId.js"
import { environmentCode } from "../TaxAuthority.js"
import { brasiliaDateTime, formatCentavos, leaf } from "../xml/XmlText.js"
import { NFCE_ADDRESSES } from "./NfceAddresses.js"

const QR_CODE_VERSION = "3"

/** Who bought, as the offline QR code names them: 1 CNPJ, 2 CPF, 3 a foreigner's id (not written). */
export type QrRecipient =
  | { readonly taxId: string }
  | { readonly foreignId: string }
  | null

export interface OfflineFacts {
  readonly issuedAt: Date
  /** vNF, in centavos. */
  readonly total: number
  readonly recipient: QrRecipient
  /** The private key of the certificate that signs the note, PEM. */
  readonly privateKeyPem: string
}

export interface ConsumerQrInput {
  readonly accessKey: string
  readonly environment: Environment
  /** The emitter's state: whose addresses the consumer is sent to. */
  readonly state: string
  /** Present for a note issued in offline contingency (tpEmis 9). */
  readonly offline?: OfflineFacts | undefined
}

export interface ConsumerSupplement {
  readonly qrCode: string
  readonly urlChave: string
}

const recipientParameters = (recipient: QrRecipient): string => {
  if (recipient === null) return "|"
  if ("foreignId" in recipient) return "3|"
  const taxId = normalizeTaxId(recipient.taxId)
  return `${taxId.length === 11 ? "2" : "1"}|${taxId}`
}

/** The QR code's URL and the query address of the note's state. */
export const consumerSupplement = (input: ConsumerQrInput): ConsumerSupplement => {
  const addresses = NFCE_ADDRESSES[input.state]
  // Every state issues NFC-e; a state outside the table is a programming error upstream.
  if (addresses === undefined) throw new Error(`no NFC-e addresses for state ${input.state}`)
  const online = `${input.accessKey}|${QR_CODE_VERSION}|${environmentCode(input.environment)}`
  const { offline } = input
  if (offline === undefined) {
    return {
      qrCode: `${addresses.qrCode[input.environment]}?p=${online}`,
      urlChave: addresses.query[input.environment]
    }
  }
  const facts = `${online}|${brasiliaDateTime(offline.issuedAt).slice(8, 10)}|${formatCentavos(offline.total)}|` +
    recipientParameters(offline.recipient)
  const signature = createSign("RSA-SHA1").update(facts, "utf8").sign(offline.privateKeyPem, "base64")
  return {
    qrCode: `${addresses.qrCode[input.environment]}?p=${facts}|${signature}`,
    urlChave: addresses.query[input.environment]
  }
}

/** The note with its supplement after `infNFe`, where the schema puts it (then the note is signed). */
export const withConsumerSupplement = (nfeXml: string, supplement: ConsumerSupplement): string => {
  const end = nfeXml.indexOf("</infNFe>")
  if (end === -1) throw new Error("not an NFe: no infNFe")
  const at = end + "</infNFe>".length
  // The QR code travels as text (its URL's `|` and `&` escaped by `leaf`); the schema's
  // pattern is checked on the unescaped value.
  const element = `<infNFeSupl>${leaf("qrCode", supplement.qrCode)}${
    leaf("urlChave", supplement.urlChave)
  }</infNFeSupl>`
  return nfeXml.slice(0, at) + element + nfeXml.slice(at)
}
