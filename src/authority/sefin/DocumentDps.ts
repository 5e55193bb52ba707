/**
 * A document as the national system's DPS: the one mapping from the port's `SubmissionDocument`
 * to `DpsInput`, shared by the `sefin` adapter (which signs and sends it) and the simulator (whose
 * NFS-e embeds it, as the national system's does).
 *
 * The issuer's municipality (cLocEmi) is the service's: the tenant records no address of its own,
 * and a provider issues where it is registered, which is where it provides the service in the common
 * case. The issuer's Simples Nacional option is the tenant's (not opted when the document has none).
 * The DPS is emitted (dhEmi) when the service accepted the document, so the one built to check it
 * at acceptance and the one signed at every attempt are the same.
 */
import { substitutionReasonCodes } from "../../domain/Document.js"
import type { Environment } from "../../domain/Principal.js"
import { normalizeTaxId } from "../../domain/TaxId.js"
import { environmentCode, type SubmissionDocument } from "../TaxAuthority.js"
import type { DpsInput } from "./Dps.js"

export const dpsInputOf = (document: SubmissionDocument, environment: Environment): DpsInput => ({
  tpAmb: environmentCode(environment),
  emittedAt: document.createdAt,
  competence: document.issueDate,
  series: document.series,
  number: document.number,
  issuer: {
    taxId: normalizeTaxId(document.issuer.taxId),
    municipalityCode: document.service.municipality_code,
    simplesNacional: document.issuer.simplesNacional
  },
  taker: {
    taxId: normalizeTaxId(document.taker.tax_id),
    name: document.taker.name,
    ...(document.taker.email === undefined ? {} : { email: document.taker.email }),
    ...(document.taker.address === undefined ? {} : { address: document.taker.address })
  },
  service: {
    code: document.service.code,
    ...(document.service.nbs_code === undefined ? {} : { nbsCode: document.service.nbs_code }),
    description: document.service.description,
    municipalityCode: document.service.municipality_code
  },
  amounts: document.amounts,
  notes: document.notes,
  ...(document.substitution == null ? {} : {
    substitution: {
      accessKey: document.substitution.original_access_key,
      reasonCode: substitutionReasonCodes[document.substitution.reason_code],
      ...(document.substitution.reason === null ? {} : { reason: document.substitution.reason })
    }
  })
})
