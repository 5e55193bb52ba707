/** Tenants as the API shows them, shared by the tenants module (which owns them) and auth (registration, `/me/tenants`). */
import { Schema } from "effect"
import { trimmedString } from "./Normalized.js"
import { Role } from "./Principal.js"
import { Registration, RegistrationChanges } from "./Registration.js"
import { TaxId } from "./TaxId.js"
import { boundedText } from "./Text.js"
import { DateTime } from "./Time.js"

export const TenantStatus = Schema.Literals(["active", "past_due", "suspended"])
export type TenantStatus = typeof TenantStatus.Type

export const Quota = Schema.Struct({
  period: Schema.String.annotate({ description: "Calendar month (UTC), `YYYY-MM`." }),
  limit: Schema.Int.annotate({ examples: [100] }),
  used: Schema.Int.annotate({ examples: [12] })
}).annotate({
  identifier: "Quota",
  description: "The tenant's monthly quota of live documents: the period, its limit and how many were used."
})

/**
 * The tenant's standing in the Simples Nacional, the regime small businesses pay their taxes in: it
 * decides how each DPS declares the issuer (opSimpNac), whether it carries the ISS rate and which
 * approximate taxes it states. The national system refuses a DPS whose option contradicts its register.
 */
export const SimplesNacional = Schema.Literals(["not_opted", "mei", "me_epp"]).annotate({
  identifier: "SimplesNacional",
  description: "The tenant's option for the Simples Nacional, as the national NFS-e system registers it; every DPS " +
    "declares it (opSimpNac). `not_opted` (the default): outside the Simples Nacional; `mei`: microempreendedor " +
    "individual; `me_epp`: micro or small business (ME/EPP) in the Simples Nacional. Change it with " +
    "`PATCH /v1/tenants/{tenantId}`.",
  message: "must be \"not_opted\", \"mei\" or \"me_epp\""
})
export type SimplesNacional = typeof SimplesNacional.Type

/** Where the tenant stands on its tax id (SPEC §5), the reason behind `verified` and live issuing's answers. */
export const TaxIdStatus = Schema.Literals(["unverified", "verified", "verified_by_another"]).annotate({
  identifier: "TaxIdStatus",
  description: "`unverified`: the tenant names the tax id but has not proven it; it may issue live documents only " +
    "once it uploads an ICP-Brasil A1 certificate issued to it. `verified`: the tenant proved the tax id with such " +
    "a certificate and holds it alone. `verified_by_another`: another tenant proved this tax id with its " +
    "certificate; this tenant keeps its test documents, but cannot issue live documents for the tax id " +
    "(`422 credential_required`) nor upload a certificate of it (`409 conflict`). The event " +
    "`tenant.tax_id_verified_elsewhere` announces that change, `tenant.verification_revoked` an operator's undoing " +
    "of this tenant's verification."
})
export type TaxIdStatus = typeof TaxIdStatus.Type

/** The status a tenant's two flags make. */
export const taxIdStatusOf = (
  flags: { readonly verified: boolean; readonly taxIdVerifiedByAnother: boolean }
): TaxIdStatus => flags.verified ? "verified" : flags.taxIdVerifiedByAnother ? "verified_by_another" : "unverified"

const TenantName = trimmedString(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)))

/** Text for one line of a mail header: a line break there would start a header of its own. */
const oneLine = Schema.makeFilter((s: string) => !/[\r\n\t]/u.test(s), { message: "must be a single line" })

const SenderName = boundedText(100).check(oneLine).annotate({
  description: "The display name of the note mails' From (1 to 100 visible characters, one line)."
})

export const NoteMail = Schema.Struct({
  enabled: Schema.Boolean.annotate({
    description: "Whether authorized and cancelled notes are e-mailed to their takers (those with an `email`). " +
      "On by default: a taker expects the note, and a document without `taker.email` sends nothing anyway."
  }),
  sender_name: Schema.NullOr(Schema.String).annotate({
    description: "The From's display name; null: the registration's trade name, else its legal name, else the " +
      "tenant's name. The address is always the service's, and Reply-To the registration's `email`."
  })
}).annotate({
  identifier: "NoteMail",
  description: "Whether and how the tenant's authorized and cancelled notes are e-mailed to their takers."
})
export type NoteMail = typeof NoteMail.Type

export const NoteMailChanges = Schema.Struct({
  enabled: Schema.optionalKey(Schema.Boolean),
  sender_name: Schema.optionalKey(Schema.NullOr(SenderName))
}).check(Schema.isMinProperties(1, { message: "enabled or sender_name is required" }))
  .annotate({
    identifier: "NoteMailChanges",
    description: "Changes to the note mail settings: each field given replaces the stored one."
  })
export type NoteMailChanges = typeof NoteMailChanges.Type

export class Tenant extends Schema.Class<Tenant>("Tenant")({
  id: Schema.String.annotate({ examples: ["ten_01m8e314reqq8n7ywyftgbkv47"] }),
  object: Schema.tag("tenant"),
  name: Schema.String,
  tax_id: Schema.String.annotate({ examples: ["11222333000181"] }),
  verified: Schema.Boolean.annotate({
    description: "Whether this tenant proved its tax id with an A1 certificate issued to it (SPEC §5). A verified " +
      "tenant holds the tax id alone: no other tenant may register with it or issue live documents for it."
  }),
  tax_id_status: TaxIdStatus,
  status: TenantStatus,
  plan: Schema.String,
  quota: Quota,
  simples_nacional: SimplesNacional,
  registration: Registration,
  note_mail: NoteMail,
  created_at: DateTime
}, { description: "A company that issues documents through the service: its tax id, registration, plan and quota." }) {}

export const NewTenant = Schema.Struct({
  name: TenantName,
  tax_id: TaxId
})
export type NewTenant = typeof NewTenant.Type

/** A complete registration, the contract's example of an update (a test sends it as it is). */
const registrationExample = {
  registration: {
    legal_name: "Clínica Exemplo Serviços Médicos Ltda",
    trade_name: "Clínica Exemplo",
    municipal_registration: "51034401",
    state_registration: null,
    address: {
      street: "Avenida Paulista",
      number: "1000",
      complement: "Conjunto 101",
      district: "Bela Vista",
      municipality_code: "3550308",
      state: "SP" as const,
      postal_code: "01310100"
    },
    phone: "1133334444",
    email: "fiscal@clinica-exemplo.com.br",
    simples_nacional_apportionment: "federal_and_municipal_in_simples" as const,
    special_regime: "none" as const,
    crt: null
  },
  simples_nacional: "me_epp" as const
}

/**
 * What an owner or admin may change of the tenant, at least one field. Not the tax id: it is what the
 * tenant proves with its certificate and what its documents are issued for (SPEC §5).
 */
export const TenantChanges = Schema.Struct({
  name: Schema.optionalKey(TenantName),
  simples_nacional: Schema.optionalKey(SimplesNacional),
  registration: Schema.optionalKey(RegistrationChanges),
  note_mail: Schema.optionalKey(NoteMailChanges)
}).check(Schema.isMinProperties(1, { message: "name, simples_nacional, registration or note_mail is required" }))
  .annotate({
    identifier: "TenantChanges",
    description: "Changes to a tenant: each field given replaces the stored one.",
    examples: [registrationExample]
  })
export type TenantChanges = typeof TenantChanges.Type

export class TenantMembership extends Schema.Class<TenantMembership>("TenantMembership")({
  tenant: Tenant,
  role: Role
}, { description: "A tenant the current user belongs to, and their role there." }) {}
