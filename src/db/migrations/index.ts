import { Migrator } from "effect/sql"
import foundation from "./0001_foundation.js"
import authoritySimulator from "./0002_authority_simulator.js"
import documents from "./0003_documents.js"
import webhooks from "./0004_webhooks.js"
import credentialsBilling from "./0005_credentials_billing.js"
import queueFairness from "./0006_queue_fairness.js"
import taxIdOwnership from "./0007_tax_id_ownership.js"
import queueCaps from "./0008_queue_caps.js"
import documentFiles from "./0009_document_files.js"
import tenantTaxRegime from "./0010_tenant_tax_regime.js"
import securityAlertsByKey from "./0011_security_alerts_by_key.js"
import providerRegistration from "./0012_provider_registration.js"
import documentTaxContent from "./0013_document_tax_content.js"
import credentialChain from "./0014_credential_chain.js"
import substitutionAndAnalysis from "./0015_substitution_and_analysis.js"
import mail from "./0016_mail.js"
import invitations from "./0017_invitations.js"
import auditLog from "./0018_audit_log.js"
import noteMail from "./0019_note_mail.js"
import documentSearch from "./0020_document_search.js"
import goodsDocuments from "./0021_goods_documents.js"
import documentCorrections from "./0022_document_corrections.js"
import voidedNumbers from "./0023_voided_numbers.js"
import offlineContingency from "./0024_offline_contingency.js"
import authorizerStatus from "./0025_authorizer_status.js"

/** Ordered by id; the Migrator records each applied id in `etd_migrations`. */
export const migrations = Migrator.fromRecord({
  "0001_foundation": foundation,
  "0002_authority_simulator": authoritySimulator,
  "0003_documents": documents,
  "0004_webhooks": webhooks,
  "0005_credentials_billing": credentialsBilling,
  "0006_queue_fairness": queueFairness,
  "0007_tax_id_ownership": taxIdOwnership,
  "0008_queue_caps": queueCaps,
  "0009_document_files": documentFiles,
  "0010_tenant_tax_regime": tenantTaxRegime,
  "0011_security_alerts_by_key": securityAlertsByKey,
  "0012_provider_registration": providerRegistration,
  "0013_document_tax_content": documentTaxContent,
  "0014_credential_chain": credentialChain,
  "0015_substitution_and_analysis": substitutionAndAnalysis,
  "0016_mail": mail,
  "0017_invitations": invitations,
  "0018_audit_log": auditLog,
  "0019_note_mail": noteMail,
  "0020_document_search": documentSearch,
  "0021_goods_documents": goodsDocuments,
  "0022_document_corrections": documentCorrections,
  "0023_voided_numbers": voidedNumbers,
  "0024_offline_contingency": offlineContingency,
  "0025_authorizer_status": authorizerStatus
})
