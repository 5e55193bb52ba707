/**
 * What a stored goods document's note is built from (the goods authority port's `GoodsNote`): its
 * sale and emitter as accepted, its number and its acceptance time, and for an NFC-e issued offline
 * its contingency. A pure function of the stored row, so every attempt, and every lookup, builds the
 * same note and the same access key.
 */
import type { GoodsNote } from "../authority/GoodsAuthority.js"
import type { StoredGoodsDocument } from "./DocumentRepo.js"

export const goodsNoteOf = (row: StoredGoodsDocument): GoodsNote => ({
  environment: row.environment,
  documentId: row.id,
  request: { type: row.type, ...row.goods.sale },
  issuer: row.goods.issuer,
  series: Number(row.series),
  number: row.number,
  issuedAt: row.createdAt,
  contingency: row.contingency === null ? undefined : { since: row.contingency.since, reason: row.contingency.reason }
})
