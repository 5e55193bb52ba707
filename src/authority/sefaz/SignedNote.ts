/**
 * A goods note as it leaves: built from the document (NfeXml.ts), with its consumer QR code on an
 * NFC-e, signed over `infNFe` and checked against the official schema. A note the schema refuses
 * is our bug (`NoteNotValid`): it is never sent. The same input and key give the same bytes, so
 * every attempt of a document sends the same note.
 */
import { Effect, Result, Schema } from "effect"
import type { GoodsNote } from "../GoodsAuthority.js"
import { signEnveloped } from "../xml/XmlSignature.js"
import { brasiliaDateTime } from "../xml/XmlText.js"
import { consumerSupplement, withConsumerSupplement } from "./ConsumerQrCode.js"
import { keyPrefixOf, type NfeModel } from "./NfeAccessKey.js"
import { buildNfe } from "./NfeXml.js"
import { validateNfe } from "./NfeXsd.js"

/** The note we built does not pass the official schema: our bug, the document fails without being sent. */
export class NoteNotValid extends Schema.TaggedError<NoteNotValid>()("NoteNotValid", {
  message: Schema.String
}) {}

/** Who signs: the tenant's certificate at a SEFAZ, the simulator's own in the built-in simulator. */
export interface NoteSigner {
  readonly privateKeyPem: string
  readonly certificatePem: string
}

export interface SignedNote {
  readonly accessKey: string
  readonly model: NfeModel
  /** The emitter's state (UF): whose authorizer the note goes to. */
  readonly state: string
  /** The signed `NFe`. */
  readonly note: string
}

export const modelOf = (type: GoodsNote["request"]["type"]): NfeModel => type === "consumer_invoice" ? "65" : "55"

/** The submission id of a note: its key's first 34 characters, the number's 9 digits last. */
export const goodsSubmissionIdOf = (
  note: Pick<GoodsNote, "issuer" | "series" | "issuedAt"> & { readonly type: GoodsNote["request"]["type"] }
) => ({
  prefix: keyPrefixOf({
    stateCode: note.issuer.address.municipality_code.slice(0, 2),
    yearMonth: brasiliaDateTime(note.issuedAt).slice(2, 7).replace("-", ""),
    issuerTaxId: note.issuer.taxId,
    model: modelOf(note.type),
    series: note.series
  }),
  width: 9
})

/** A note signed before (an NFC-e issued offline), as it was: its key read from its `Id`. */
export const issuedNote = (note: GoodsNote, xml: string): SignedNote => ({
  accessKey: /Id="NFe([0-9A-Z]{44})"/u.exec(xml)?.[1] ?? "",
  model: modelOf(note.request.type),
  state: note.issuer.address.state,
  note: xml
})

export const signedNote = (note: GoodsNote, signer: NoteSigner): Effect.Effect<SignedNote, NoteNotValid> =>
  Effect.suspend(() => {
    const built = buildNfe(note)
    const state = note.issuer.address.state
    const recipient = note.request.recipient
    const withSupplement = built.model === "65"
      ? withConsumerSupplement(
        built.xml,
        consumerSupplement({
          accessKey: built.accessKey,
          environment: note.environment,
          state,
          // Offline, the QR code carries what a consumer checks without the authority, signed.
          offline: note.contingency === undefined ? undefined : {
            issuedAt: note.issuedAt,
            total: built.figures.totals.total,
            recipient: recipient?.tax_id !== undefined
              ? { taxId: recipient.tax_id }
              : recipient?.foreign_id !== undefined
              ? { foreignId: recipient.foreign_id }
              : null,
            privateKeyPem: signer.privateKeyPem
          }
        })
      )
      : built.xml
    const signed = signEnveloped(withSupplement, {
      element: "infNFe",
      privateKeyPem: signer.privateKeyPem,
      certificatePem: signer.certificatePem
    })
    const valid = validateNfe("NFe", signed)
    return Result.isFailure(valid)
      ? Effect.fail(
        new NoteNotValid({ message: `the note does not pass the NF-e schema: ${valid.failure.messages.join("; ")}` })
      )
      : Effect.succeed({ accessKey: built.accessKey, model: built.model, state, note: signed })
  })
