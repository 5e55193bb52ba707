/**
 * Documents as the API shows them (SPEC §6): the schemas the documents module, its repository,
 * the webhook events and the typed client share.
 */
import { Schema, SchemaTransformation } from "effect"
import { described, omittedFromJsonSchema } from "./Described.js"
import { Amounts, IbsCbsFigures } from "./Money.js"
import { NoteAmounts } from "./NoteAmounts.js"
import { Environment } from "./Principal.js"
import { CountryCode, NationalAddress, Party, TaxDetails } from "./TaxContent.js"
import { MunicipalityCode } from "./TaxId.js"
import { boundedText, visibleText } from "./Text.js"
import { DateTime } from "./Time.js"

export { boundedText, visibleText }

export const DocumentStatus = Schema.Literals([
  "queued",
  "submitting",
  "contingency",
  "authorized",
  "rejected",
  "failed",
  "cancel_requested",
  "cancelled",
  "cancellation_in_analysis",
  "substituted"
])
export type DocumentStatus = typeof DocumentStatus.Type

export const Address = NationalAddress
export type Address = typeof Address.Type

/**
 * The taker (`toma`): by CPF/CNPJ, by foreign tax id (NIF) or the reason there is none, with an
 * address in Brazil or abroad. TaxRules.ts checks which combinations the national rules accept.
 */
export const Taker = Party.annotate({
  identifier: "Taker",
  description:
    "The taker (`toma`): by CPF/CNPJ, by foreign tax id (NIF) or the reason there is none, with an address in Brazil or abroad."
})
export type Taker = typeof Taker.Type

/** The intermediary (`interm`), the same shape as the taker. */
export const Intermediary = Party.annotate({
  identifier: "Intermediary",
  description: "The intermediary (`interm`), in the taker's shape."
})

export const NbsCode = Schema.String.check(
  Schema.isPattern(/^[0-9]{9}$/u, { message: "service.nbs_code must be the 9-digit NBS code of the service" })
).annotate({
  description: "The service's NBS code (Nomenclatura Brasileira de Serviços), 9 digits. Becomes the DPS's `cNBS`, " +
    "which the national schema requires: required in every environment (the simulator issues the note the " +
    "national system would)."
})

export const ServiceDescription = Schema.Struct({
  code: Schema.String.check(
    Schema.isPattern(/^[0-9]{6}$/u, { message: "service.code must be the 6-digit national service code (cTribNac)" })
  ).annotate({
    description: "The national service code (código de tributação nacional), 6 digits: becomes `cTribNac`."
  }),
  // Optional on a stored document: those accepted before it was required have none.
  nbs_code: Schema.optionalKey(NbsCode),
  municipal_code: Schema.optionalKey(
    Schema.String.check(
      Schema.isPattern(/^[0-9]{3}$/u, { message: "service.municipal_code must have 3 digits" })
    ).annotate({ description: "The municipality's own service code: becomes `cTribMun`." })
  ),
  description: boundedText(2000).pipe(described({
    description: "What was provided, as the note shows it (line breaks kept): becomes `xDescServ`."
  })),
  municipality_code: MunicipalityCode.annotate({
    description: "Where the service was provided (IBGE code): becomes `cLocPrestacao`."
  }),
  country_code: Schema.optionalKey(CountryCode.annotate({
    description: "Set when the service was provided abroad: becomes `cPaisPrestacao` instead of `cLocPrestacao`."
  }))
}).annotate({
  identifier: "Service",
  description: "The service provided: codes, description and where it was provided."
})

/**
 * A DPS series: 1 to 5 digits. "01" and "1" are the same series at the authority (the DPS id pads
 * it to 5 digits), so it is stored without leading zeros.
 */
export const Series = Schema.String.check(
  Schema.isPattern(/^[0-9]{1,5}$/u, { message: "series must have 1 to 5 digits" }),
  // The national schema refuses an all-zero series; refused here, it never becomes a failed document.
  Schema.makeFilter((s) => !/^0+$/u.test(s), { message: "series must not be zero" }),
  // The schema package of 27/07/2026 refuses series 90000 and above (TSSerieDPS).
  Schema.makeFilter((s) => Number(s) < 90_000, { message: "series must be below 90000", ...omittedFromJsonSchema })
).pipe(
  Schema.decodeTo(
    Schema.String,
    SchemaTransformation.transform({ decode: (s) => String(Number(s)), encode: (s) => s })
  ),
  described({
    description: "The DPS series, 1 to 89999 (1 to 5 digits); leading zeros are not significant. Default \"1\". " +
      "Becomes `serie`."
  })
)

const ISSUE_DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/u

export const IssueDate = Schema.String.check(
  Schema.isPattern(ISSUE_DATE_PATTERN, { message: "issue_date must be a date, YYYY-MM-DD" }),
  // Only judged once the shape is right, so a malformed date reports one issue.
  Schema.makeFilter(
    (s) =>
      !ISSUE_DATE_PATTERN.test(s) ||
      (!Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s)),
    { message: "issue_date must be a real calendar date", ...omittedFromJsonSchema }
  )
)

export const AuthorityInfo = Schema.Struct({
  access_key: Schema.String.annotate({ description: "The note's 50-digit access key (chave de acesso)." }),
  nfse_number: Schema.NullOr(Schema.String).annotate({
    description: "The NFS-e number the authority gave the note (null for notes authorized before it was recorded)."
  }),
  protocol: Schema.String,
  authorized_at: DateTime,
  amounts: Schema.optionalKey(NoteAmounts.annotate({
    description: "The authorized note's own `valores` (vCalcDR, vBC, pAliqAplic, vISSQN, vTotalRet, vLiq); the " +
      "document's `amounts` show them (`source` \"note\")."
  })),
  // Annotated on the key: annotating the identified schema would publish a second copy of it.
  ibs_cbs: Schema.optionalKey(IbsCbsFigures).annotateKey({
    description: "The authorized note's own IBS/CBS figures (its `IBSCBS` group), when it has one; the document's " +
      "`amounts.ibs_cbs` shows them."
  })
}).annotate({
  identifier: "AuthorityInfo",
  description: "What the authority gave an authorized document: access key, number, its amounts."
})

export const Rejection = Schema.Struct({ code: Schema.String, message: Schema.String }).annotate({
  identifier: "Rejection",
  description: "The authority's refusal: its own code and message."
})

export const CancellationReasonCode = Schema.Literals(["issue_error", "service_not_provided", "other"])

export const CancellationInfo = Schema.Struct({
  reason_code: CancellationReasonCode,
  analysis: Schema.optionalKey(Schema.Boolean.annotate({
    description:
      "true: a request for the municipality's fiscal analysis (event e101103, `cMotivo` and `xMotivo` from " +
      "`reason_code` and `reason`), made after a plain cancellation was refused past its deadline (E0822)."
  })),
  reason: Schema.String,
  requested_at: DateTime,
  cancelled_at: Schema.NullOr(DateTime),
  protocol: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Rejection).annotate({
    description: "Set when the authority refused the cancellation; the document is `authorized` again."
  })
}).annotate({
  identifier: "Cancellation",
  description: "The document's cancellation: the reason given and the authority's answer."
})

/**
 * Why a note is replaced (the DPS's `subst/cMotivo`, TSCodJustSubst of the v1.01 schema): 01 left
 * the Simples Nacional, 02 entered it, 03/04 retroactive immunity or exemption granted/removed, 05
 * refused by the taker (or the intermediary liable for the tax), 99 other.
 */
export const substitutionReasonCodes = {
  simples_nacional_exclusion: "01",
  simples_nacional_inclusion: "02",
  retroactive_exemption_granted: "03",
  retroactive_exemption_removed: "04",
  refused_by_taker: "05",
  other: "99"
} as const
export const SubstitutionReasonCode = Schema.Literals([
  "simples_nacional_exclusion",
  "simples_nacional_inclusion",
  "retroactive_exemption_granted",
  "retroactive_exemption_removed",
  "refused_by_taker",
  "other"
]).annotate({
  description: "Becomes `subst/cMotivo`: `simples_nacional_exclusion` 01, `simples_nacional_inclusion` 02, " +
    "`retroactive_exemption_granted` 03, `retroactive_exemption_removed` 04, `refused_by_taker` 05, `other` 99."
})
export type SubstitutionReasonCode = typeof SubstitutionReasonCode.Type

export const SubstitutionInfo = Schema.Struct({
  reason_code: SubstitutionReasonCode,
  reason: Schema.NullOr(Schema.String).annotate({ description: "Becomes `subst/xMotivo` (absent when null)." }),
  original_access_key: Schema.String.annotate({
    description: "The access key of the note this one replaces: becomes `subst/chSubstda`."
  })
}).annotate({ identifier: "Substitution", description: "The note this document replaces (`subst`), and why." })

export const LastError = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  at: DateTime
}).annotate({ identifier: "LastError", description: "The last error of a submission that failed." })

export const TakerNotificationKind = Schema.Literals(["authorized", "cancelled"])
export type TakerNotificationKind = typeof TakerNotificationKind.Type

export const TakerNotificationStatus = Schema.Literals([
  "pending",
  "sent",
  "failed",
  "disabled",
  "no_address",
  "test_recipient",
  "superseded"
])
export type TakerNotificationStatus = typeof TakerNotificationStatus.Type

export const TakerNotification = Schema.Struct({
  kind: TakerNotificationKind.annotate({
    description: "Which mail: the note's authorization (`authorized`) or its cancellation (`cancelled`). A " +
      "cancellation's mail takes the place of the authorization's here."
  }),
  status: TakerNotificationStatus.annotate({
    description: "`pending`: queued or being retried; `sent`: the taker's mail server accepted it; `failed`: given " +
      "up (see `last_error`); `disabled`: not sent, the tenant's `note_mail.enabled` was false; `no_address`: not " +
      "sent, the taker has no `email`; `test_recipient`: not sent, a test note is e-mailed only to a verified address " +
      "of one of the tenant's members (the sandbox mails no one else); `superseded`: not sent, the note was " +
      "cancelled or substituted before its authorization mail went out."
  }),
  attempts: Schema.Int.annotate({ description: "Delivery attempts so far." }),
  sent_at: Schema.NullOr(DateTime),
  last_error: Schema.NullOr(Schema.String).annotate({
    description: "The mail server's last refusal, shortened, addresses left out; null once sent."
  }),
  updated_at: DateTime
}).annotate({
  identifier: "TakerNotification",
  description: "The e-mail of the note to its taker (with the DANFSe PDF and the NFS-e XML), sent from the service's " +
    "address in the tenant's name when the note is authorized and again when it is cancelled."
})
export type TakerNotification = typeof TakerNotification.Type

export class Document extends Schema.Class<Document>("Document")({
  id: Schema.String.annotate({ examples: ["doc_01m8e314reqq8n7ywyftgbkv47"] }),
  object: Schema.tag("document"),
  environment: Environment,
  type: Schema.Literal("service_invoice"),
  status: DocumentStatus,
  reference: Schema.NullOr(Schema.String),
  series: Schema.String,
  number: Schema.Int.annotate({ examples: [1042] }),
  issue_date: Schema.String,
  taker: Schema.NullOr(Taker),
  intermediary: Schema.NullOr(Intermediary),
  service: ServiceDescription,
  amounts: Amounts,
  tax: TaxDetails,
  currency: Schema.Literal("BRL"),
  notes: Schema.NullOr(Schema.String),
  authority: Schema.NullOr(AuthorityInfo),
  rejection: Schema.NullOr(Rejection),
  cancellation: Schema.NullOr(CancellationInfo),
  attempts: Schema.Int.annotate({ examples: [1] }),
  last_error: Schema.NullOr(LastError),
  substitutes: Schema.NullOr(Schema.String).annotate({
    description: "The id of the document this one replaces (set on a substitute)."
  }),
  substituted_by: Schema.NullOr(Schema.String).annotate({
    description:
      "The id of the document that replaced this one, once the authority authorized it (status `substituted`)."
  }),
  substitution: Schema.NullOr(SubstitutionInfo),
  taker_notification: Schema.NullOr(TakerNotification).annotate({
    description: "The note's e-mail to the taker: null until the note is authorized."
  }),
  created_at: DateTime,
  updated_at: DateTime
}, {
  description:
    "An electronic tax document (NFS-e) of the tenant: what was asked, where it is in its lifecycle, and the authority's answer."
}) {}
