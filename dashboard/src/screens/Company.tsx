/**
 * The provider's registration (SPEC §5, §15): what every note's issuer block is written from.
 * Owners and admins edit it, developers read it. A refusal is shown next to the field it names
 * (the API's `issues` paths, `registration.address.postal_code`), and the whole message above the
 * button for anything that names no field.
 */
import { useState } from "preact/hooks"
import type { Failure } from "../api.js"
import { type Lang, texts, type Translate, useLang, useTexts } from "../i18n.js"
import { useMunicipalities } from "../municipalities.js"
import { problemText } from "../refusals.js"
import { ErrorNotice, useAction } from "../ui.js"
import { type Tenant, useWorkspace } from "../workspace.js"
import "./Company.css"

type Registration = Tenant["registration"]
type Address = NonNullable<Registration["address"]>

const text = texts({
  en: {
    title: "Company",
    intro:
      "The provider's registration: every note is issued in its name, from its municipality. A service invoice needs at least the legal name and the address.",
    readOnly: "Only owners and admins change the registration; your role in this tenant is developer.",
    identity: "Identification",
    legal_name: "Legal name (razão social)",
    trade_name: "Trade name (nome fantasia)",
    municipal_registration: "Municipal registration (IM)",
    municipal_registrationHint: "Leave it empty if the municipality has none in the national register.",
    state_registration: "State registration (IE, for goods)",
    address: "Address",
    street: "Street",
    number: "Number",
    complement: "Complement",
    district: "District",
    municipality_code: "Municipality (7-digit IBGE code)",
    unknownMunicipality: "IBGE lists no municipality with this code.",
    state: "State (UF)",
    postal_code: "CEP",
    contact: "Contact",
    phone: "Phone (area code and number)",
    email: "E-mail",
    regime: "Tax regime",
    simples_nacional: "Simples Nacional",
    sn_not_opted: "Not opted",
    sn_mei: "MEI",
    sn_me_epp: "ME/EPP",
    simples_nacional_apportionment: "How an ME/EPP pays (regApTribSN)",
    special_regime: "Special regime (regEspTrib)",
    crt: "CRT (goods invoices)",
    unset: "Not declared",
    ap_federal_and_municipal_in_simples: "Federal taxes and ISS in the Simples",
    ap_federal_in_simples: "Federal taxes in the Simples, ISS outside",
    ap_outside_simples: "Federal taxes and ISS outside the Simples",
    sr_none: "None",
    sr_cooperative: "Cooperative",
    sr_estimate: "Estimate",
    sr_municipal_microenterprise: "Municipal microenterprise",
    sr_notary_or_registrar: "Notary or registrar",
    sr_self_employed_professional: "Self-employed professional",
    sr_professional_society: "Professional society",
    crt_simples_nacional: "1 Simples Nacional",
    crt_simples_nacional_excess: "2 Simples Nacional, above the sublimit",
    crt_normal: "3 Normal regime",
    crt_mei: "4 MEI",
    noteMail: "Notes by e-mail",
    noteMailEnabled:
      "E-mail each authorized or cancelled note to its taker, with the DANFSe (PDF) and the XML, when the document has the taker's e-mail",
    noteMailSender: "Sender name",
    noteMailSenderHint:
      "Shown as the sender; the address is the service's and replies go to the e-mail above. Empty: the trade name, else the legal name.",
    save: "Save registration",
    saving: "Saving…",
    saved: "Registration saved."
  },
  pt: {
    title: "Empresa",
    intro:
      "O cadastro do prestador: toda nota é emitida em nome dele, a partir do município dele. Uma nota de serviço precisa ao menos da razão social e do endereço.",
    readOnly: "Só proprietários e administradores alteram o cadastro; seu papel nesta conta é desenvolvedor.",
    identity: "Identificação",
    legal_name: "Razão social",
    trade_name: "Nome fantasia",
    municipal_registration: "Inscrição municipal (IM)",
    municipal_registrationHint: "Deixe em branco se o município não tiver uma no cadastro nacional.",
    state_registration: "Inscrição estadual (IE, para mercadorias)",
    address: "Endereço",
    street: "Logradouro",
    number: "Número",
    complement: "Complemento",
    district: "Bairro",
    municipality_code: "Município (código IBGE de 7 dígitos)",
    unknownMunicipality: "O IBGE não lista nenhum município com este código.",
    state: "UF",
    postal_code: "CEP",
    contact: "Contato",
    phone: "Telefone (DDD e número)",
    email: "E-mail",
    regime: "Regime tributário",
    simples_nacional: "Simples Nacional",
    sn_not_opted: "Não optante",
    sn_mei: "MEI",
    sn_me_epp: "ME/EPP",
    simples_nacional_apportionment: "Regime de apuração da ME/EPP (regApTribSN)",
    special_regime: "Regime especial (regEspTrib)",
    crt: "CRT (notas de mercadorias)",
    unset: "Não informado",
    ap_federal_and_municipal_in_simples: "Tributos federais e ISS pelo Simples",
    ap_federal_in_simples: "Tributos federais pelo Simples, ISS por fora",
    ap_outside_simples: "Tributos federais e ISS por fora do Simples",
    sr_none: "Nenhum",
    sr_cooperative: "Ato cooperado",
    sr_estimate: "Estimativa",
    sr_municipal_microenterprise: "Microempresa municipal",
    sr_notary_or_registrar: "Notário ou registrador",
    sr_self_employed_professional: "Profissional autônomo",
    sr_professional_society: "Sociedade de profissionais",
    crt_simples_nacional: "1 Simples Nacional",
    crt_simples_nacional_excess: "2 Simples Nacional, excesso de sublimite",
    crt_normal: "3 Regime normal",
    crt_mei: "4 MEI",
    noteMail: "Nota por e-mail",
    noteMailEnabled:
      "Enviar ao tomador, por e-mail, cada nota autorizada ou cancelada, com o DANFSe (PDF) e o XML, quando o documento tiver o e-mail do tomador",
    noteMailSender: "Nome do remetente",
    noteMailSenderHint:
      "Aparece como remetente; o endereço é o do serviço e as respostas vão para o e-mail acima. Em branco: o nome fantasia ou, na falta dele, a razão social.",
    save: "Salvar cadastro",
    saving: "Salvando…",
    saved: "Cadastro salvo."
  }
})

type Key = Parameters<Translate<keyof typeof text.en>>[0]

const TEXT_FIELDS = [
  "legal_name",
  "trade_name",
  "municipal_registration",
  "state_registration",
  "phone",
  "email"
] as const
const ADDRESS_FIELDS = [
  "street",
  "number",
  "complement",
  "district",
  "municipality_code",
  "state",
  "postal_code"
] as const
const APPORTIONMENTS = ["federal_and_municipal_in_simples", "federal_in_simples", "outside_simples"] as const
const SPECIAL_REGIMES = [
  "none",
  "cooperative",
  "estimate",
  "municipal_microenterprise",
  "notary_or_registrar",
  "self_employed_professional",
  "professional_society"
] as const
const CRTS = ["simples_nacional", "simples_nacional_excess", "normal", "mei"] as const

type Form = Record<string, string>

const formOf = (tenant: Tenant): Form => {
  const r = tenant.registration
  const address: Partial<Address> = r.address ?? {}
  return {
    ...Object.fromEntries(TEXT_FIELDS.map((name) => [name, r[name] ?? ""])),
    ...Object.fromEntries(ADDRESS_FIELDS.map((name) => [`address.${name}`, address[name] ?? ""])),
    simples_nacional: tenant.simples_nacional,
    simples_nacional_apportionment: r.simples_nacional_apportionment ?? "",
    special_regime: r.special_regime ?? "",
    crt: r.crt ?? "",
    "note_mail.enabled": tenant.note_mail.enabled ? "on" : "",
    "note_mail.sender_name": tenant.note_mail.sender_name ?? ""
  }
}

const orNull = (value: string | undefined) => (value === undefined || value.trim() === "" ? null : value.trim())

/** The update: every field as the form has it (empty: cleared), the address whole or none. */
const changesOf = (form: Form) => {
  const address = ADDRESS_FIELDS.every((name) => orNull(form[`address.${name}`]) === null) ? null : {
    street: form["address.street"] ?? "",
    number: form["address.number"] ?? "",
    complement: orNull(form["address.complement"]),
    district: form["address.district"] ?? "",
    municipality_code: form["address.municipality_code"] ?? "",
    state: (form["address.state"] ?? "").toUpperCase(),
    postal_code: form["address.postal_code"] ?? ""
  }
  return {
    simples_nacional: form["simples_nacional"] as Tenant["simples_nacional"],
    registration: {
      ...Object.fromEntries(TEXT_FIELDS.map((name) => [name, orNull(form[name])])),
      address,
      simples_nacional_apportionment: orNull(form["simples_nacional_apportionment"]),
      special_regime: orNull(form["special_regime"]),
      crt: orNull(form["crt"])
    },
    note_mail: {
      enabled: form["note_mail.enabled"] === "on",
      sender_name: orNull(form["note_mail.sender_name"])
    }
  }
}

/**
 * What is wrong with each form field the failure names (`registration.address.state` →
 * `address.state`), in the page's language; the field's own label stands beside it.
 */
const fieldErrors = (failure: Failure | undefined, lang: Lang): Record<string, string> =>
  Object.fromEntries(
    (failure?.issues ?? []).map((issue) => {
      const path = issue.path.map(String)
      const name = path[0] === "registration" ? path.slice(1).join(".") : path.join(".")
      return [name, problemText(issue, lang, failure?.code)]
    })
  )

export const CompanyScreen = () => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { api, canManage, notify, refreshTenant, tenant } = useWorkspace()
  const action = useAction()
  const [form, setForm] = useState<Form>(() => formOf(tenant))
  const errors = fieldErrors(action.failure, lang)
  const municipalities = useMunicipalities()
  /** The place a typed code names, so a mistyped digit shows before saving. */
  const municipalityNote = (code: string) => {
    if (municipalities === undefined || !/^\d{7}$/.test(code.trim())) return undefined
    const found = municipalities(code.trim())
    return found === undefined ? t("unknownMunicipality") : `${found.name}/${found.state}`
  }
  const unnamed = action.failure !== undefined && Object.keys(errors).length === 0

  const submit = async (event: Event) => {
    event.preventDefault()
    const saved = await action.run(() =>
      api.tenants.update({ params: { tenantId: tenant.id }, payload: changesOf(form) as never })
    )
    if (saved === undefined) return
    setForm(formOf(saved))
    notify(t("saved"))
    refreshTenant()
  }

  const field = (
    name: string,
    label: Key,
    options: { hint?: Key; note?: string; inputMode?: "numeric" | "tel" | "email" } = {}
  ) => {
    const id = `company-${name.replaceAll(".", "-")}`
    const error = errors[name]
    const described = [options.hint && `${id}-hint`, options.note && `${id}-note`, error && `${id}-error`]
      .filter(Boolean)
      .join(" ")
    return (
      <label key={name}>
        {t(label)}
        <input
          id={id}
          name={name}
          value={form[name] ?? ""}
          disabled={!canManage}
          inputMode={options.inputMode}
          aria-invalid={error ? "true" : undefined}
          aria-describedby={described === "" ? undefined : described}
          onInput={(event) => setForm({ ...form, [name]: event.currentTarget.value })}
        />
        {options.hint && <small id={`${id}-hint`}>{t(options.hint)}</small>}
        {options.note && <small id={`${id}-note`}>{options.note}</small>}
        {error && <small id={`${id}-error`} class="field-error">{error}</small>}
      </label>
    )
  }

  const select = (name: string, label: Key, values: ReadonlyArray<string>, prefix: string, optional = true) => {
    const error = errors[name]
    return (
      <label key={name}>
        {t(label)}
        <select
          name={name}
          value={form[name] ?? ""}
          disabled={!canManage}
          aria-invalid={error ? "true" : undefined}
          onChange={(event) => setForm({ ...form, [name]: event.currentTarget.value })}
        >
          {optional && <option value="">{t("unset")}</option>}
          {values.map((value) => <option key={value} value={value}>{t(`${prefix}${value}` as Key)}</option>)}
        </select>
        {error && <small class="field-error">{error}</small>}
      </label>
    )
  }

  return (
    <section aria-labelledby="company-title">
      <h1 id="company-title">{t("title")}</h1>
      <p class="hint">{t("intro")}</p>
      {!canManage && <p class="notice">{t("readOnly")}</p>}
      <form class="company" onSubmit={submit} noValidate>
        <fieldset>
          <legend>{t("identity")}</legend>
          {field("legal_name", "legal_name")}
          {field("trade_name", "trade_name")}
          {field("municipal_registration", "municipal_registration", { hint: "municipal_registrationHint" })}
          {field("state_registration", "state_registration")}
        </fieldset>
        <fieldset>
          <legend>{t("address")}</legend>
          {field("address.street", "street")}
          {field("address.number", "number")}
          {field("address.complement", "complement")}
          {field("address.district", "district")}
          {field("address.municipality_code", "municipality_code", {
            inputMode: "numeric",
            note: municipalityNote(form["address.municipality_code"] ?? "")
          })}
          {field("address.state", "state")}
          {field("address.postal_code", "postal_code", { inputMode: "numeric" })}
        </fieldset>
        <fieldset>
          <legend>{t("contact")}</legend>
          {field("phone", "phone", { inputMode: "tel" })}
          {field("email", "email", { inputMode: "email" })}
        </fieldset>
        <fieldset>
          <legend>{t("regime")}</legend>
          {select("simples_nacional", "simples_nacional", ["not_opted", "mei", "me_epp"], "sn_", false)}
          {select("simples_nacional_apportionment", "simples_nacional_apportionment", APPORTIONMENTS, "ap_")}
          {select("special_regime", "special_regime", SPECIAL_REGIMES, "sr_")}
          {select("crt", "crt", CRTS, "crt_")}
        </fieldset>
        <fieldset>
          <legend>{t("noteMail")}</legend>
          <label class="check">
            <input
              type="checkbox"
              name="note_mail.enabled"
              checked={form["note_mail.enabled"] === "on"}
              disabled={!canManage}
              onChange={(event) => setForm({ ...form, "note_mail.enabled": event.currentTarget.checked ? "on" : "" })}
            />
            {t("noteMailEnabled")}
          </label>
          {field("note_mail.sender_name", "noteMailSender", { hint: "noteMailSenderHint" })}
        </fieldset>
        {unnamed && action.failure && <ErrorNotice failure={action.failure} />}
        {canManage && (
          <div class="actions">
            <button type="submit" class="primary" disabled={action.busy}>
              {action.busy ? t("saving") : t("save")}
            </button>
          </div>
        )}
      </form>
    </section>
  )
}
