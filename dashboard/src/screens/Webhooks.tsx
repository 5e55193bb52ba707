/**
 * Webhooks (SPEC §9, §15): the tenant's endpoints in both environments, creating one (its signing
 * secret shown once), and an endpoint's page with its facts, enable/disable, edit, secret
 * rotation, deletion and its deliveries, each with every attempt and a replay. Developers read
 * everything here and change nothing (SPEC §5); the server refuses them anyway.
 */
import { useState } from "preact/hooks"
import { type EventType, eventTypes } from "../../../src/domain/Events.js"
import type { Api } from "../api.js"
import { formatDateTime, formatNumber, texts, type Translate as TranslateOf, useLang, useTexts } from "../i18n.js"
import { href, navigate } from "../router.js"
import {
  Async,
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
  usePages,
  useResource
} from "../ui.js"
import { useWorkspace } from "../workspace.js"
import "./Webhooks.css"

type Awaited2<T> = T extends Promise<infer A> ? A : never
type Endpoint = Awaited2<ReturnType<Api["webhooks"]["getEndpoint"]>>
type Delivery = Awaited2<ReturnType<Api["webhooks"]["listDeliveries"]>>["data"][number]
type DeliveryDetail = Awaited2<ReturnType<Api["webhooks"]["getDelivery"]>>
type Environment = Endpoint["environment"]
type EventFilter = Endpoint["events"][number]

const text = texts({
  en: {
    title: "Webhooks",
    lead:
      "Webhooks tell your backend when something happens in this tenant, such as a document being authorized, instead of it polling the API. Each endpoint receives one environment's events, signed with its own secret.",
    add: "Add endpoint",
    readOnly:
      "Your role (developer) can read webhook endpoints and deliveries. Owners and admins create, change and replay them.",
    environment: "Environment",
    all: "All",
    live: "Live",
    test: "Test",
    url: "URL",
    urlHint: "Where deliveries are POSTed. Use https; private and local network addresses are refused.",
    events: "Events",
    allEvents: "All events, including types added later",
    status: "Status",
    created: "Created",
    updated: "Updated",
    enabled: "Enabled",
    disabled: "Disabled",
    reason_manual: "disabled by a member",
    reason_gone: "the endpoint answered 410 Gone",
    reason_failing: "every delivery failed for 5 days",
    failing: "Failing",
    failedInARow: "failed deliveries in a row: {count}",
    lastSuccess: "Last successful delivery",
    lastFailure: "Last failed delivery",
    never: "Never",
    copyEndpointId: "Copy the endpoint id",
    copyEventId: "Copy the event id {id}",
    deliveryId: "Delivery id",
    copyDeliveryId: "Copy the delivery id",
    noEndpoints: "No webhook endpoints yet",
    noEndpointsHint:
      "Add an endpoint with your backend's URL to receive events such as document.authorized as they happen. Start with the test environment.",
    noEndpointsReadOnly: "Ask an owner or admin of this tenant to add one.",
    noEndpointsHere: "No endpoints in this environment.",
    endpointsTable: "Webhook endpoints",
    createTitle: "Add a webhook endpoint",
    description: "Description (optional)",
    descriptionFact: "Description",
    eventsLegend: "Events to send",
    eventsHint: "Choose the event types, or every event.",
    eventsRequired: "Choose at least one event type, or all events.",
    create: "Add endpoint",
    created_secret: "Endpoint added. This is its signing secret:",
    secretLabel: "Signing secret",
    verifyNote:
      "Your receiver verifies each delivery with this secret and any Standard Webhooks library (for example the standardwebhooks package for JavaScript or Python): it checks the webhook-id, webhook-timestamp and webhook-signature headers against the raw request body. Store the secret in your backend's secret store.",
    done: "Done",
    cancel: "Cancel",
    openEndpoint: "Open the endpoint",
    back: "All endpoints",
    id: "Endpoint id",
    rotating: "Previous secret also signs until",
    noDescription: "—",
    disable: "Disable",
    enable: "Enable",
    edit: "Edit",
    rotate: "Rotate secret",
    remove: "Delete",
    disableTitle: "Disable this endpoint?",
    disableBody:
      "New events are not sent to {url} while it is disabled, and waiting deliveries are not retried. You can enable it again at any time.",
    disableConfirm: "Disable endpoint",
    disabledNote: "Endpoint disabled.",
    enabledNote: "Endpoint enabled.",
    editTitle: "Edit the endpoint",
    save: "Save changes",
    savedNote: "Endpoint updated.",
    rotateTitle: "Rotate the signing secret?",
    rotateBody:
      "A new secret is issued and shown once. For 24 hours every delivery carries two signatures, one with the old secret and one with the new, so your receiver keeps verifying while you switch it over. After that only the new secret signs.",
    rotateConfirm: "Rotate secret",
    rotatedTitle: "New signing secret",
    rotatedNote: "Secret rotated. The previous secret keeps signing alongside it for 24 hours.",
    deleteTitle: "Delete this endpoint?",
    deleteBody: "{url} stops receiving events and its waiting deliveries are not sent. This cannot be undone.",
    deleteConfirm: "Delete endpoint",
    deletedNote: "Endpoint deleted.",
    deliveries: "Deliveries",
    refresh: "Refresh",
    deliveriesTable: "Deliveries of this endpoint, newest first",
    eventType: "Event",
    eventId: "Event id",
    attempts: "Attempts",
    nextAttempt: "Next attempt",
    lastStatus: "Last status code",
    actions: "Actions",
    showAttempts: "Show attempts",
    hideAttempts: "Hide attempts",
    replay: "Replay",
    replayQueued: "Replay queued.",
    dstatus_pending: "pending",
    dstatus_succeeded: "succeeded",
    dstatus_failed: "failed",
    noDeliveries: "No deliveries yet",
    noDeliveriesHint:
      "Events appear here when documents change state: authorized, rejected, cancelled. Issue a test document with a test API key to see one.",
    createKey: "Create an API key",
    attemptsOf: "Attempts of {event}",
    aboutDocument: "About the document",
    openDocument: "Open document",
    payload: "Payload sent",
    attemptsTable: "Attempts, first to last",
    attempt: "Attempt",
    time: "Time",
    statusCode: "Status code",
    latency: "Latency",
    latencyValue: "{ms} ms",
    error: "Error",
    response: "Response (first bytes)",
    noAttempts: "Not attempted yet.",
    none: "—",
    lastError: "Last error"
  },
  pt: {
    title: "Webhooks",
    lead:
      "Webhooks avisam o seu backend quando algo acontece nesta conta, como a autorização de um documento, sem que ele precise consultar a API. Cada endpoint recebe os eventos de um ambiente, assinados com um segredo próprio.",
    add: "Adicionar endpoint",
    readOnly:
      "Seu papel (desenvolvedor) permite consultar endpoints e entregas de webhook. Proprietários e administradores criam, alteram e reenviam.",
    environment: "Ambiente",
    all: "Todos",
    live: "Produção",
    test: "Teste",
    url: "URL",
    urlHint:
      "Para onde as entregas são enviadas por POST. Use https; endereços de rede privada ou local são recusados.",
    events: "Eventos",
    allEvents: "Todos os eventos, inclusive tipos criados no futuro",
    status: "Situação",
    created: "Criado em",
    updated: "Atualizado em",
    enabled: "Ativo",
    disabled: "Desativado",
    reason_manual: "desativado por um membro",
    reason_gone: "o endpoint respondeu 410 Gone",
    reason_failing: "todas as entregas falharam por 5 dias",
    failing: "Com falhas",
    failedInARow: "entregas com falha seguidas: {count}",
    lastSuccess: "Última entrega com sucesso",
    lastFailure: "Última entrega com falha",
    never: "Nunca",
    copyEndpointId: "Copiar o id do endpoint",
    copyEventId: "Copiar o id do evento {id}",
    deliveryId: "Id da entrega",
    copyDeliveryId: "Copiar o id da entrega",
    noEndpoints: "Nenhum endpoint de webhook ainda",
    noEndpointsHint:
      "Adicione um endpoint com a URL do seu backend para receber eventos como document.authorized assim que acontecem. Comece pelo ambiente de teste.",
    noEndpointsReadOnly: "Peça a um proprietário ou administrador desta conta que adicione um.",
    noEndpointsHere: "Nenhum endpoint neste ambiente.",
    endpointsTable: "Endpoints de webhook",
    createTitle: "Adicionar um endpoint de webhook",
    description: "Descrição (opcional)",
    descriptionFact: "Descrição",
    eventsLegend: "Eventos a enviar",
    eventsHint: "Escolha os tipos de evento, ou todos os eventos.",
    eventsRequired: "Escolha pelo menos um tipo de evento, ou todos os eventos.",
    create: "Adicionar endpoint",
    created_secret: "Endpoint adicionado. Este é o segredo de assinatura dele:",
    secretLabel: "Segredo de assinatura",
    verifyNote:
      "Seu receptor verifica cada entrega com este segredo e qualquer biblioteca Standard Webhooks (por exemplo o pacote standardwebhooks para JavaScript ou Python): ela confere os cabeçalhos webhook-id, webhook-timestamp e webhook-signature com o corpo bruto da requisição. Guarde o segredo no cofre de segredos do seu backend.",
    done: "Concluir",
    cancel: "Cancelar",
    openEndpoint: "Abrir o endpoint",
    back: "Todos os endpoints",
    id: "Id do endpoint",
    rotating: "O segredo anterior também assina até",
    noDescription: "—",
    disable: "Desativar",
    enable: "Ativar",
    edit: "Editar",
    rotate: "Trocar segredo",
    remove: "Excluir",
    disableTitle: "Desativar este endpoint?",
    disableBody:
      "Novos eventos não são enviados para {url} enquanto ele estiver desativado, e entregas pendentes não são retentadas. Você pode ativá-lo de novo quando quiser.",
    disableConfirm: "Desativar endpoint",
    disabledNote: "Endpoint desativado.",
    enabledNote: "Endpoint ativado.",
    editTitle: "Editar o endpoint",
    save: "Salvar alterações",
    savedNote: "Endpoint atualizado.",
    rotateTitle: "Trocar o segredo de assinatura?",
    rotateBody:
      "Um novo segredo é gerado e exibido uma única vez. Durante 24 horas cada entrega leva duas assinaturas, uma com o segredo antigo e outra com o novo, para que o seu receptor continue verificando enquanto você faz a troca. Depois disso só o novo segredo assina.",
    rotateConfirm: "Trocar segredo",
    rotatedTitle: "Novo segredo de assinatura",
    rotatedNote: "Segredo trocado. O anterior continua assinando junto com ele por 24 horas.",
    deleteTitle: "Excluir este endpoint?",
    deleteBody: "{url} deixa de receber eventos e as entregas pendentes não são enviadas. Não é possível desfazer.",
    deleteConfirm: "Excluir endpoint",
    deletedNote: "Endpoint excluído.",
    deliveries: "Entregas",
    refresh: "Atualizar",
    deliveriesTable: "Entregas deste endpoint, das mais recentes às mais antigas",
    eventType: "Evento",
    eventId: "Id do evento",
    attempts: "Tentativas",
    nextAttempt: "Próxima tentativa",
    lastStatus: "Último código de status",
    actions: "Ações",
    showAttempts: "Ver tentativas",
    hideAttempts: "Ocultar tentativas",
    replay: "Reenviar",
    replayQueued: "Reenvio na fila.",
    dstatus_pending: "pendente",
    dstatus_succeeded: "entregue",
    dstatus_failed: "falhou",
    noDeliveries: "Nenhuma entrega ainda",
    noDeliveriesHint:
      "Os eventos aparecem aqui quando documentos mudam de situação: autorizado, rejeitado, cancelado. Emita um documento de teste com uma chave de API de teste para ver um.",
    createKey: "Criar uma chave de API",
    attemptsOf: "Tentativas de {event}",
    aboutDocument: "Sobre o documento",
    openDocument: "Abrir documento",
    payload: "Conteúdo enviado",
    attemptsTable: "Tentativas, da primeira à última",
    attempt: "Tentativa",
    time: "Horário",
    statusCode: "Código de status",
    latency: "Latência",
    latencyValue: "{ms} ms",
    error: "Erro",
    response: "Resposta (primeiros bytes)",
    noAttempts: "Ainda não houve tentativa.",
    none: "—",
    lastError: "Último erro"
  }
})

/** What each event type means, in the person's language (the type's name stays as the API spells it). */
const eventText = texts<EventType>({
  en: {
    "document.authorized": "the authority authorized a document",
    "document.contingency": "an NFC-e was issued offline (contingency), to be transmitted",
    "document.rejected": "the authority rejected a document",
    "document.failed": "the authority did not answer in time",
    "document.cancelled": "a cancellation was accepted",
    "document.cancellation_failed": "a cancellation was refused or not answered",
    "document.cancellation_in_analysis": "a late cancellation went to the municipality's analysis",
    "document.substituted": "a document was replaced by a corrected one",
    "document.corrected": "a correction letter (CC-e) of an NF-e was registered",
    "numbers.voided": "unused numbers of an NF-e or NFC-e series were voided",
    "api_key.exposed": "an API key's token was exposed",
    "credential.expiring": "the certificate expires in 30, 7 or 1 days",
    "quota.threshold": "live documents reached 80 % or 100 % of the quota",
    "tenant.tax_id_verified_elsewhere": "another tenant proved this tax id: no more live documents",
    "tenant.verification_revoked": "an operator undid the proof of the tax id"
  },
  pt: {
    "document.authorized": "a autoridade autorizou um documento",
    "document.contingency": "uma NFC-e foi emitida em contingência off-line, a transmitir",
    "document.rejected": "a autoridade rejeitou um documento",
    "document.failed": "a autoridade não respondeu a tempo",
    "document.cancelled": "um cancelamento foi aceito",
    "document.cancellation_failed": "um cancelamento foi recusado ou ficou sem resposta",
    "document.cancellation_in_analysis": "um cancelamento fora do prazo foi para a análise do município",
    "document.substituted": "um documento foi substituído por outro corrigido",
    "document.corrected": "uma carta de correção (CC-e) de uma NF-e foi registrada",
    "numbers.voided": "números não usados de uma série de NF-e ou NFC-e foram inutilizados",
    "api_key.exposed": "o token de uma chave de API foi exposto",
    "credential.expiring": "o certificado vence em 30, 7 ou 1 dia",
    "quota.threshold": "os documentos de produção atingiram 80 % ou 100 % da cota",
    "tenant.tax_id_verified_elsewhere": "outra empresa comprovou este CNPJ/CPF: sem documentos de produção",
    "tenant.verification_revoked": "um operador desfez a comprovação do CNPJ/CPF"
  }
})

type Translate = TranslateOf<keyof typeof text.en>

export const WebhooksScreen = ({ route }: { readonly route?: ReadonlyArray<string> }) => {
  const endpointId = route?.[0]
  return endpointId === undefined ? <EndpointList /> : <EndpointDetail endpointId={endpointId} key={endpointId} />
}

const EventsList = ({ events, t }: { readonly events: ReadonlyArray<EventFilter>; readonly t: Translate }) =>
  events.includes("*")
    ? <span>{t("allEvents")}</span>
    : <span class="webhook-events">{events.map((event) => <code key={event}>{event}</code>)}</span>

/** Enabled, or failing while enabled (its health, docs/webhooks.md), or disabled and why. */
const EndpointStatus = ({ endpoint, t }: { readonly endpoint: Endpoint; readonly t: Translate }) => {
  const { lang } = useLang()
  if (endpoint.enabled && endpoint.health.status === "failing") {
    return (
      <span>
        <Badge tone="bad">{t("failing")}</Badge>
        <small>{t("failedInARow", { count: formatNumber(endpoint.health.consecutive_failures, lang) })}</small>
      </span>
    )
  }
  return endpoint.enabled
    ? <Badge tone="ok">{t("enabled")}</Badge>
    : (
      <span>
        <Badge tone={endpoint.disabled_reason === "manual" ? "muted" : "bad"}>{t("disabled")}</Badge>
        {endpoint.disabled_reason !== null && <small>{t(`reason_${endpoint.disabled_reason}`)}</small>}
      </span>
    )
}

const EndpointList = () => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { api, tenant, canManage } = useWorkspace()
  const [environment, setEnvironment] = useState<Environment | "all">("all")
  const [creating, setCreating] = useState(false)
  const pages = usePages(
    (startingAfter) =>
      api.webhooks.listEndpoints({
        params: { tenantId: tenant.id },
        query: {
          limit: 20,
          ...(environment === "all" ? {} : { environment }),
          ...(startingAfter === undefined ? {} : { starting_after: startingAfter })
        }
      }),
    [tenant.id, environment]
  )
  return (
    <section aria-labelledby="webhooks-title">
      <div class="toolbar">
        <h1 id="webhooks-title">{t("title")}</h1>
        {canManage && <button type="button" class="primary" onClick={() => setCreating(true)}>{t("add")}</button>}
      </div>
      <p class="hint">{t("lead")}</p>
      {!canManage && <p class="notice info">{t("readOnly")}</p>}
      <div class="filters webhook-filters">
        <label>
          {t("environment")}
          <select
            value={environment}
            onChange={(event) => setEnvironment(event.currentTarget.value as Environment | "all")}
          >
            <option value="all">{t("all")}</option>
            <option value="live">{t("live")}</option>
            <option value="test">{t("test")}</option>
          </select>
        </label>
      </div>
      <PagedTable
        pages={pages}
        empty={environment === "all"
          ? (
            <Empty title={t("noEndpoints")}>
              <p>{t("noEndpointsHint")}</p>
              {canManage
                ? <button type="button" class="primary" onClick={() => setCreating(true)}>{t("add")}</button>
                : <p>{t("noEndpointsReadOnly")}</p>}
            </Empty>
          )
          : <Empty title={t("noEndpointsHere")} />}
        class="webhook-table"
        caption={t("endpointsTable")}
        columns={[t("url"), t("environment"), t("events"), t("status"), t("created")]}
        row={(endpoint) => (
          <tr key={endpoint.id}>
            <td data-label={t("url")} class="webhook-url">
              <a href={href("webhooks", endpoint.id)} class="mono">{endpoint.url}</a>
              {endpoint.description && <small>{endpoint.description}</small>}
            </td>
            <td data-label={t("environment")}>
              <EnvironmentBadge environment={endpoint.environment} label={t(endpoint.environment)} />
            </td>
            <td data-label={t("events")}>
              <EventsList events={endpoint.events} t={t} />
            </td>
            <td data-label={t("status")}>
              <EndpointStatus endpoint={endpoint} t={t} />
            </td>
            <td data-label={t("created")}>{formatDateTime(endpoint.created_at, lang)}</td>
          </tr>
        )}
      />
      {creating && (
        <CreateEndpoint
          onClose={(created) => {
            setCreating(false)
            if (created) pages.reload()
          }}
        />
      )}
    </section>
  )
}

/** The URL, events and description, as the create and edit dialogs both ask for them. */
const EndpointFields = ({ url, setUrl, events, setEvents, description, setDescription, t }: {
  readonly url: string
  readonly setUrl: (value: string) => void
  readonly events: ReadonlyArray<EventFilter>
  readonly setEvents: (value: ReadonlyArray<EventFilter>) => void
  readonly description: string
  readonly setDescription: (value: string) => void
  readonly t: Translate
}) => {
  const e = useTexts(eventText)
  const everything = events.includes("*")
  const toggle = (type: EventType, on: boolean) =>
    setEvents(on ? [...events.filter((event) => event !== type), type] : events.filter((event) => event !== type))
  return (
    <>
      <label>
        {t("url")}
        <input
          type="url"
          class="mono"
          required
          maxLength={2048}
          value={url}
          placeholder="https://example.com/webhooks/nfse"
          aria-describedby="webhook-url-hint"
          onInput={(event) => setUrl(event.currentTarget.value)}
        />
        <small id="webhook-url-hint">{t("urlHint")}</small>
      </label>
      <fieldset aria-describedby="webhook-events-hint">
        <legend>{t("eventsLegend")}</legend>
        <p class="hint" id="webhook-events-hint">{t("eventsHint")}</p>
        <label>
          <input
            type="checkbox"
            checked={everything}
            onChange={(event) => setEvents(event.currentTarget.checked ? ["*"] : [])}
          />
          {t("allEvents")}
        </label>
        <div class="webhook-event-choices">
          {eventTypes.map((type) => (
            <label key={type}>
              <input
                type="checkbox"
                disabled={everything}
                checked={everything || events.includes(type)}
                onChange={(event) => toggle(type, event.currentTarget.checked)}
              />
              <code>{type}</code> <span class="hint">{e(type)}</span>
            </label>
          ))}
        </div>
      </fieldset>
      <label>
        {t("description")}
        <textarea
          rows={2}
          maxLength={500}
          value={description}
          onInput={(event) => setDescription(event.currentTarget.value)}
        />
      </label>
    </>
  )
}

/**
 * The URL, events and description of an endpoint being created or edited: their state, their
 * fields, and the check that at least one event type is chosen (shown beside the fields).
 */
const useEndpointForm = (
  initial: { readonly url: string; readonly events: ReadonlyArray<EventFilter>; readonly description: string },
  t: Translate
) => {
  const [url, setUrl] = useState(initial.url)
  const [events, setEvents] = useState(initial.events)
  const [description, setDescription] = useState(initial.description)
  const [noEvents, setNoEvents] = useState(false)
  /** The trimmed values, or undefined (and the alert shown) when no event type is chosen. */
  const values = () => {
    setNoEvents(events.length === 0)
    return events.length === 0 ? undefined : { url: url.trim(), events, description: description.trim() }
  }
  const fields = (
    <>
      <EndpointFields
        url={url}
        setUrl={setUrl}
        events={events}
        setEvents={(next) => {
          setNoEvents(false)
          setEvents(next)
        }}
        description={description}
        setDescription={setDescription}
        t={t}
      />
      {noEvents && <p class="notice error" role="alert">{t("eventsRequired")}</p>}
    </>
  )
  return { values, fields }
}

/** The secret with how to use it: after creating an endpoint and after rotating its secret. */
const SecretShown = ({ secret, t }: { readonly secret: string; readonly t: Translate }) => (
  <>
    <SecretOnce label={t("secretLabel")} secret={secret} />
    <p class="notice info">{t("verifyNote")}</p>
  </>
)

const CreateEndpoint = ({ onClose }: { readonly onClose: (created: boolean) => void }) => {
  const t = useTexts(text)
  const { api, tenant, notify } = useWorkspace()
  const action = useAction()
  const [environment, setEnvironment] = useState<Environment>("test")
  const form = useEndpointForm({ url: "", events: [], description: "" }, t)
  const [created, setCreated] = useState<{ readonly id: string; readonly secret: string } | undefined>(undefined)
  if (created !== undefined) {
    return (
      <Dialog title={t("createTitle")} onClose={() => onClose(true)} wide keepOnEscape>
        <p class="notice ok">{t("created_secret")}</p>
        <SecretShown secret={created.secret} t={t} />
        <div class="actions">
          <button type="button" class="primary" onClick={() => onClose(true)}>{t("done")}</button>
          <a href={href("webhooks", created.id)} class="button">{t("openEndpoint")}</a>
        </div>
      </Dialog>
    )
  }
  const submit = async (event: Event) => {
    event.preventDefault()
    const values = form.values()
    if (values === undefined) return
    const endpoint = await action.run(() =>
      api.webhooks.createEndpoint({
        params: { tenantId: tenant.id },
        payload: {
          url: values.url,
          environment,
          events: values.events,
          ...(values.description === "" ? {} : { description: values.description })
        }
      })
    )
    if (endpoint !== undefined) {
      setCreated({ id: endpoint.id, secret: endpoint.secret })
      notify(t("created_secret"))
    }
  }
  return (
    <Dialog title={t("createTitle")} onClose={() => onClose(false)} wide busy={action.busy}>
      <form onSubmit={submit}>
        <fieldset>
          <legend>{t("environment")}</legend>
          {(["test", "live"] as const).map((choice) => (
            <label key={choice}>
              <input
                type="radio"
                name="webhook-environment"
                value={choice}
                required
                checked={environment === choice}
                onChange={() => setEnvironment(choice)}
              />
              {t(choice)}
            </label>
          ))}
        </fieldset>
        {form.fields}
        {action.failure && <ErrorNotice failure={action.failure} />}
        <div class="actions">
          <button type="button" onClick={() => onClose(false)} disabled={action.busy}>{t("cancel")}</button>
          <button type="submit" class="primary" disabled={action.busy}>{t("create")}</button>
        </div>
      </form>
    </Dialog>
  )
}

const EndpointDetail = ({ endpointId }: { readonly endpointId: string }) => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { api, tenant, canManage, notify } = useWorkspace()
  const { resource, reload } = useResource(
    () => api.webhooks.getEndpoint({ params: { tenantId: tenant.id, endpointId } }),
    [tenant.id, endpointId]
  )
  const [asking, setAsking] = useState<"disable" | "rotate" | "delete" | "edit" | undefined>(undefined)
  const [newSecret, setNewSecret] = useState<string | undefined>(undefined)
  const enabling = useAction()
  const params = { tenantId: tenant.id, endpointId }
  return (
    <section aria-labelledby="webhook-title">
      <p>
        <a href={href("webhooks")}>← {t("back")}</a>
      </p>
      <Async resource={resource} onRetry={reload}>
        {(endpoint) => (
          <>
            <h1 id="webhook-title" class="mono webhook-url">{endpoint.url}</h1>
            {!canManage && <p class="notice info">{t("readOnly")}</p>}
            <dl class="facts">
              <div>
                <dt>{t("id")}</dt>
                <dd>
                  <span class="mono">{endpoint.id}</span> <CopyButton text={endpoint.id} name={t("copyEndpointId")} />
                </dd>
              </div>
              <div>
                <dt>{t("environment")}</dt>
                <dd>
                  <EnvironmentBadge environment={endpoint.environment} label={t(endpoint.environment)} />
                </dd>
              </div>
              <div>
                <dt>{t("status")}</dt>
                <dd>
                  <EndpointStatus endpoint={endpoint} t={t} />
                </dd>
              </div>
              <div>
                <dt>{t("lastSuccess")}</dt>
                <dd>
                  {endpoint.health.last_success_at === null
                    ? t("never")
                    : formatDateTime(endpoint.health.last_success_at, lang)}
                </dd>
              </div>
              <div>
                <dt>{t("lastFailure")}</dt>
                <dd>
                  {endpoint.health.last_failure_at === null
                    ? t("never")
                    : formatDateTime(endpoint.health.last_failure_at, lang)}
                </dd>
              </div>
              <div>
                <dt>{t("events")}</dt>
                <dd>
                  <EventsList events={endpoint.events} t={t} />
                </dd>
              </div>
              <div>
                <dt>{t("descriptionFact")}</dt>
                <dd>{endpoint.description ?? t("noDescription")}</dd>
              </div>
              <div>
                <dt>{t("created")}</dt>
                <dd>{formatDateTime(endpoint.created_at, lang)}</dd>
              </div>
              <div>
                <dt>{t("updated")}</dt>
                <dd>{formatDateTime(endpoint.updated_at, lang)}</dd>
              </div>
              {endpoint.previous_secret_expires_at !== null && (
                <div>
                  <dt>{t("rotating")}</dt>
                  <dd>{formatDateTime(endpoint.previous_secret_expires_at, lang)}</dd>
                </div>
              )}
            </dl>
            {canManage && (
              <div class="actions">
                {endpoint.enabled
                  ? <button type="button" onClick={() => setAsking("disable")}>{t("disable")}</button>
                  : (
                    <button
                      type="button"
                      disabled={enabling.busy}
                      onClick={() =>
                        enabling.run(() => api.webhooks.updateEndpoint({ params, payload: { enabled: true } })).then(
                          (done) => {
                            if (done === undefined) return
                            notify(t("enabledNote"))
                            reload()
                          }
                        )}
                    >
                      {t("enable")}
                    </button>
                  )}
                <button type="button" onClick={() => setAsking("edit")}>{t("edit")}</button>
                <button type="button" onClick={() => setAsking("rotate")}>{t("rotate")}</button>
                <button type="button" class="danger" onClick={() => setAsking("delete")}>{t("remove")}</button>
              </div>
            )}
            {enabling.failure && <ErrorNotice failure={enabling.failure} />}
            {asking === "disable" && (
              <Confirm
                title={t("disableTitle")}
                body={<p>{t("disableBody", { url: endpoint.url })}</p>}
                confirmLabel={t("disableConfirm")}
                onConfirm={async () => {
                  await api.webhooks.updateEndpoint({ params, payload: { enabled: false } })
                  notify(t("disabledNote"))
                  reload()
                }}
                onClose={() => setAsking(undefined)}
              />
            )}
            {asking === "rotate" && (
              <Confirm
                title={t("rotateTitle")}
                body={<p>{t("rotateBody")}</p>}
                confirmLabel={t("rotateConfirm")}
                onConfirm={async () => {
                  const rotated = await api.webhooks.rotateSecret({ params })
                  setNewSecret(rotated.secret)
                  notify(t("rotatedNote"))
                  reload()
                }}
                onClose={() => setAsking(undefined)}
              />
            )}
            {asking === "delete" && (
              <Confirm
                title={t("deleteTitle")}
                body={<p>{t("deleteBody", { url: endpoint.url })}</p>}
                confirmLabel={t("deleteConfirm")}
                onConfirm={async () => {
                  await api.webhooks.deleteEndpoint({ params })
                  notify(t("deletedNote"))
                  navigate("webhooks")
                }}
                onClose={() => setAsking(undefined)}
              />
            )}
            {asking === "edit" && (
              <EditEndpoint
                endpoint={endpoint}
                onClose={(saved) => {
                  setAsking(undefined)
                  if (saved) reload()
                }}
              />
            )}
          </>
        )}
      </Async>
      {/* Outside the endpoint's Async: a failed read after the rotation must not take the new secret away. */}
      {newSecret !== undefined && asking === undefined && (
        <Dialog
          title={t("rotatedTitle")}
          onClose={() => setNewSecret(undefined)}
          wide
          keepOnEscape
        >
          <p class="notice ok">{t("rotatedNote")}</p>
          <SecretShown secret={newSecret} t={t} />
          <div class="actions">
            <button type="button" class="primary" onClick={() => setNewSecret(undefined)}>{t("done")}</button>
          </div>
        </Dialog>
      )}
      <Deliveries endpointId={endpointId} />
    </section>
  )
}

const EditEndpoint = (
  { endpoint, onClose }: { readonly endpoint: Endpoint; readonly onClose: (saved: boolean) => void }
) => {
  const t = useTexts(text)
  const { api, tenant, notify } = useWorkspace()
  const action = useAction()
  const form = useEndpointForm(
    { url: endpoint.url, events: endpoint.events, description: endpoint.description ?? "" },
    t
  )
  const submit = async (event: Event) => {
    event.preventDefault()
    const values = form.values()
    if (values === undefined) return
    const saved = await action.run(() =>
      api.webhooks.updateEndpoint({
        params: { tenantId: tenant.id, endpointId: endpoint.id },
        payload: {
          url: values.url,
          events: values.events,
          description: values.description === "" ? null : values.description
        }
      })
    )
    if (saved !== undefined) {
      notify(t("savedNote"))
      onClose(true)
    }
  }
  return (
    <Dialog title={t("editTitle")} onClose={() => onClose(false)} wide>
      <form onSubmit={submit}>
        {form.fields}
        {action.failure && <ErrorNotice failure={action.failure} />}
        <div class="actions">
          <button type="button" onClick={() => onClose(false)}>{t("cancel")}</button>
          <button type="submit" class="primary" disabled={action.busy}>{t("save")}</button>
        </div>
      </form>
    </Dialog>
  )
}

const deliveryTone = { pending: "warn", succeeded: "ok", failed: "bad" } as const

const Deliveries = ({ endpointId }: { readonly endpointId: string }) => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { api, tenant, canManage } = useWorkspace()
  const [open, setOpen] = useState<string | undefined>(undefined)
  // Bumped by Refresh and by a replay, so the open delivery's attempts are read again too.
  const [version, setVersion] = useState(0)
  const pages = usePages(
    (startingAfter) =>
      api.webhooks.listDeliveries({
        params: { tenantId: tenant.id, endpointId },
        query: { limit: 20, ...(startingAfter === undefined ? {} : { starting_after: startingAfter }) }
      }),
    [tenant.id, endpointId, version]
  )
  return (
    <>
      <div class="toolbar">
        <h2>{t("deliveries")}</h2>
        <button type="button" onClick={() => setVersion((v) => v + 1)}>{t("refresh")}</button>
      </div>
      <PagedTable
        pages={pages}
        empty={
          <Empty title={t("noDeliveries")}>
            <p>{t("noDeliveriesHint")}</p>
            <a class="button" href={href("keys")}>{t("createKey")}</a>
          </Empty>
        }
        class="webhook-table"
        caption={t("deliveriesTable")}
        columns={[
          t("eventType"),
          t("eventId"),
          t("status"),
          { label: t("attempts"), numeric: true },
          t("nextAttempt"),
          t("lastStatus"),
          t("actions")
        ]}
        row={(delivery) => {
          const expanded = open === delivery.id
          const rows = [
            <tr key={delivery.id}>
              <td data-label={t("eventType")}>
                <code>{delivery.event_type}</code>
              </td>
              <td data-label={t("eventId")}>
                <span class="mono">{delivery.event_id}</span>{" "}
                <CopyButton text={delivery.event_id} name={t("copyEventId", { id: delivery.event_id })} />
              </td>
              <td data-label={t("status")}>
                <Badge tone={deliveryTone[delivery.status]}>{t(`dstatus_${delivery.status}`)}</Badge>
              </td>
              <td data-label={t("attempts")} class="num">{formatNumber(delivery.attempt_count, lang)}</td>
              <td data-label={t("nextAttempt")}>{formatDateTime(delivery.next_attempt_at, lang)}</td>
              <td data-label={t("lastStatus")}>{delivery.last_status_code ?? t("none")}</td>
              <td data-label={t("actions")}>
                <div class="webhook-row-actions">
                  <button
                    type="button"
                    aria-expanded={expanded}
                    aria-controls={`attempts-${delivery.id}`}
                    onClick={() => setOpen(expanded ? undefined : delivery.id)}
                  >
                    {t(expanded ? "hideAttempts" : "showAttempts")}
                  </button>
                  {canManage && (
                    <ReplayButton
                      delivery={delivery}
                      onReplayed={() => {
                        setOpen(delivery.id)
                        setVersion((v) => v + 1)
                      }}
                    />
                  )}
                </div>
              </td>
            </tr>
          ]
          if (expanded) {
            rows.push(
              <tr
                key={`${delivery.id}-attempts`}
                class="webhook-attempts-row"
                id={`attempts-${delivery.id}`}
              >
                <td colSpan={7}>
                  <DeliveryAttempts delivery={delivery} version={version} />
                </td>
              </tr>
            )
          }
          return rows
        }}
      />
    </>
  )
}

const ReplayButton = ({ delivery, onReplayed }: { readonly delivery: Delivery; readonly onReplayed: () => void }) => {
  const t = useTexts(text)
  const { api, tenant, notify } = useWorkspace()
  const action = useAction()
  return (
    <>
      <button
        type="button"
        disabled={action.busy}
        aria-label={`${t("replay")} ${delivery.event_type} ${delivery.event_id}`}
        onClick={() =>
          action.run(() => api.webhooks.replayDelivery({ params: { tenantId: tenant.id, deliveryId: delivery.id } }))
            .then((done) => {
              if (done === undefined) return
              notify(t("replayQueued"))
              onReplayed()
            })}
      >
        {t("replay")}
      </button>
      {action.failure && <ErrorNotice failure={action.failure} />}
    </>
  )
}

const DeliveryAttempts = ({ delivery, version }: { readonly delivery: Delivery; readonly version: number }) => {
  const t = useTexts(text)
  const { api, tenant } = useWorkspace()
  const { resource, reload } = useResource(
    () => api.webhooks.getDelivery({ params: { tenantId: tenant.id, deliveryId: delivery.id } }),
    [tenant.id, delivery.id, version]
  )
  return (
    <div class="webhook-attempts">
      <h3>{t("attemptsOf", { event: delivery.event_type })}</h3>
      <Async resource={resource} onRetry={reload}>
        {(detail) => (
          <>
            <p>
              {t("deliveryId")}: <span class="mono">{detail.id}</span>{" "}
              <CopyButton text={detail.id} name={t("copyDeliveryId")} />
            </p>
            {detail.document_id !== null && (
              <p>
                {t("aboutDocument")}: <a href={href("documents", detail.document_id)}>{t("openDocument")}</a>{" "}
                <span class="mono">{detail.document_id}</span>
              </p>
            )}
            {detail.attempts.length === 0 ? <p>{t("noAttempts")}</p> : <AttemptsTable detail={detail} />}
            {detail.payload !== null && (
              <>
                <h4>{t("payload")}</h4>
                {/* Scrolls when long; focusable so a keyboard can scroll it too. */}
                <pre class="webhook-payload" tabIndex={0}>
                  {JSON.stringify(detail.payload, null, 2)}
                </pre>
              </>
            )}
          </>
        )}
      </Async>
    </div>
  )
}

const AttemptsTable = ({ detail }: { readonly detail: DeliveryDetail }) => {
  const t = useTexts(text)
  const { lang } = useLang()
  return (
    <>
      <table class="cards webhook-table">
        <caption class="visually-hidden">{t("attemptsTable")}</caption>
        <thead>
          <tr>
            <th scope="col">{t("attempt")}</th>
            <th scope="col">{t("time")}</th>
            <th scope="col">{t("statusCode")}</th>
            <th scope="col" class="num">{t("latency")}</th>
            <th scope="col">{t("error")}</th>
            <th scope="col">{t("response")}</th>
          </tr>
        </thead>
        <tbody>
          {detail.attempts.map((attempt) => (
            <tr key={attempt.attempt}>
              <th scope="row" data-label={t("attempt")}>{attempt.attempt}</th>
              <td data-label={t("time")}>{formatDateTime(attempt.started_at, lang)}</td>
              <td data-label={t("statusCode")}>
                {attempt.status_code === null
                  ? t("none")
                  : (
                    <Badge tone={attempt.status_code >= 200 && attempt.status_code < 300 ? "ok" : "bad"}>
                      {attempt.status_code}
                    </Badge>
                  )}
              </td>
              <td data-label={t("latency")} class="num">
                {t("latencyValue", { ms: formatNumber(attempt.latency_ms, lang) })}
              </td>
              <td data-label={t("error")}>{attempt.error ?? t("none")}</td>
              <td data-label={t("response")} class="webhook-response">
                {attempt.response_body === null || attempt.response_body === ""
                  ? t("none")
                  : <pre>{attempt.response_body}</pre>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {detail.last_error !== null && <p class="hint">{t("lastError")}: {detail.last_error}</p>}
    </>
  )
}
