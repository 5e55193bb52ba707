/**
 * A document as the tax-authority port takes it: its stored fields, and its issuer (the tenant as
 * it is when the document is checked or sent). The one mapping, for acceptance's check of what
 * the authority would refuse and for the issuance worker's submission.
 */
import type { SubmissionDocument } from "../authority/TaxAuthority.js"
import type { StoredDocument } from "./DocumentRepo.js"

export const submissionDocumentOf = (
  row: Pick<StoredDocument, "environment" | "series" | "number" | "issueDate" | "taker" | "service" | "amounts" | "notes">,
  issuer: SubmissionDocument["issuer"]
): SubmissionDocument => ({
  environment: row.environment,
  issuer,
  series: row.series,
  number: row.number,
  issueDate: row.issueDate,
  taker: row.taker,
  service: row.service,
  amounts: row.amounts,
  notes: row.notes
})
