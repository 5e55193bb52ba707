/**
 * What the mail sender needs of a note to e-mail it to its taker, and where it records how that
 * went. The documents module implements it (src/documents/NoteMailSourceLive.ts), so this module
 * never imports documents: the note's facts and files are read when the mail is sent, and the
 * outcome is written on the document with the mail job's end, in one statement fenced by its lease.
 */
import { Context, Data, type Effect, type Option } from "effect"
import type { Statement } from "effect/sql"
import type { TakerNotificationKind } from "../domain/Document.js"
import type { Environment } from "../domain/Principal.js"

export interface MailAttachment {
  readonly filename: string
  readonly contentType: string
  readonly content: Uint8Array | string
}

/** What the mail says of the note. */
export interface NoteFacts {
  readonly kind: TakerNotificationKind
  readonly environment: Environment
  /** The provider as the note names it: its legal name. */
  readonly providerName: string
  readonly takerName: string | null
  readonly nfseNumber: string | null
  readonly accessKey: string
  /** Centavos: the value of the services (`vServ`). */
  readonly servicesAmount: number
  readonly authorizedAt: Date
  readonly cancelledAt: Date | null
}

export interface NoteMailContent {
  readonly note: NoteFacts
  /** The From's display name: the tenant's `note_mail.sender_name`, or its name. */
  readonly senderName: string
  /** The tenant's registration e-mail, where the taker's answers go. */
  readonly replyTo: string | null
  /** The DANFSe (PDF) and the NFS-e XML, as the API serves them now. */
  readonly attachments: ReadonlyArray<MailAttachment>
}

/**
 * Why a queued note mail is not sent after all, as the document then shows it: the tenant turned
 * note mail off meanwhile (`disabled`); a test note to an address that is no verified member's
 * (`test_recipient`: the sandbox must not mail strangers in a tenant's name); the note cancelled or
 * substituted before its authorization mail went out (`superseded`).
 */
export type NoteMailWithheld = "disabled" | "test_recipient" | "superseded"

/** What composing a queued note mail comes to: the mail to send, or why none is sent. */
export type ComposedNoteMail =
  | { readonly _tag: "Send"; readonly content: NoteMailContent }
  | { readonly _tag: "Withhold"; readonly reason: NoteMailWithheld }

/** The note's files cannot be read now (the authority is unreachable): a refusal to retry. */
export class NoteMailUnavailable extends Data.TaggedError("NoteMailUnavailable")<{ readonly message: string }> {}

/** How the taker's mail stands after an attempt, as the document shows it. */
export interface NoteMailOutcome {
  readonly status: "pending" | "sent" | "failed" | NoteMailWithheld
  readonly attempts: number
  readonly sentAt: Date | null
  readonly lastError: string | null
  readonly at: Date
}

export class NoteMailSource extends Context.Service<NoteMailSource, {
  /** The mail to `to` as it stands now, or why none is sent; None when the document no longer exists. */
  readonly compose: (
    documentId: string,
    kind: TakerNotificationKind,
    to: string
  ) => Effect.Effect<Option.Option<ComposedNoteMail>, NoteMailUnavailable>
  /**
   * Records the outcome on the document, with `ending` (the mail job's end, LeasedQueue.ending) in
   * one statement, unless a later mail of the note took its place there. Returns whether the job's
   * lease held (nothing is written when it did not).
   */
  readonly recording: (
    documentId: string,
    kind: TakerNotificationKind,
    outcome: NoteMailOutcome,
    ending: Statement.Fragment
  ) => Effect.Effect<boolean>
}>()("etd/NoteMailSource") {}
