/**
 * The one mapping from a stored document to the API's (SPEC §6): a service invoice with the amounts
 * its note states once authorized, a goods invoice with the totals its sale comes to.
 */
import * as Result from "effect/Result"
import { Document } from "../domain/Document.js"
import { goodsFigures } from "../domain/GoodsAmounts.js"
import { type AnyDocument, GoodsDocument, goodsTotalsView } from "../domain/GoodsDocument.js"
import { goodsIbsCbs } from "../domain/GoodsIbsCbs.js"
import { withNoteIbsCbs } from "../domain/IbsCbsFigures.js"
import { shownAmounts } from "../domain/NoteAmounts.js"
import { brazilianDate } from "../domain/Time.js"
import type { StoredDocument, StoredGoodsDocument, StoredServiceDocument } from "./DocumentRepo.js"

export const isServiceDocument = (stored: StoredDocument): stored is StoredServiceDocument =>
  stored.type === "service_invoice"

/** What every document shows the same way, whatever its type. */
const lifecycleOf = (stored: StoredDocument) => ({
  id: stored.id,
  environment: stored.environment,
  status: stored.status,
  reference: stored.reference,
  series: stored.series,
  number: stored.number,
  issue_date: stored.issueDate,
  currency: "BRL" as const,
  rejection: stored.rejection,
  cancellation: stored.cancellation,
  attempts: stored.attempts,
  last_error: stored.lastError,
  created_at: stored.createdAt,
  updated_at: stored.updatedAt
})

/** A stored service invoice as the API shows it: once authorized, the amounts its note states. */
export const toServiceDocument = (stored: StoredServiceDocument) =>
  new Document({
    ...lifecycleOf(stored),
    type: stored.type,
    taker: stored.taker,
    intermediary: stored.intermediary,
    service: stored.service,
    amounts: withNoteIbsCbs(shownAmounts(stored.amounts, stored.authority?.amounts), stored.authority?.ibs_cbs),
    tax: stored.tax,
    notes: stored.notes,
    authority: stored.authority,
    substitutes: stored.substitutes,
    substituted_by: stored.substitutedBy,
    substitution: stored.substitution,
    taker_notification: stored.takerNotification
  })

/** The note's totals, the tax reform's at the rates of its day of emission (acceptance refused any other). */
const goodsTotalsOf = (stored: StoredGoodsDocument) => {
  const figures = goodsFigures({ type: stored.type, ...stored.goods.sale })
  const reform = goodsIbsCbs(stored.goods.sale.items, figures.items, brazilianDate(stored.createdAt))
  return goodsTotalsView(figures.totals, Result.isSuccess(reform) ? reform.success?.totals : undefined)
}

/** A stored goods invoice as the API shows it: the sale as asked, with the totals it comes to. */
export const toGoodsDocument = (stored: StoredGoodsDocument) =>
  new GoodsDocument({
    ...lifecycleOf(stored),
    type: stored.type,
    ...stored.goods.sale,
    totals: goodsTotalsOf(stored),
    authority: stored.authority,
    contingency: stored.contingency
  })

/** The one mapping from a stored document to the API's. */
export const toDocument = (stored: StoredDocument): AnyDocument =>
  isServiceDocument(stored) ? toServiceDocument(stored) : toGoodsDocument(stored)
