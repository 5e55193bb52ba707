/**
 * The documents' side of the note mail (src/mail/NoteMail.ts): the note's facts, and its DANFSe and
 * NFS-e XML read through DocumentService as `GET …/pdf` and `…/xml` serve them (so a cancelled
 * note's DANFSe carries its mark); the tenant's sender name and Reply-To; and the mail's outcome
 * written on the document.
 */
import { Effect, Layer, Option } from "effect"
import type { TakerNotificationKind } from "../domain/Document.js"
import type { DocumentId } from "../domain/Ids.js"
import type { Tenant } from "../domain/Tenant.js"
import { type ComposedNoteMail, NoteMailSource, NoteMailUnavailable, type NoteMailWithheld } from "../mail/NoteMail.js"
import { oneLine } from "../mail/NoteTemplates.js"
import { TenantService } from "../tenants/TenantService.js"
import { DocumentRepo, type StoredDocument } from "./DocumentRepo.js"
import { DocumentService } from "./DocumentService.js"
import { isServiceDocument } from "./DocumentView.js"
import { TakerNotificationRepo } from "./TakerNotificationRepo.js"

export const NoteMailSourceLive = Layer.effect(
  NoteMailSource,
  Effect.gen(function*() {
    const repo = yield* DocumentRepo
    const notifications = yield* TakerNotificationRepo
    const documents = yield* DocumentService
    const tenants = yield* TenantService

    /** Why the mail must not go out now, decided before its files are read. */
    const withheld = (row: StoredDocument, tenant: Tenant, kind: TakerNotificationKind, to: string) =>
      Effect.gen(function*() {
        if (!tenant.note_mail.enabled) return Option.some<NoteMailWithheld>("disabled")
        if (kind === "authorized" && (row.status === "cancelled" || row.status === "substituted")) {
          return Option.some<NoteMailWithheld>("superseded")
        }
        if (row.environment === "test" && !(yield* tenants.hasVerifiedMember(row.tenantId, to))) {
          return Option.some<NoteMailWithheld>("test_recipient")
        }
        return Option.none<NoteMailWithheld>()
      })

    const compose = (documentId: string, kind: TakerNotificationKind, to: string) =>
      Effect.gen(function*() {
        const found = yield* repo.findById(documentId as DocumentId)
        if (Option.isNone(found)) return Option.none()
        const row = found.value
        // Only service invoices are mailed to their taker; a goods document never queues a mail.
        if (!isServiceDocument(row)) return Option.none()
        const tenant = yield* tenants.get(row.tenantId)
        const reason = yield* withheld(row, tenant, kind, to)
        if (Option.isSome(reason)) return Option.some<ComposedNoteMail>({ _tag: "Withhold", reason: reason.value })
        const reach = { tenantId: row.tenantId, environment: row.environment }
        const [xml, pdf] = yield* Effect.all([documents.nfseXml(reach, row.id), documents.danfse(reach, row.id)])
        // The mail is queued by the authorization's settle: the note's files exist (nfseXml above).
        const authority = row.authority!
        const { legal_name, trade_name } = tenant.registration
        const file = `NFSe-${authority.access_key}`
        return Option.some<ComposedNoteMail>({
          _tag: "Send",
          content: {
            note: {
              kind,
              environment: row.environment,
              providerName: legal_name ?? tenant.name,
              takerName: row.taker?.name ?? null,
              nfseNumber: authority.nfse_number,
              accessKey: authority.access_key,
              servicesAmount: row.amounts.services,
              authorizedAt: authority.authorized_at,
              cancelledAt: kind === "cancelled" ? row.cancellation?.cancelled_at ?? null : null
            },
            senderName: oneLine(tenant.note_mail.sender_name ?? trade_name ?? legal_name ?? tenant.name),
            replyTo: tenant.registration.email,
            attachments: [
              { filename: `${file}.pdf`, contentType: "application/pdf", content: pdf.pdf },
              { filename: `${file}.xml`, contentType: "application/xml", content: xml.xml }
            ]
          }
        })
      }).pipe(
        // The reasons the files cannot be read now (the authority unreachable, the certificate gone)
        // are the API's own messages, which quote no secret: the mail is tried again later.
        Effect.catch((error) => Effect.fail(new NoteMailUnavailable({ message: `note files: ${error.message}` })))
      )

    return NoteMailSource.of({
      compose,
      recording: (documentId, kind, outcome, ending) =>
        notifications.record(documentId as DocumentId, {
          kind,
          status: outcome.status,
          attempts: outcome.attempts,
          sent_at: outcome.sentAt,
          last_error: outcome.lastError,
          updated_at: outcome.at
        }, ending)
    })
  })
).pipe(Layer.provide([DocumentRepo.layer, TakerNotificationRepo.layer]))
