/**
 * A document as the national system's DPS: the one mapping from the port's `SubmissionDocument`
 * to `DpsInput`, shared by the `sefin` adapter (which signs and sends it) and the simulator (whose
 * NFS-e embeds it, as the national system's does).
 *
 * The issuer's municipality (cLocEmi) is the provider's, from its registration when the document was
 * accepted, wherever the service was provided (cLocPrestacao). IM, phone, e-mail and the tax regime
 * come from the registration too; the Simples Nacional option is the tenant's (not opted when the
 * document has none).
 * The DPS is emitted (dhEmi) when the service accepted the document, so the one built to check it
 * at acceptance and the one signed at every attempt are the same.
 */
import { substitutionReasonCodes } from "../../domain/Document.js"
import type { Environment } from "../../domain/Principal.js"
import { apportionmentCode, specialRegimeCode } from "../../domain/Registration.js"
import { normalizeTaxId } from "../../domain/TaxId.js"
import { environmentCode, type SubmissionDocument } from "../TaxAuthority.js"
import type { DpsInput } from "./Dps.js"
import { buildDpsIbsCbs } from "./IbsCbs.js"

const issuerOf = (issuer: SubmissionDocument["issuer"]): DpsInput["issuer"] => {
  const registration = issuer.registration
  const apportionment = registration?.simples_nacional_apportionment ?? null
  const specialRegime = registration?.special_regime ?? null
  return {
    taxId: normalizeTaxId(issuer.taxId),
    municipalityCode: issuer.municipalityCode,
    simplesNacional: issuer.simplesNacional,
    ...(registration?.municipal_registration == null
      ? {}
      : { municipalRegistration: registration.municipal_registration }),
    ...(registration?.phone == null ? {} : { phone: registration.phone }),
    ...(registration?.email == null ? {} : { email: registration.email }),
    ...(apportionment === null ? {} : { simplesNacionalApportionment: apportionmentCode[apportionment] }),
    ...(specialRegime === null ? {} : { specialRegime: specialRegimeCode[specialRegime] })
  }
}

export const dpsInputOf = (document: SubmissionDocument, environment: Environment): DpsInput => ({
  tpAmb: environmentCode(environment),
  emittedAt: document.createdAt,
  competence: document.issueDate,
  series: document.series,
  number: document.number,
  issuer: issuerOf(document.issuer),
  taker: document.taker,
  intermediary: document.intermediary,
  service: {
    code: document.service.code,
    municipalCode: document.service.municipal_code,
    nbsCode: document.service.nbs_code,
    description: document.service.description,
    municipalityCode: document.service.municipality_code,
    countryCode: document.service.country_code
  },
  amounts: document.amounts,
  tax: document.tax,
  ...(document.tax.ibs_cbs === undefined ? {} : { ibsCbsXml: buildDpsIbsCbs(document.tax.ibs_cbs) }),
  notes: document.notes,
  ...(document.substitution == null ? {} : {
    substitution: {
      accessKey: document.substitution.original_access_key,
      reasonCode: substitutionReasonCodes[document.substitution.reason_code],
      ...(document.substitution.reason === null ? {} : { reason: document.substitution.reason })
    }
  })
})
