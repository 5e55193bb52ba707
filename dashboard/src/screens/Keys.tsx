/**
 * The tenant's API keys (SPEC §4, §15): the list with each key's environment, scopes, status and
 * exposure alerts; creating a key, rotating it with a grace period and revoking it. A token is
 * shown once, in the dialog that produced it, and lives only in that dialog's state: closing the
 * dialog drops it. Developers see the list without the controls (the server refuses them anyway).
 */
import { useState } from "preact/hooks"
import { type Api, failureOf } from "../api.js"
import { formatDateTime, type Lang, texts, type Translate, useLang, useTexts } from "../i18n.js"
import {
  Badge,
  Confirm,
  CopyButton,
  Dialog,
  Empty,
  EnvironmentBadge,
  ErrorNotice,
  PagedTable,
  SecretOnce,
  useAction,
  usePages
} from "../ui.js"
import { useWorkspace } from "../workspace.js"
import "./Keys.css"

type ApiKey = Awaited<ReturnType<Api["apiKeys"]["list"]>>["data"][number]
type Scope = ApiKey["scopes"][number]
type Environment = ApiKey["environment"]
type Status = ApiKey["status"]
type ExposureSource = NonNullable<ApiKey["exposure"]>["last_source"]

const SCOPES = [
  "documents:read",
  "documents:write",
  "documents:cancel",
  "credentials:read",
  "webhooks:read",
  "webhooks:write"
] as const satisfies ReadonlyArray<Scope>
// A seventh scope added to the contract must be offered here too: this fails to compile until it is.
const everyScopeOffered: [Exclude<Scope, (typeof SCOPES)[number]>] extends [never] ? true : never = true
void everyScopeOffered

const PAGE = 20
const DEFAULT_GRACE_DAYS = 7

const text = texts({
  en: {
    title: "API keys",
    lead: "Your backend authenticates with these keys. Each key works in one environment with the scopes you choose.",
    create: "Create a key",
    readOnly:
      "Your role in this tenant is developer: you can see the keys, but only owners and admins create, rotate or revoke them.",
    emptyTitle: "This tenant has no API keys yet.",
    emptyHint:
      "Create a test key to try the API against the homologation sandbox, then a live key when you are ready to issue real documents.",
    emptyHintReadOnly: "An owner or admin of this tenant can create one.",
    name: "Name",
    environment: "Environment",
    scopes: "Scopes",
    hint: "Token",
    keyId: "Key id",
    copyHint: "Copy the token hint of {name}",
    copyKeyId: "Copy the key id of {name}",
    created: "Created",
    lastUsed: "Last used",
    never: "never",
    status: "Status",
    actions: "Actions",
    live: "live",
    test: "test",
    status_active: "active",
    status_expiring: "expiring",
    status_expired: "expired",
    status_revoked: "revoked",
    expiresAt: "until {when}",
    expiredAt: "since {when}",
    revokedAt: "on {when}",
    replacedBy: "Replaced by {name}",
    exposed: "Exposed",
    exposureText: "Exposure alerts: {count}; the last on {when}, {source}.",
    exposureRotate: "Anyone who saw it can use it: rotate this key now and put the new token on your backend.",
    exposureInactive: "The key no longer works, so nothing more is needed.",
    exposureSummary: "Exposed keys still in use: {count}. Rotate each one and replace its token on your backend.",
    source_url: "the token was sent in a request URL",
    source_log: "the token appeared in the service's logs",
    source_browser: "the token was sent from a web browser",
    rotate: "Rotate",
    revoke: "Revoke",
    createTitle: "Create an API key",
    nameHint: "Something that says where it runs, such as \"billing backend\".",
    environmentLegend: "Environment",
    liveExplained:
      "Reaches the tax authority's production system: documents are real, count against your monthly quota and are billed.",
    testExplained: "Reaches the authority's homologation sandbox: documents have no legal value and cost nothing.",
    scopesLegend: "What the key may do (at least one)",
    scope_documents_read: "List and read documents.",
    scope_documents_write: "Issue documents.",
    scope_documents_cancel: "Cancel documents.",
    scope_credentials_read: "Read the certificate's details (never its content).",
    scope_webhooks_read: "Read webhook endpoints and their deliveries.",
    scope_webhooks_write: "Create, change and rotate webhook endpoints; replay deliveries.",
    noScope: "Choose at least one scope.",
    noName: "Give the key a name.",
    cancel: "Cancel",
    submitCreate: "Create key",
    working: "Working…",
    createdTitle: "Your new key's token",
    tokenLabel: "Token of {name}",
    createdNote:
      "Put it in your backend's configuration (an environment variable or a secret store). Never in a web page, a mobile app or a URL.",
    saved: "I have saved it, close",
    created_notice: "Key {name} created.",
    rotateTitle: "Rotate {name}",
    rotateExplained:
      "A new token is issued with the same environment and scopes. The old token keeps working during the grace period, so you can replace it on your backend without downtime; after that it is refused.",
    graceDays: "Grace period in days (0 to 30)",
    graceHint: "0 ends the old token at once.",
    graceInvalid: "Enter a whole number of days from 0 to 30.",
    notActive:
      "This key is no longer active: it was rotated or revoked in the meantime. The list now shows it as it is.",
    submitRotate: "Rotate key",
    rotatedTitle: "The new token of {name}",
    oldUntil: "The old token works until {when}, then it is refused. Replace it on your backend before then.",
    oldEnded: "The old token no longer works.",
    rotated_notice: "Key {name} rotated.",
    revokeTitle: "Revoke {name}?",
    revokeBody:
      "Every request with this key is refused at once, on every server, with api_key_revoked. This cannot be undone: a backend still using it stops working.",
    revokeConfirm: "Revoke key",
    revoked_notice: "Key {name} revoked."
  },
  pt: {
    title: "Chaves de API",
    lead:
      "Seu backend se autentica com estas chaves. Cada chave funciona em um ambiente, com os escopos que você escolher.",
    create: "Criar uma chave",
    readOnly:
      "Seu papel nesta conta é desenvolvedor: você vê as chaves, mas só proprietários e administradores as criam, rotacionam ou revogam.",
    emptyTitle: "Esta conta ainda não tem chaves de API.",
    emptyHint:
      "Crie uma chave de teste para experimentar a API no ambiente de homologação e, quando estiver pronto para emitir documentos reais, uma chave de produção.",
    emptyHintReadOnly: "Um proprietário ou administrador desta conta pode criar uma.",
    name: "Nome",
    environment: "Ambiente",
    scopes: "Escopos",
    hint: "Token",
    keyId: "Id da chave",
    copyHint: "Copiar o final do token de {name}",
    copyKeyId: "Copiar o id da chave {name}",
    created: "Criada em",
    lastUsed: "Último uso",
    never: "nunca",
    status: "Situação",
    actions: "Ações",
    live: "produção",
    test: "teste",
    status_active: "ativa",
    status_expiring: "expirando",
    status_expired: "expirada",
    status_revoked: "revogada",
    expiresAt: "até {when}",
    expiredAt: "desde {when}",
    revokedAt: "em {when}",
    replacedBy: "Substituída por {name}",
    exposed: "Exposta",
    exposureText: "Alertas de exposição: {count}; o último em {when}, {source}.",
    exposureRotate:
      "Qualquer pessoa que o viu pode usá-lo: rotacione esta chave agora e coloque o novo token no seu backend.",
    exposureInactive: "A chave não funciona mais; não é preciso fazer nada.",
    exposureSummary: "Chaves expostas ainda em uso: {count}. Rotacione cada uma e troque o token no seu backend.",
    source_url: "o token foi enviado na URL de uma requisição",
    source_log: "o token apareceu nos logs do serviço",
    source_browser: "o token foi enviado por um navegador",
    rotate: "Rotacionar",
    revoke: "Revogar",
    createTitle: "Criar uma chave de API",
    nameHint: "Algo que diga onde ela roda, como \"backend de faturamento\".",
    environmentLegend: "Ambiente",
    liveExplained:
      "Emite no ambiente de produção do fisco: os documentos são reais, contam na sua cota mensal e são cobrados.",
    testExplained: "Usa o ambiente de homologação do fisco: os documentos não têm valor fiscal e não custam nada.",
    scopesLegend: "O que a chave pode fazer (pelo menos um)",
    scope_documents_read: "Listar e consultar documentos.",
    scope_documents_write: "Emitir documentos.",
    scope_documents_cancel: "Cancelar documentos.",
    scope_credentials_read: "Consultar os dados do certificado (nunca o conteúdo).",
    scope_webhooks_read: "Consultar endpoints de webhook e suas entregas.",
    scope_webhooks_write: "Criar, alterar e trocar o segredo de endpoints de webhook; reenviar entregas.",
    noScope: "Escolha pelo menos um escopo.",
    noName: "Dê um nome à chave.",
    cancel: "Cancelar",
    submitCreate: "Criar chave",
    working: "Processando…",
    createdTitle: "O token da sua nova chave",
    tokenLabel: "Token de {name}",
    createdNote:
      "Coloque-o na configuração do seu backend (uma variável de ambiente ou um cofre de segredos). Nunca em uma página web, um aplicativo ou uma URL.",
    saved: "Já guardei, fechar",
    created_notice: "Chave {name} criada.",
    rotateTitle: "Rotacionar {name}",
    rotateExplained:
      "Um novo token é emitido com o mesmo ambiente e os mesmos escopos. O token antigo continua funcionando durante o prazo de carência, para você trocá-lo no backend sem interrupção; depois disso ele é recusado.",
    graceDays: "Prazo de carência em dias (0 a 30)",
    graceHint: "0 encerra o token antigo na hora.",
    graceInvalid: "Informe um número inteiro de dias de 0 a 30.",
    notActive:
      "Esta chave não está mais ativa: foi rotacionada ou revogada nesse meio-tempo. A lista agora a mostra como está.",
    submitRotate: "Rotacionar chave",
    rotatedTitle: "O novo token de {name}",
    oldUntil: "O token antigo funciona até {when} e depois é recusado. Troque-o no seu backend antes disso.",
    oldEnded: "O token antigo não funciona mais.",
    rotated_notice: "Chave {name} rotacionada.",
    revokeTitle: "Revogar {name}?",
    revokeBody:
      "Toda requisição com esta chave passa a ser recusada na hora, em todos os servidores, com api_key_revoked. Não dá para desfazer: um backend que ainda a use para de funcionar.",
    revokeConfirm: "Revogar chave",
    revoked_notice: "Chave {name} revogada."
  }
})

type Key = keyof typeof text.en
const scopeText = (scope: Scope): Key => `scope_${scope.replace(":", "_")}` as Key

const statusTone = (status: Status) => status === "active" ? "ok" : status === "expiring" ? "warn" : "muted"

/** Revoked and expired keys no longer authenticate anything: shown muted, without controls. */
const isUsable = (key: ApiKey) => key.status === "active" || key.status === "expiring"

type Open =
  | { readonly dialog: "create" }
  | { readonly dialog: "rotate"; readonly key: ApiKey }
  | { readonly dialog: "revoke"; readonly key: ApiKey }

export const KeysScreen = () => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { api, tenant, canManage, notify } = useWorkspace()
  const pages = usePages(
    (startingAfter) =>
      api.apiKeys.list({
        params: { tenantId: tenant.id },
        query: startingAfter === undefined ? { limit: PAGE } : { limit: PAGE, starting_after: startingAfter }
      }),
    [tenant.id]
  )
  const [open, setOpen] = useState<Open | undefined>(undefined)
  const close = () => setOpen(undefined)
  const exposedInUse = pages.items.filter((key) => key.exposure !== null && isUsable(key)).length
  const nameOf = (id: string) => pages.items.find((key) => key.id === id)?.name ?? id
  return (
    <section aria-labelledby="keys-title" class="keys">
      <div class="toolbar">
        <h1 id="keys-title">{t("title")}</h1>
        {canManage && (
          <button type="button" class="primary" onClick={() => setOpen({ dialog: "create" })}>{t("create")}</button>
        )}
      </div>
      <p class="hint">{t("lead")}</p>
      {!canManage && <p class="notice info">{t("readOnly")}</p>}
      {exposedInUse > 0 && <p class="notice warning">{t("exposureSummary", { count: exposedInUse })}</p>}
      <PagedTable
        pages={pages}
        empty={
          <Empty title={t("emptyTitle")}>
            <p>{canManage ? t("emptyHint") : t("emptyHintReadOnly")}</p>
            {canManage && (
              <button type="button" class="primary" onClick={() => setOpen({ dialog: "create" })}>
                {t("create")}
              </button>
            )}
          </Empty>
        }
        columns={[
          t("name"),
          t("environment"),
          t("scopes"),
          t("hint"),
          t("created"),
          t("lastUsed"),
          t("status"),
          canManage && t("actions")
        ]}
        row={(key) => (
          <KeyRow
            key={key.id}
            apiKey={key}
            nameOf={nameOf}
            canManage={canManage}
            onRotate={() => setOpen({ dialog: "rotate", key })}
            onRevoke={() => setOpen({ dialog: "revoke", key })}
            t={t}
            lang={lang}
          />
        )}
      />
      {open?.dialog === "create" && (
        <CreateDialog
          onClose={close}
          onCreated={(key) => {
            pages.reload()
            notify(t("created_notice", { name: key.name }))
          }}
        />
      )}
      {open?.dialog === "rotate" && (
        <RotateDialog
          apiKey={open.key}
          onClose={close}
          onRotated={() => {
            pages.reload()
            notify(t("rotated_notice", { name: open.key.name }))
          }}
          onStale={pages.reload}
        />
      )}
      {open?.dialog === "revoke" && (
        <Confirm
          title={t("revokeTitle", { name: open.key.name })}
          body={<p>{t("revokeBody")}</p>}
          confirmLabel={t("revokeConfirm")}
          onClose={close}
          onConfirm={() =>
            api.apiKeys.revoke({ params: { tenantId: tenant.id, keyId: open.key.id } }).then((revoked) => {
              pages.reload()
              notify(t("revoked_notice", { name: revoked.name }))
              return revoked
            })}
        />
      )}
    </section>
  )
}

const KeyRow = ({ apiKey, nameOf, canManage, onRotate, onRevoke, t, lang }: {
  readonly apiKey: ApiKey
  readonly nameOf: (id: string) => string
  readonly canManage: boolean
  readonly onRotate: () => void
  readonly onRevoke: () => void
  readonly t: Translate<Key>
  readonly lang: Lang
}) => {
  const usable = isUsable(apiKey)
  const when = (date: Date | null) => formatDateTime(date, lang)
  return (
    <tr class={usable ? undefined : "inactive"}>
      <th scope="row" data-label={t("name")}>
        <div>
          <span class="key-name">{apiKey.name}</span>
          {apiKey.exposure !== null && (
            <div class={usable ? "exposure" : "exposure past"}>
              <Badge tone={usable ? "bad" : "muted"}>{t("exposed")}</Badge>
              <p>
                {t("exposureText", {
                  count: apiKey.exposure.count,
                  when: when(apiKey.exposure.last_detected_at),
                  source: t(`source_${apiKey.exposure.last_source satisfies ExposureSource}`)
                })} {usable ? t("exposureRotate") : t("exposureInactive")}
              </p>
            </div>
          )}
        </div>
      </th>
      <td data-label={t("environment")}>
        <EnvironmentBadge environment={apiKey.environment} label={t(apiKey.environment)} />
      </td>
      <td data-label={t("scopes")}>
        <ul class="scopes">
          {apiKey.scopes.map((scope) => (
            <li key={scope}>
              <code>{scope}</code>
            </li>
          ))}
        </ul>
      </td>
      <td data-label={t("hint")}>
        <div class="key-ids">
          <span>
            <span class="mono">{apiKey.hint}</span>{" "}
            <CopyButton text={apiKey.hint} name={t("copyHint", { name: apiKey.name })} />
          </span>
          <small>
            {t("keyId")}: <span class="mono">{apiKey.id}</span>{" "}
            <CopyButton text={apiKey.id} name={t("copyKeyId", { name: apiKey.name })} />
          </small>
        </div>
      </td>
      <td data-label={t("created")}>{when(apiKey.created_at)}</td>
      <td data-label={t("lastUsed")}>{apiKey.last_used_at === null ? t("never") : when(apiKey.last_used_at)}</td>
      <td data-label={t("status")}>
        <div>
          <Badge tone={statusTone(apiKey.status)}>{t(`status_${apiKey.status}`)}</Badge>
          {apiKey.revoked_at !== null
            // Revocation ends a key whatever a rotation's grace period would have allowed.
            ? <small>{t("revokedAt", { when: when(apiKey.revoked_at) })}</small>
            : apiKey.expires_at !== null && (
              <small>
                {t(apiKey.status === "expiring" ? "expiresAt" : "expiredAt", { when: when(apiKey.expires_at) })}
              </small>
            )}
          {apiKey.replaced_by !== null && <small>{t("replacedBy", { name: nameOf(apiKey.replaced_by) })}</small>}
        </div>
      </td>
      {canManage && (
        <td data-label={t("actions")}>
          {usable && (
            <div class="row-actions">
              {apiKey.status === "active" && (
                <button type="button" onClick={onRotate}>
                  {t("rotate")}
                  <span class="visually-hidden">{apiKey.name}</span>
                </button>
              )}
              <button type="button" class="danger" onClick={onRevoke}>
                {t("revoke")}
                <span class="visually-hidden">{apiKey.name}</span>
              </button>
            </div>
          )}
        </td>
      )}
    </tr>
  )
}

const CreateDialog = ({ onClose, onCreated }: {
  readonly onClose: () => void
  readonly onCreated: (key: ApiKey) => void
}) => {
  const t = useTexts(text)
  const { api, tenant } = useWorkspace()
  const action = useAction()
  const [missingScope, setMissingScope] = useState(false)
  const [missingName, setMissingName] = useState(false)
  // The token is held here only: closing the dialog unmounts it and drops the token with it.
  const [created, setCreated] = useState<{ readonly key: ApiKey; readonly token: string } | undefined>(undefined)
  if (created !== undefined) {
    return (
      <Dialog title={t("createdTitle")} onClose={onClose} keepOnEscape>
        <SecretOnce label={t("tokenLabel", { name: created.key.name })} secret={created.token} />
        <p class="hint">{t("createdNote")}</p>
        <div class="actions">
          <button type="button" class="primary" onClick={onClose}>{t("saved")}</button>
        </div>
      </Dialog>
    )
  }
  const submit = (event: Event) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    const name = String(form.get("name") ?? "").trim()
    const scopes = SCOPES.filter((scope) => form.getAll("scopes").includes(scope))
    setMissingName(name === "")
    setMissingScope(scopes.length === 0)
    if (name === "" || scopes.length === 0) return
    const environment: Environment = form.get("environment") === "live" ? "live" : "test"
    void action.run(async () => {
      const result = await api.apiKeys.create({
        params: { tenantId: tenant.id },
        payload: { name, environment, scopes }
      })
      setCreated({ key: result.api_key, token: result.token })
      onCreated(result.api_key)
    })
  }
  return (
    <Dialog title={t("createTitle")} onClose={onClose} wide busy={action.busy}>
      <form onSubmit={submit} noValidate>
        <label>
          {t("name")}
          <input
            name="name"
            required
            maxLength={100}
            autoComplete="off"
            aria-invalid={missingName}
            aria-describedby={missingName ? "key-name-hint key-name-missing" : "key-name-hint"}
            onInput={() => setMissingName(false)}
          />
          <small id="key-name-hint">{t("nameHint")}</small>
        </label>
        {missingName && <p id="key-name-missing" class="notice error" role="alert">{t("noName")}</p>}
        <fieldset>
          <legend>{t("environmentLegend")}</legend>
          {(["test", "live"] as const).map((environment) => (
            <label key={environment} class="choice">
              <input type="radio" name="environment" value={environment} defaultChecked={environment === "test"} />
              <span>
                <EnvironmentBadge environment={environment} label={t(environment)} />
                <small>{t(environment === "live" ? "liveExplained" : "testExplained")}</small>
              </span>
            </label>
          ))}
        </fieldset>
        <fieldset aria-describedby={missingScope ? "key-scope-missing" : undefined}>
          <legend>{t("scopesLegend")}</legend>
          {SCOPES.map((scope) => (
            <label key={scope} class="choice">
              <input type="checkbox" name="scopes" value={scope} onChange={() => setMissingScope(false)} />
              <span>
                <code>{scope}</code>
                <small>{t(scopeText(scope))}</small>
              </span>
            </label>
          ))}
          {missingScope && <p id="key-scope-missing" class="notice error" role="alert">{t("noScope")}</p>}
        </fieldset>
        {action.failure && <ErrorNotice failure={action.failure} />}
        <div class="actions">
          <button type="button" onClick={onClose} disabled={action.busy}>{t("cancel")}</button>
          <button type="submit" class="primary" disabled={action.busy}>
            {action.busy ? t("working") : t("submitCreate")}
          </button>
        </div>
      </form>
    </Dialog>
  )
}

const RotateDialog = ({ apiKey, onClose, onRotated, onStale }: {
  readonly apiKey: ApiKey
  readonly onClose: () => void
  readonly onRotated: () => void
  /** The key changed since the list was read (rotated or revoked elsewhere). */
  readonly onStale: () => void
}) => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { api, tenant } = useWorkspace()
  const action = useAction()
  const [invalid, setInvalid] = useState(false)
  // As on creation, the new token lives only as long as this dialog.
  const [rotated, setRotated] = useState<{ readonly token: string; readonly oldExpiresAt: Date } | undefined>(undefined)
  if (rotated !== undefined) {
    const ended = rotated.oldExpiresAt.getTime() <= Date.now()
    return (
      <Dialog title={t("rotatedTitle", { name: apiKey.name })} onClose={onClose} keepOnEscape>
        <SecretOnce label={t("tokenLabel", { name: apiKey.name })} secret={rotated.token} />
        <p class="notice info">
          {ended ? t("oldEnded") : t("oldUntil", { when: formatDateTime(rotated.oldExpiresAt, lang) })}
        </p>
        <div class="actions">
          <button type="button" class="primary" onClick={onClose}>{t("saved")}</button>
        </div>
      </Dialog>
    )
  }
  const submit = (event: Event) => {
    event.preventDefault()
    const raw = String(new FormData(event.currentTarget as HTMLFormElement).get("grace_days") ?? "").trim()
    const graceDays = Number(raw)
    if (raw === "" || !Number.isInteger(graceDays) || graceDays < 0 || graceDays > 30) {
      setInvalid(true)
      return
    }
    setInvalid(false)
    void action.run(async () => {
      const result = await api.apiKeys.rotate({
        params: { tenantId: tenant.id, keyId: apiKey.id },
        payload: { grace_days: graceDays }
      }).catch((error: unknown) => {
        const failure = failureOf(error)
        if (failure.code !== "invalid_state" && failure.code !== "not_found") throw error
        onStale()
        throw { ...failure, explanation: t("notActive") }
      })
      setRotated({ token: result.token, oldExpiresAt: result.previous.expires_at })
      onRotated()
    })
  }
  return (
    <Dialog title={t("rotateTitle", { name: apiKey.name })} onClose={onClose} busy={action.busy}>
      <form onSubmit={submit} noValidate>
        <p>{t("rotateExplained")}</p>
        <label>
          {t("graceDays")}
          <input
            name="grace_days"
            type="number"
            inputMode="numeric"
            min={0}
            max={30}
            step={1}
            required
            defaultValue={String(DEFAULT_GRACE_DAYS)}
            aria-invalid={invalid}
            aria-describedby={invalid ? "grace-hint grace-invalid" : "grace-hint"}
          />
          <small id="grace-hint">{t("graceHint")}</small>
        </label>
        {invalid && <p id="grace-invalid" class="notice error" role="alert">{t("graceInvalid")}</p>}
        {action.failure && <ErrorNotice failure={action.failure} />}
        <div class="actions">
          <button type="button" onClick={onClose} disabled={action.busy}>{t("cancel")}</button>
          <button type="submit" class="primary" disabled={action.busy}>
            {action.busy ? t("working") : t("submitRotate")}
          </button>
        </div>
      </form>
    </Dialog>
  )
}
