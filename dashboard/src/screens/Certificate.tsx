/**
 * The tenant's A1 certificate (SPEC §8, §15): owners and admins upload the PKCS#12 file with its
 * password; every member sees the certificates' metadata, and above all how many days the active
 * one has left. The file and its password go to the API once and are not kept by the page.
 */
import { useState } from "preact/hooks"
import { type Api, type Failure, Redacted } from "../api.js"
import { formatDateTime, formatNumber, formatTaxId, texts, type Translate, useLang, useTexts } from "../i18n.js"
import { Async, Badge, Empty, ErrorNotice, useAction, useResource } from "../ui.js"
import { useWorkspace } from "../workspace.js"
import "./Certificate.css"

type Credential = Awaited<ReturnType<Api["credentials"]["get"]>>

/** The API's limit for the file (credentials/Api.ts `MAX_PKCS12_BYTES`): refused here before sending. */
const MAX_BYTES = 64 * 1024
const DAY_MS = 86_400_000
const WARN_DAYS = 30

const text = texts({
  en: {
    title: "A1 certificate",
    taxId: "Tenant tax id",
    verified: "verified",
    unverified: "not verified",
    upload: "Upload a certificate",
    uploadHint:
      "The A1 certificate file (.pfx or .p12) issued to this tenant's CNPJ, {taxId}, and its password. A new upload replaces the active certificate.",
    file: "Certificate file (.pfx or .p12)",
    password: "Certificate password",
    passwordHint: "Used once to open the file; it is not stored.",
    send: "Upload certificate",
    sending: "Uploading…",
    noFile: "Choose the certificate file.",
    tooBig: "The file is larger than 64 KiB; an A1 certificate file is a few KiB. Check that it is the right file.",
    unreadable: "The file could not be read. Choose it again.",
    uploaded: "Certificate uploaded. The tenant's tax id is verified.",
    uploadedUnverified:
      "Certificate stored for test documents only: it does not chain to an ICP-Brasil root, so it does not verify the tenant's tax id and cannot sign live documents. Upload the e-CNPJ exported with its certification path.",
    chain: "ICP-Brasil chain",
    chainOk: "verified: proves the tax id and signs live documents",
    chainMissing: "not verified: test documents only",
    certificate_password_incorrect: "The password does not open this file. Check it and try again.",
    certificate_expired: "This certificate has expired. Upload a valid certificate.",
    certificate_not_yet_valid: "This certificate is not valid yet. Upload it from its start date, or use another one.",
    certificate_tax_id_mismatch: "This certificate was issued to another CNPJ, not this tenant's ({taxId}).",
    invalid_certificate: "This file is not a usable A1 certificate (PKCS#12 with the private key).",
    conflict: "Another tenant has already proven this CNPJ with a certificate. Contact support.",
    payload_too_large: "The file is too large for an A1 certificate.",
    readOnly: "Only owners and admins upload certificates; your role in this tenant is developer.",
    certificates: "Certificates",
    none: "No certificate yet.",
    noneWhat:
      "An A1 digital certificate (e-CNPJ) signs the NFS-e this service sends to the real tax authority, and proves that your company holds the tenant's CNPJ. Without it, only test documents can be issued.",
    noneHow:
      "Buy an A1 e-CNPJ certificate from a certificate authority accredited by ICP-Brasil. It comes as a .pfx or .p12 file protected by a password and is valid for one year; upload it here.",
    noneNext: "Ask an owner or admin of this tenant to upload it.",
    status_active: "active",
    status_expired: "expired",
    status_replaced: "replaced",
    daysLeft: "{days} days to expiry",
    dayLeft: "1 day to expiry",
    expiresToday: "Expires today",
    expiredAgo: "Expired {days} days ago",
    renewSoon: "Renew it soon: live documents cannot be issued once it expires.",
    renewNow: "Expired: live documents cannot be issued until a valid certificate is uploaded.",
    subject: "Subject",
    issuer: "Issuer",
    serial: "Serial number",
    certTaxId: "CNPJ",
    notBefore: "Valid from",
    notAfter: "Valid until",
    fingerprint: "SHA-256 fingerprint",
    uploadedAt: "Uploaded"
  },
  pt: {
    title: "Certificado A1",
    taxId: "CNPJ da conta",
    verified: "verificado",
    unverified: "não verificado",
    upload: "Enviar um certificado",
    uploadHint:
      "O arquivo do certificado A1 (.pfx ou .p12) emitido para o CNPJ desta conta, {taxId}, e a senha dele. Um novo envio substitui o certificado ativo.",
    file: "Arquivo do certificado (.pfx ou .p12)",
    password: "Senha do certificado",
    passwordHint: "Usada uma única vez para abrir o arquivo; não é guardada.",
    send: "Enviar certificado",
    sending: "Enviando…",
    noFile: "Escolha o arquivo do certificado.",
    tooBig: "O arquivo tem mais de 64 KiB; um certificado A1 tem poucos KiB. Confira se é o arquivo certo.",
    unreadable: "Não foi possível ler o arquivo. Escolha-o de novo.",
    uploaded: "Certificado enviado. O CNPJ da conta está verificado.",
    uploadedUnverified:
      "Certificado guardado só para documentos de teste: ele não se encadeia a uma raiz ICP-Brasil, então não verifica o CNPJ da conta nem assina documentos reais. Envie o e-CNPJ exportado com o caminho de certificação.",
    chain: "Cadeia ICP-Brasil",
    chainOk: "verificada: comprova o CNPJ e assina documentos reais",
    chainMissing: "não verificada: só documentos de teste",
    certificate_password_incorrect: "A senha não abre este arquivo. Confira e tente de novo.",
    certificate_expired: "Este certificado está vencido. Envie um certificado válido.",
    certificate_not_yet_valid:
      "Este certificado ainda não começou a valer. Envie-o a partir da data de início ou use outro.",
    certificate_tax_id_mismatch: "Este certificado foi emitido para outro CNPJ, não o desta conta ({taxId}).",
    invalid_certificate: "Este arquivo não é um certificado A1 utilizável (PKCS#12 com a chave privada).",
    conflict: "Outra conta já comprovou este CNPJ com um certificado. Fale com o suporte.",
    payload_too_large: "O arquivo é grande demais para um certificado A1.",
    readOnly: "Só proprietários e administradores enviam certificados; seu papel nesta conta é desenvolvedor.",
    certificates: "Certificados",
    none: "Nenhum certificado ainda.",
    noneWhat:
      "O certificado digital A1 (e-CNPJ) assina as NFS-e que este serviço envia à autoridade tributária de verdade e comprova que sua empresa é a titular do CNPJ da conta. Sem ele, só é possível emitir documentos de teste.",
    noneHow:
      "Compre um certificado A1 e-CNPJ de uma autoridade certificadora credenciada pela ICP-Brasil. Ele vem como um arquivo .pfx ou .p12 protegido por senha e vale por um ano; envie-o aqui.",
    noneNext: "Peça a um proprietário ou administrador desta conta que o envie.",
    status_active: "ativo",
    status_expired: "vencido",
    status_replaced: "substituído",
    daysLeft: "{days} dias para vencer",
    dayLeft: "1 dia para vencer",
    expiresToday: "Vence hoje",
    expiredAgo: "Venceu há {days} dias",
    renewSoon: "Renove logo: depois do vencimento não é possível emitir documentos de produção.",
    renewNow: "Vencido: não é possível emitir documentos de produção até enviar um certificado válido.",
    subject: "Titular",
    issuer: "Emissor",
    serial: "Número de série",
    certTaxId: "CNPJ",
    notBefore: "Válido desde",
    notAfter: "Válido até",
    fingerprint: "Impressão digital SHA-256",
    uploadedAt: "Enviado em"
  }
})

type Texts = Translate<keyof typeof text.en>

export const CertificateScreen = (_: { readonly route?: ReadonlyArray<string> }) => {
  const t = useTexts(text)
  const { api, tenant, canManage } = useWorkspace()
  const credentials = useResource(
    () => api.credentials.list({ params: { tenantId: tenant.id }, query: { limit: 100 } }),
    [tenant.id]
  )
  return (
    <section aria-labelledby="certificate-title">
      <h1 id="certificate-title">{t("title")}</h1>
      <dl class="facts">
        <div>
          <dt>{t("taxId")}</dt>
          <dd>
            <span class="mono">{formatTaxId(tenant.tax_id)}</span>{" "}
            <Badge tone={tenant.verified ? "ok" : "muted"}>{t(tenant.verified ? "verified" : "unverified")}</Badge>
          </dd>
        </div>
      </dl>
      {canManage ? <UploadForm onUploaded={credentials.reload} /> : <p class="notice info">{t("readOnly")}</p>}
      <h2>{t("certificates")}</h2>
      <Async resource={credentials.resource} onRetry={credentials.reload}>
        {(page) =>
          page.data.length === 0
            ? (
              <Empty title={t("none")}>
                <p>{t("noneWhat")}</p>
                <p>{t("noneHow")}</p>
                {!canManage && <p>{t("noneNext")}</p>}
              </Empty>
            )
            : (
              <ul class="credentials">
                {activeFirst(page.data).map((credential) => (
                  <li key={credential.id}>
                    <CredentialCard credential={credential} t={t} />
                  </li>
                ))}
              </ul>
            )}
      </Async>
    </section>
  )
}

/** The active certificate first, the others newest first (the API's order). */
const activeFirst = (credentials: ReadonlyArray<Credential>) => [
  ...credentials.filter((credential) => credential.status === "active"),
  ...credentials.filter((credential) => credential.status !== "active")
]

/** Whole days from now to `notAfter`, negative once past it. */
const daysToExpiry = (notAfter: Date) => Math.floor((notAfter.getTime() - Date.now()) / DAY_MS)

const CredentialCard = ({ credential, t }: { readonly credential: Credential; readonly t: Texts }) => {
  const { lang } = useLang()
  const days = daysToExpiry(credential.not_after)
  const expired = credential.status === "expired" || credential.not_after.getTime() <= Date.now()
  // A replaced certificate no longer signs anything: its expiry is not a warning.
  const tone = credential.status === "replaced" ? "muted" : expired ? "bad" : days < WARN_DAYS ? "warn" : "ok"
  const expiry = expired
    ? t("expiredAgo", { days: formatNumber(Math.max(1, -days), lang) })
    : days === 0
    ? t("expiresToday")
    : days === 1
    ? t("dayLeft")
    : t("daysLeft", { days: formatNumber(days, lang) })
  const statusTone = credential.status === "active" ? "ok" : credential.status === "expired" ? "bad" : "muted"
  return (
    <article class={`credential ${credential.status}`} aria-labelledby={`credential-${credential.id}`}>
      <div class="credential-head">
        <h3 id={`credential-${credential.id}`}>{commonName(credential.subject)}</h3>
        <Badge tone={statusTone}>{t(`status_${credential.status}`)}</Badge>
      </div>
      <p class={`expiry ${tone}`}>{expiry}</p>
      {credential.status === "active" && tone === "warn" && <p class="notice warning">{t("renewSoon")}</p>}
      {credential.status !== "replaced" && tone === "bad" && <p class="notice error">{t("renewNow")}</p>}
      <dl class="facts">
        <div>
          <dt>{t("notAfter")}</dt>
          <dd>{formatDateTime(credential.not_after, lang)}</dd>
        </div>
        <div>
          <dt>{t("notBefore")}</dt>
          <dd>{formatDateTime(credential.not_before, lang)}</dd>
        </div>
        <div>
          <dt>{t("certTaxId")}</dt>
          <dd class="mono">{formatTaxId(credential.tax_id)}</dd>
        </div>
        <div>
          <dt>{t("uploadedAt")}</dt>
          <dd>{formatDateTime(credential.created_at, lang)}</dd>
        </div>
        <div class="wide">
          <dt>{t("chain")}</dt>
          <dd>{t(credential.verified_chain ? "chainOk" : "chainMissing")}</dd>
        </div>
        <div class="wide">
          <dt>{t("subject")}</dt>
          <dd class="mono">{credential.subject}</dd>
        </div>
        <div class="wide">
          <dt>{t("issuer")}</dt>
          <dd class="mono">{credential.issuer}</dd>
        </div>
        <div class="wide">
          <dt>{t("serial")}</dt>
          <dd class="mono">{credential.serial_number}</dd>
        </div>
        <div class="wide">
          <dt>{t("fingerprint")}</dt>
          <dd class="mono">{credential.fingerprint_sha256}</dd>
        </div>
      </dl>
    </article>
  )
}

/** The subject's CN (most specific first in RFC 4514), or the whole subject when it has none. */
const commonName = (subject: string) =>
  /(?:^|,)CN=((?:\\.|[^,])*)/.exec(subject)?.[1]?.replace(/\\(.)/g, "$1") ?? subject

/** The file's bytes as standard base64, in chunks (a spread of 64 KiB would be too many arguments). */
const base64Of = (bytes: Uint8Array) => {
  let binary = ""
  for (let at = 0; at < bytes.length; at += 0x2000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x2000))
  return btoa(binary)
}

const CERTIFICATE_CODES = [
  "certificate_password_incorrect",
  "certificate_expired",
  "certificate_not_yet_valid",
  "certificate_tax_id_mismatch",
  "invalid_certificate",
  "conflict",
  "payload_too_large"
] as const

const UploadForm = ({ onUploaded }: { readonly onUploaded: () => void }) => {
  const t = useTexts(text)
  const { api, tenant, notify, refreshTenant } = useWorkspace()
  const action = useAction()
  const [file, setFile] = useState<File | undefined>(undefined)
  const [password, setPassword] = useState("")
  const [local, setLocal] = useState<"noFile" | "tooBig" | "unreadable" | undefined>(undefined)
  // A new input element after each upload: the only reliable way to empty a file input.
  const [formKey, setFormKey] = useState(0)

  const submit = async (event: Event) => {
    event.preventDefault()
    action.clear()
    if (file === undefined) return setLocal("noFile")
    if (file.size > MAX_BYTES) return setLocal("tooBig")
    let pkcs12: string
    try {
      pkcs12 = base64Of(new Uint8Array(await file.arrayBuffer()))
    } catch {
      return setLocal("unreadable")
    }
    setLocal(undefined)
    const uploaded = await action.run(() =>
      api.credentials.upload({
        params: { tenantId: tenant.id },
        payload: { pkcs12, password: Redacted.make(password) }
      })
    )
    // The password leaves the page's state whatever the answer; a failed upload keeps the file.
    setPassword("")
    if (uploaded === undefined) return
    setFile(undefined)
    setFormKey((key) => key + 1)
    notify(t(uploaded.verified_chain ? "uploaded" : "uploadedUnverified"))
    onUploaded()
    // The tenant may be verified now: the frame reads it again (the overview and this screen show it).
    refreshTenant()
  }

  return (
    <form class="upload" key={formKey} onSubmit={submit} aria-labelledby="upload-title" noValidate>
      <h2 id="upload-title">{t("upload")}</h2>
      <p class="hint">{t("uploadHint", { taxId: formatTaxId(tenant.tax_id) })}</p>
      <label>
        {t("file")}
        <input
          type="file"
          accept=".pfx,.p12,application/x-pkcs12"
          required
          onChange={(event) => {
            setFile(event.currentTarget.files?.[0])
            setLocal(undefined)
          }}
        />
      </label>
      <label>
        {t("password")}
        <input
          type="password"
          autoComplete="off"
          aria-describedby="certificate-password-hint"
          value={password}
          onInput={(event) => setPassword(event.currentTarget.value)}
        />
      </label>
      <small id="certificate-password-hint">{t("passwordHint")}</small>
      {local !== undefined && <p class="notice error" role="alert">{t(local)}</p>}
      {action.failure && <UploadFailure failure={action.failure} taxId={formatTaxId(tenant.tax_id)} />}
      <div class="actions">
        <button type="submit" class="primary" disabled={action.busy}>{action.busy ? t("sending") : t("send")}</button>
      </div>
    </form>
  )
}

/** The certificate's own refusals in the person's language; anything else as every screen shows it. */
const UploadFailure = ({ failure, taxId }: { readonly failure: Failure; readonly taxId: string }) => {
  const t = useTexts(text)
  const code = CERTIFICATE_CODES.find((candidate) => candidate === failure.code)
  if (code === undefined) return <ErrorNotice failure={failure} />
  return (
    <div class="notice error" role="alert">
      <p>{t(code, { taxId })}</p>
      <p class="mono">{failure.code}</p>
    </div>
  )
}
