/**
 * The DANFE NFC-e: the consumer's receipt of an NFC-e on an 80 mm roll, in the divisions of the
 * national manual ("Manual de Padrões Técnicos do DANFE NFC-e e QR Code", v6.0): the emitter, the
 * document's name (and, offline, the contingency notice), the items, the totals and payments, where
 * to query the note by its access key, the consumer, the note's number and authorization, the QR
 * code, and the approximate taxes and the emitter's notes. The page is as long as the receipt:
 * every line is laid out first, then drawn on a page of that height.
 *
 * A cancelled note carries the outlined CANCELADA mark; one issued in homologation says so where
 * the manual asks, above the QR code.
 */
import QRCode from "qrcode"
import { formatDateTime, formatTaxId, groupAccessKey } from "../danfse/Format.js"
import {
  ALERT,
  type Doc,
  drawAligned,
  drawLine,
  drawOutlinedMark,
  drawQrSymbol,
  FONT,
  FONT_BOLD,
  INK,
  lineHeight,
  wrapText
} from "../danfse/Layout.js"
import { fitLine } from "./Cells.js"
import { streetLine } from "./DanfeBlocks.js"
import { amount, noteNumber, paymentMethod, seriesText, trimmedDecimal } from "./DanfeFormat.js"
import type { DanfeNote } from "./NfeReader.js"
import { pdfOf } from "./PdfFile.js"

/** 80 mm, the roll's width. */
export const ROLL_WIDTH = 226.77
const SIDE = 8
const WIDTH = ROLL_WIDTH - 2 * SIDE
const TOP = 10
/**
 * The QR code's side: at least 35 mm (the manual's floor is 25 mm), and 1.5 pt a module, so the long
 * symbol of an offline note (its signature inside) keeps modules a phone's camera resolves; and its
 * quiet zone.
 */
const qrOf = (url: string): { readonly size: number; readonly quiet: number } => {
  const modules = QRCode.create(url, { errorCorrectionLevel: "M" }).modules.size
  const size = Math.min(WIDTH - 12, Math.max(99, modules * 1.5))
  // The quiet zone the symbology asks: four modules clear on every side, text kept out of it.
  return { size, quiet: (4 * size) / modules }
}

type Line =
  | {
    readonly kind: "text"
    readonly text: string
    readonly bold?: boolean
    readonly size: number
    readonly align: "left" | "center"
    readonly color?: string
  }
  | { readonly kind: "pair"; readonly left: string; readonly right: string; readonly bold?: boolean }
  | { readonly kind: "rule" }
  | { readonly kind: "qr"; readonly url: string; readonly size: number; readonly quiet: number }

const SMALL = 6.5

const heightOf = (line: Line): number =>
  line.kind === "rule"
    ? 6
    : line.kind === "qr"
    ? line.size + 2 * line.quiet
    : lineHeight(line.kind === "pair" ? SMALL : line.size)

const centered = (doc: Doc, text: string, size: number, bold = false, color?: string): Array<Line> =>
  wrapText(doc, text, WIDTH, bold ? FONT_BOLD : FONT, size).map((line) => ({
    kind: "text",
    text: line,
    size,
    bold,
    align: "center",
    ...(color === undefined ? {} : { color })
  }))

const left = (doc: Doc, text: string, size = SMALL, bold = false): Array<Line> =>
  wrapText(doc, text, WIDTH, bold ? FONT_BOLD : FONT, size).map((line) => ({
    kind: "text",
    text: line,
    size,
    bold,
    align: "left"
  }))

const pair = (leftText: string, right: string, bold = false): Line => ({ kind: "pair", left: leftText, right, bold })

const RULE: Line = { kind: "rule" }

const issuerLines = (doc: Doc, note: DanfeNote): Array<Line> => {
  const { issuer } = note
  const address = issuer.address
  return [
    ...centered(doc, issuer.name ?? "", 8, true),
    ...centered(doc, `CNPJ: ${formatTaxId(issuer.taxId)}  IE: ${issuer.stateRegistration ?? ""}`, SMALL),
    ...(address === undefined ? [] : centered(
      doc,
      `${streetLine(address)}, ${address.district}, ${address.municipality} - ${address.state}`,
      SMALL
    ))
  ]
}

const itemLines = (doc: Doc, note: DanfeNote): Array<Line> => [
  pair("CÓDIGO  DESCRIÇÃO", "", true),
  pair("QTDE  UN  x  VL UNIT", "VL TOTAL R$", true),
  ...note.items.flatMap((item) => [
    ...left(doc, `${item.code}  ${item.description}`),
    pair(`${trimmedDecimal(item.quantity)} ${item.unit} x ${trimmedDecimal(item.unitValue)}`, amount(item.value))
  ])
]

const totalLines = (note: DanfeNote): Array<Line> => {
  const t = note.totals
  const optional = (label: string, value: string) => Number(value) === 0 ? [] : [pair(label, amount(value))]
  // What the consumer pays beyond the products: the note's total minus the products and the additions.
  return [
    pair("Qtde. total de itens", String(note.items.length)),
    pair("Valor total R$", amount(t.products)),
    ...optional("Descontos R$", t.discount),
    ...optional("Frete R$", t.freight),
    ...optional("Seguro R$", t.insurance),
    ...optional("Outras despesas R$", t.other),
    pair("Valor a Pagar R$", amount(t.total), true),
    pair("FORMA PAGAMENTO", "VALOR PAGO R$", true),
    ...note.payments.map((p) => pair(paymentMethod(p.method, p.description), amount(p.amount))),
    ...(note.change === undefined ? [] : [pair("Troco R$", amount(note.change))])
  ]
}

const consumerLines = (doc: Doc, note: DanfeNote): Array<Line> => {
  const recipient = note.recipient
  if (recipient === undefined || (recipient.taxId === undefined && recipient.foreignId === undefined)) {
    return centered(doc, "CONSUMIDOR NÃO IDENTIFICADO", SMALL, true)
  }
  const id = recipient.taxId === undefined
    ? `Id. Estrangeiro ${recipient.foreignId}`
    : `${recipient.taxId.length === 11 ? "CPF" : "CNPJ"}: ${formatTaxId(recipient.taxId)}`
  const address = recipient.address
  return [
    ...centered(doc, `CONSUMIDOR - ${id}${recipient.name === undefined ? "" : ` - ${recipient.name}`}`, SMALL, true),
    ...(address === undefined ? [] : centered(
      doc,
      `${streetLine(address)}, ${address.district}, ${address.municipality} - ${address.state}`,
      SMALL
    ))
  ]
}

const identificationLines = (doc: Doc, note: DanfeNote): Array<Line> => {
  const offline = note.emissionType === "9"
  return [
    ...centered(
      doc,
      `NFC-e nº ${noteNumber(note.number)} Série ${seriesText(note.series)} ${formatDateTime(note.issuedAt)}`,
      SMALL,
      true
    ),
    ...(offline ? centered(doc, "EMITIDA EM CONTINGÊNCIA", 7, true) : []),
    ...(note.protocol === undefined
      ? centered(doc, "Pendente de autorização", SMALL, true)
      : [
        ...centered(doc, `Protocolo de Autorização: ${note.protocol.number}`, SMALL),
        ...centered(doc, `Data de Autorização: ${formatDateTime(note.protocol.receivedAt)}`, SMALL)
      ]),
    ...(note.environment === 2
      ? centered(doc, "EMITIDA EM AMBIENTE DE HOMOLOGAÇÃO - SEM VALOR FISCAL", 7, true, ALERT)
      : [])
  ]
}

const receiptLines = (doc: Doc, note: DanfeNote): Array<Line> => [
  ...issuerLines(doc, note),
  RULE,
  ...centered(doc, "Documento Auxiliar da Nota Fiscal de Consumidor Eletrônica", 7, true),
  ...(note.emissionType === "9"
    ? [
      ...centered(doc, "EMITIDA EM CONTINGÊNCIA", 7, true),
      ...centered(doc, "Pendente de autorização", SMALL)
    ]
    : []),
  RULE,
  ...itemLines(doc, note),
  RULE,
  ...totalLines(note),
  RULE,
  ...centered(doc, "Consulte pela Chave de Acesso em", SMALL, true),
  ...centered(doc, note.queryUrl ?? "", SMALL),
  ...centered(doc, groupAccessKey(note.accessKey), SMALL, true),
  RULE,
  ...consumerLines(doc, note),
  RULE,
  ...identificationLines(doc, note),
  ...(note.qrCode === undefined ? [] : [{ kind: "qr", url: note.qrCode, ...qrOf(note.qrCode) } as const]),
  ...(note.totals.approximateTaxes === undefined
    ? []
    : centered(
      doc,
      `Tributos Totais Incidentes (Lei Federal 12.741/2012) R$ ${amount(note.totals.approximateTaxes)}`,
      SMALL
    )),
  ...(note.notes === undefined ? [] : [RULE, ...left(doc, note.notes)])
]

const drawLines = (doc: Doc, lines: ReadonlyArray<Line>) => {
  let y = TOP
  for (const line of lines) {
    switch (line.kind) {
      case "text": {
        const font = line.bold === true ? FONT_BOLD : FONT
        if (line.align === "center") drawAligned(doc, line.text, SIDE, WIDTH, y, font, line.size, "center", line.color)
        else drawLine(doc, line.text, SIDE, y, font, line.size)
        break
      }
      case "pair": {
        const font = line.bold === true ? FONT_BOLD : FONT
        const right = fitLine(doc, line.right, WIDTH / 2, font, SMALL)
        doc.font(font).fontSize(right.size)
        const rightWidth = doc.widthOfString(right.text)
        const leftFitted = fitLine(doc, line.left, WIDTH - rightWidth - 6, font, SMALL)
        drawLine(doc, leftFitted.text, SIDE, y, font, leftFitted.size)
        drawAligned(doc, right.text, SIDE, WIDTH, y, font, right.size, "right")
        break
      }
      case "rule":
        doc.save().lineWidth(0.4).dash(2, { space: 1.5 }).moveTo(SIDE, y + 2.5).lineTo(SIDE + WIDTH, y + 2.5).stroke(
          INK
        )
        doc.undash().restore()
        break
      case "qr":
        drawQrSymbol(doc, line.url, "M", (ROLL_WIDTH - line.size) / 2, y + line.quiet, line.size)
        break
    }
    y += heightOf(line)
  }
}

export const renderDanfeNfce = (note: DanfeNote, marks: { readonly cancelled: boolean }): Promise<Uint8Array> => {
  let lines: ReadonlyArray<Line> = []
  return pdfOf(`DANFE NFC-e ${note.accessKey}`, note.issuedAt, (doc) => {
    lines = receiptLines(doc, note)
    return [ROLL_WIDTH, TOP * 2 + lines.reduce((sum, line) => sum + heightOf(line), 0)]
  }, (doc) => {
    doc.addPage()
    if (marks.cancelled) {
      drawAligned(doc, "NFC-e CANCELADA", SIDE, WIDTH, 2, FONT_BOLD, 6.5, "center", ALERT)
      drawOutlinedMark(doc, "CANCELADA", 30, ROLL_WIDTH / 2, doc.page.height / 2)
    }
    drawLines(doc, lines)
  })
}
