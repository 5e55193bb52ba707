/**
 * Correction letters (CC-e, event 110110) of authorized NF-e documents. A letter is asked and
 * answered in one request, as the authorities answer an event at once: the letter is numbered
 * under the document's lock (so two requests never draw the same number), the authority is asked
 * outside any transaction, and its answer is kept with the `document.corrected` event in one.
 *
 * When the authority does not answer, the letter stays `pending` under its number and the request
 * ends `503`: the same text sent again resends the same letter (the authority's duplicity of it
 * counts as registered), and no other letter is taken until it is answered.
 */
import { Context, Effect, Layer, Option } from "effect"
import { GoodsAuthorities } from "../authority/GoodsAuthority.js"
import { makeTransaction } from "../db/Repository.js"
import { type Correction, correctionTextOf, type NewCorrection } from "../domain/Correction.js"
import { InvalidState, NotFound } from "../domain/Errors.js"
import type { DocumentId } from "../domain/Ids.js"
import type { TenantReach } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import { EventLog } from "../events/EventLog.js"
import { answerOf, keepAnswer } from "./AuthorityAnswers.js"
import { CorrectionRepo, type StoredCorrection } from "./CorrectionRepo.js"
import { DocumentRepo, type StoredDocument, type StoredGoodsDocument } from "./DocumentRepo.js"
import { goodsNoteOf } from "./GoodsNotes.js"

/** The most letters an NF-e takes (`nSeqEvento` 1 to 20). */
const MAX_LETTERS = 20

export const toCorrection = (letter: StoredCorrection): Correction => ({
  object: "correction",
  document_id: letter.documentId,
  sequence: letter.sequence,
  text: letter.text,
  status: letter.status,
  protocol: letter.protocol,
  requested_at: letter.requestedAt,
  registered_at: letter.registeredAt,
  error: letter.error
})

const correctable = (row: StoredDocument): Effect.Effect<StoredGoodsDocument, InvalidState> => {
  if (row.type !== "product_invoice") {
    return Effect.fail(
      new InvalidState({
        message: "A correction letter (CC-e) is an NF-e's (product_invoice): an NFC-e or an NFS-e takes none."
      })
    )
  }
  if (row.status !== "authorized") {
    return Effect.fail(
      new InvalidState({ message: `Only an authorized NF-e takes a correction letter; this one is ${row.status}.` })
    )
  }
  return Effect.succeed(row as StoredGoodsDocument) // its type says it is a goods document
}

export class CorrectionService extends Context.Service<CorrectionService>()("etd/CorrectionService", {
  make: Effect.gen(function*() {
    const documents = yield* DocumentRepo
    const letters = yield* CorrectionRepo
    const inTransaction = yield* makeTransaction
    const authorities = yield* GoodsAuthorities
    const events = yield* EventLog

    const documentOf = (reach: TenantReach, id: DocumentId) =>
      Effect.flatMap(
        documents.findForUpdate(reach.tenantId, reach.environment, id),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ message: "No such document." })),
          onSome: Effect.succeed
        })
      )

    /** The letter to send: the pending one of the same text (a retry), or a new one numbered after the others. */
    const take = (reach: TenantReach, id: DocumentId, text: string) =>
      Effect.gen(function*() {
        const row = yield* Effect.flatMap(documentOf(reach, id), correctable)
        const all = yield* letters.list(row.id)
        const pending = all.find((letter) => letter.status === "pending")
        if (pending !== undefined) {
          if (pending.text === text) return { row, letter: pending }
          return yield* new InvalidState({
            message: `Letter ${pending.sequence} is still waiting for the authority's answer: send its text again ` +
              "to finish it before writing another."
          })
        }
        if (all.filter((letter) => letter.status === "registered").length >= MAX_LETTERS) {
          return yield* new InvalidState({ message: `An NF-e takes at most ${MAX_LETTERS} correction letters.` })
        }
        return { row, letter: yield* letters.insert(row.id, text, yield* now) }
      }).pipe(inTransaction)

    const correct = Effect.fn("CorrectionService.correct")(function*(
      reach: TenantReach,
      id: DocumentId,
      request: NewCorrection
    ) {
      const { letter, row } = yield* take(reach, id, correctionTextOf(request.text))
      yield* Effect.annotateCurrentSpan({ "document.id": row.id, "correction.sequence": letter.sequence })
      const answer = yield* authorities.for(row.environment).correct({
        tenantId: row.tenantId,
        submissionId: row.submissionId,
        note: goodsNoteOf(row),
        accessKey: row.authority!.access_key,
        sequence: letter.sequence,
        text: letter.text,
        requestedAt: letter.requestedAt
      }).pipe((call) => answerOf(call, "letter"))
      const kept = yield* keepAnswer({
        answer,
        pending: letter,
        settle: (at) => letters.settle(letter.id, answer, at),
        recordRegistered: (registered) =>
          events.record({
            tenantId: row.tenantId,
            environment: row.environment,
            type: "document.corrected",
            object: toCorrection(registered)
          }),
        inTransaction
      })
      return toCorrection(kept)
    })

    /** The document's letters, first to last; refused ones too. */
    const list = Effect.fn("CorrectionService.list")(function*(reach: TenantReach, id: DocumentId) {
      const row = yield* Effect.flatMap(
        documents.find(reach.tenantId, reach.environment, id),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ message: "No such document." })),
          onSome: Effect.succeed
        })
      )
      return (yield* letters.list(row.id)).map(toCorrection)
    })

    return { correct, list } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps.pipe(Layer.provide([CorrectionRepo.layer, DocumentRepo.layer]))
}
