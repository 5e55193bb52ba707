/**
 * Documents (SPEC §6, §15): the tenant's service invoices of both environments, filtered and paged;
 * one document with every fact the API keeps about it, its XML and PDF once authorized, and its
 * cancellation for owners and admins. Documents are issued by the tenant's backend with an API
 * key, never from here: the empty state says so and shows how.
 */
import type { ComponentChildren } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { type Api, saveFile } from "../api.js"
import {
  formatDate,
  formatDateTime,
  formatMoney,
  formatTaxId,
  type Lang,
  texts,
  type Translate,
  useLang,
  useTexts
} from "../i18n.js"
import { href } from "../router.js"
import { Async, Badge, Dialog, Empty, ErrorNotice, MoreButton, useAction, usePages, useResource } from "../ui.js"
import { useWorkspace } from "../workspace.js"
import "./Documents.css"

type Document = Awaited<ReturnType<Api["documents"]["get"]>>
type Status = Document["status"]
type ReasonCode = "issue_error" | "service_not_provided" | "other"

const STATUSES: ReadonlyArray<Status> = [
  "queued",
  "submitting",
  "authorized",
  "rejected",
  "failed",
  "cancel_requested",
  "cancelled"
]
/** Statuses the background work still moves on from; the detail polls while it shows one. */
const IN_PROGRESS: ReadonlySet<Status> = new Set([
  "queued",
  "submitting",
  "cancel_requested",
  "cancellation_in_analysis"
])
/** The note exists at the authority: its files can be downloaded. */
const WITH_FILES: ReadonlySet<Status> = new Set([
  "authorized",
  "cancel_requested",
  "cancelled",
  "cancellation_in_analysis",
  "substituted"
])
const REASON_CODES: ReadonlyArray<ReasonCode> = ["issue_error", "service_not_provided", "other"]
const REASON_MIN = 15
const REASON_MAX = 255
const PAGE_SIZE = 25
const POLL_MS = 3000

const text = texts({
  en: {
    title: "Documents",
    filters: "Filters",
    status: "Status",
    anyStatus: "All statuses",
    environment: "Environment",
    anyEnvironment: "Live and test",
    live: "Live",
    test: "Test",
    createdFrom: "Created from",
    createdTo: "Created until (inclusive)",
    reference: "Reference",
    apply: "Apply filters",
    clear: "Clear filters",
    badRange: "The end date must not be before the start date.",
    number: "Number / series",
    numberSeries: "No. {number} · series {series}",
    taker: "Taker",
    total: "Total",
    created: "Created",
    list: "Documents, newest first",
    none: "No documents yet.",
    noneHint:
      "Documents are issued by your company's backend with an API key, not from this dashboard. Create a test key, then send a document to the API; it appears here within seconds.",
    noneExample: "For example, with a test key (replace etd_test_… with your key's token):",
    createKey: "Create an API key",
    noMatch: "No documents match these filters.",
    status_queued: "queued",
    status_submitting: "submitting",
    status_authorized: "authorized",
    status_rejected: "rejected",
    status_failed: "failed",
    status_cancel_requested: "cancellation requested",
    status_cancelled: "cancelled",
    status_cancellation_in_analysis: "cancellation in analysis",
    status_substituted: "substituted",
    substitution: "Substitution",
    substitutes: "Replaces",
    substitutedBy: "Replaced by",
    substitutionReason: "Reason",
    substitutionHint: "A note is replaced by a corrected one issued with an API key " +
      "(POST /v1/documents/{id}/substitute); the dashboard shows both links.",
    back: "All documents",
    detailTitle: "Document no. {number}, series {series}",
    refresh: "Refresh",
    refreshing: "Refreshing…",
    polling: "Still being processed: this page checks again every few seconds.",
    statusNow: "The document is now {status}.",
    summary: "Summary",
    issueDate: "Issue date",
    noReference: "none",
    takerName: "Name",
    taxId: "Tax id (CNPJ/CPF)",
    email: "Email",
    address: "Address",
    service: "Service",
    serviceCode: "National service code",
    nbsCode: "NBS code",
    description: "Description",
    municipality: "Municipality (IBGE code)",
    notes: "Notes",
    amounts: "Amounts",
    services: "Services",
    deductions: "Deductions",
    base: "Tax base",
    issRate: "ISS rate",
    issAmount: "ISS amount",
    issWithheld: "ISS withheld",
    federalWithheld: "Federal taxes withheld",
    totalWithheld: "Total withheld",
    net: "Net value",
    discounts: "Discounts",
    taxation: "ISS taxation",
    amountsSource: "Figures",
    amountsFromNote: "as stated on the authorized note",
    amountsComputed: "computed by the service (before authorization)",
    taxation_taxable: "Taxable",
    taxation_immune: "Immune",
    taxation_export: "Export",
    taxation_non_incidence: "Non-incidence",
    withheldBy_none: "not withheld",
    withheldBy_taker: "withheld by the taker",
    withheldBy_intermediary: "withheld by the intermediary",
    noTaker: "Unidentified consumer",
    intermediary: "Intermediary",
    authority: "Tax authority",
    accessKey: "Access key",
    nfseNumber: "NFS-e number",
    protocol: "Protocol",
    authorizedAt: "Authorized at",
    notAuthorized: "The authority has not authorized this document.",
    rejection: "Rejection",
    rejectionHint:
      "The tax authority refused this document. Fix what it says and issue a new document from your backend.",
    code: "Code",
    message: "Message",
    cancellation: "Cancellation",
    reasonCode: "Reason",
    reason: "Explanation",
    cancelState: "State",
    cancelPending: "waiting for the authority",
    cancelDone: "cancelled",
    cancelRefused: "refused by the authority",
    requestedAt: "Requested at",
    cancelledAt: "Cancelled at",
    cancelError: "Authority's refusal",
    processing: "Processing",
    attempts: "Attempts",
    lastError: "Last error",
    noError: "none",
    updated: "Updated",
    files: "Files",
    downloadXml: "Download XML",
    downloadPdf: "Download PDF (DANFSe)",
    noFiles: "The XML and the PDF become available once the authority authorizes the document.",
    downloaded: "{name} downloaded.",
    cancel: "Cancel document",
    cancelNote:
      "Cancelling sends a request to the tax authority, which may refuse it (for example past its deadline). The document stays authorized until the authority confirms.",
    developerNote: "Only owners and admins cancel documents; your role in this tenant is developer.",
    cancelTitle: "Cancel document no. {number}",
    reason_issue_error: "Error in the issue",
    reason_service_not_provided: "Service not provided",
    reason_other: "Other",
    reasonHint: "Between {min} and {max} characters; it goes to the authority with the request.",
    counter: "{count} of {max} characters",
    tooShort: "Write at least {min} characters.",
    keep: "Keep the document",
    confirmCancel: "Request cancellation",
    sending: "Sending…",
    cancelRequested: "Cancellation requested. The authority's answer appears here; refresh to check."
  },
  pt: {
    title: "Documentos",
    filters: "Filtros",
    status: "Situação",
    anyStatus: "Todas as situações",
    environment: "Ambiente",
    anyEnvironment: "Produção e teste",
    live: "Produção",
    test: "Teste",
    createdFrom: "Criados a partir de",
    createdTo: "Criados até (inclusive)",
    reference: "Referência",
    apply: "Aplicar filtros",
    clear: "Limpar filtros",
    badRange: "A data final não pode ser anterior à data inicial.",
    number: "Número / série",
    numberSeries: "Nº {number} · série {series}",
    taker: "Tomador",
    total: "Total",
    created: "Criado em",
    list: "Documentos, dos mais recentes aos mais antigos",
    none: "Nenhum documento ainda.",
    noneHint:
      "Os documentos são emitidos pelo backend da sua empresa com uma chave de API, não por este painel. Crie uma chave de teste e envie um documento para a API; ele aparece aqui em segundos.",
    noneExample: "Por exemplo, com uma chave de teste (troque etd_test_… pelo token da sua chave):",
    createKey: "Criar uma chave de API",
    noMatch: "Nenhum documento corresponde a estes filtros.",
    status_queued: "na fila",
    status_submitting: "em envio",
    status_authorized: "autorizado",
    status_rejected: "rejeitado",
    status_failed: "com falha",
    status_cancel_requested: "cancelamento solicitado",
    status_cancelled: "cancelado",
    status_cancellation_in_analysis: "cancelamento em análise",
    status_substituted: "substituído",
    substitution: "Substituição",
    substitutes: "Substitui",
    substitutedBy: "Substituído por",
    substitutionReason: "Motivo",
    substitutionHint: "Uma nota é substituída por outra corrigida, emitida com uma chave de API " +
      "(POST /v1/documents/{id}/substitute); o painel mostra os dois vínculos.",
    back: "Todos os documentos",
    detailTitle: "Documento nº {number}, série {series}",
    refresh: "Atualizar",
    refreshing: "Atualizando…",
    polling: "Ainda em processamento: esta página verifica de novo a cada poucos segundos.",
    statusNow: "O documento agora está: {status}.",
    summary: "Resumo",
    issueDate: "Data de competência",
    noReference: "nenhuma",
    takerName: "Nome",
    taxId: "CNPJ/CPF",
    email: "E-mail",
    address: "Endereço",
    service: "Serviço",
    serviceCode: "Código de tributação nacional",
    nbsCode: "Código NBS",
    description: "Descrição",
    municipality: "Município (código IBGE)",
    notes: "Observações",
    amounts: "Valores",
    services: "Serviços",
    deductions: "Deduções",
    base: "Base de cálculo",
    issRate: "Alíquota do ISS",
    issAmount: "Valor do ISS",
    issWithheld: "ISS retido",
    federalWithheld: "Tributos federais retidos",
    totalWithheld: "Total de retenções",
    net: "Valor líquido",
    discounts: "Descontos",
    taxation: "Tributação do ISS",
    amountsSource: "Valores",
    amountsFromNote: "conforme a nota autorizada",
    amountsComputed: "calculados pelo serviço (antes da autorização)",
    taxation_taxable: "Tributável",
    taxation_immune: "Imune",
    taxation_export: "Exportação",
    taxation_non_incidence: "Não incidência",
    withheldBy_none: "não retido",
    withheldBy_taker: "retido pelo tomador",
    withheldBy_intermediary: "retido pelo intermediário",
    noTaker: "Consumidor não identificado",
    intermediary: "Intermediário",
    authority: "Autoridade tributária",
    accessKey: "Chave de acesso",
    nfseNumber: "Número da NFS-e",
    protocol: "Protocolo",
    authorizedAt: "Autorizado em",
    notAuthorized: "A autoridade não autorizou este documento.",
    rejection: "Rejeição",
    rejectionHint:
      "A autoridade tributária recusou este documento. Corrija o que ela indica e emita um novo documento pelo seu backend.",
    code: "Código",
    message: "Mensagem",
    cancellation: "Cancelamento",
    reasonCode: "Motivo",
    reason: "Justificativa",
    cancelState: "Andamento",
    cancelPending: "aguardando a autoridade",
    cancelDone: "cancelado",
    cancelRefused: "recusado pela autoridade",
    requestedAt: "Solicitado em",
    cancelledAt: "Cancelado em",
    cancelError: "Recusa da autoridade",
    processing: "Processamento",
    attempts: "Tentativas",
    lastError: "Último erro",
    noError: "nenhum",
    updated: "Atualizado em",
    files: "Arquivos",
    downloadXml: "Baixar XML",
    downloadPdf: "Baixar PDF (DANFSe)",
    noFiles: "O XML e o PDF ficam disponíveis quando a autoridade autoriza o documento.",
    downloaded: "{name} baixado.",
    cancel: "Cancelar documento",
    cancelNote:
      "O cancelamento é um pedido à autoridade tributária, que pode recusá-lo (por exemplo, fora do prazo). O documento continua autorizado até a autoridade confirmar.",
    developerNote: "Só proprietários e administradores cancelam documentos; seu papel nesta conta é desenvolvedor.",
    cancelTitle: "Cancelar o documento nº {number}",
    reason_issue_error: "Erro na emissão",
    reason_service_not_provided: "Serviço não prestado",
    reason_other: "Outros",
    reasonHint: "Entre {min} e {max} caracteres; vai para a autoridade junto com o pedido.",
    counter: "{count} de {max} caracteres",
    tooShort: "Escreva pelo menos {min} caracteres.",
    keep: "Manter o documento",
    confirmCancel: "Solicitar cancelamento",
    sending: "Enviando…",
    cancelRequested: "Cancelamento solicitado. A resposta da autoridade aparece aqui; atualize para conferir."
  }
})

type Texts = Translate<keyof typeof text.en>

export const DocumentsScreen = ({ route }: { readonly route?: ReadonlyArray<string> }) => {
  const id = route?.[0]
  return id === undefined ? <DocumentList /> : <DocumentDetail id={id} key={id} />
}

const statusTone = (status: Status) => {
  switch (status) {
    case "authorized":
      return "ok"
    case "rejected":
    case "failed":
      return "bad"
    case "cancel_requested":
    case "cancellation_in_analysis":
      return "warn"
    case "cancelled":
    case "substituted":
      return "muted"
    case "queued":
    case "submitting":
      return "info"
  }
}

const StatusBadge = ({ status, t }: { readonly status: Status; readonly t: Texts }) => (
  <Badge tone={statusTone(status)}>{t(`status_${status}`)}</Badge>
)

const EnvironmentBadge = ({ environment, t }: { readonly environment: Document["environment"]; readonly t: Texts }) => (
  <Badge tone={environment === "live" ? "info" : "warn"}>{t(environment)}</Badge>
)

// ---------------------------------------------------------------------------------------------
// The list

interface Filters {
  readonly status: Status | ""
  readonly environment: "live" | "test" | ""
  readonly from: string
  readonly to: string
  readonly reference: string
}

const NO_FILTERS: Filters = { status: "", environment: "", from: "", to: "", reference: "" }

/** The day after `YYYY-MM-DD`: "until" a day includes it, and the API's bound is exclusive. */
const dayAfter = (day: string) => {
  const date = new Date(`${day}T00:00:00Z`)
  date.setUTCDate(date.getUTCDate() + 1)
  return date.toISOString().slice(0, 10)
}

/** Dates are UTC days, like every date and time the dashboard shows. */
const queryOf = (filters: Filters) => ({
  ...(filters.status === "" ? {} : { status: filters.status }),
  ...(filters.environment === "" ? {} : { environment: filters.environment }),
  ...(filters.from === "" ? {} : { created_gte: `${filters.from}T00:00:00Z` }),
  ...(filters.to === "" ? {} : { created_lt: `${dayAfter(filters.to)}T00:00:00Z` }),
  ...(filters.reference.trim() === "" ? {} : { reference: filters.reference.trim() })
})

const DocumentList = () => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { api, tenant } = useWorkspace()
  const [draft, setDraft] = useState<Filters>(NO_FILTERS)
  const [applied, setApplied] = useState<Filters>(NO_FILTERS)
  const [rangeError, setRangeError] = useState(false)
  const pages = usePages(
    (startingAfter) =>
      api.documents.list({
        params: { tenantId: tenant.id },
        query: {
          limit: PAGE_SIZE,
          ...queryOf(applied),
          ...(startingAfter === undefined ? {} : { starting_after: startingAfter })
        }
      }),
    [tenant.id, applied]
  )
  const filtered = JSON.stringify(applied) !== JSON.stringify(NO_FILTERS)
  const set = <K extends keyof Filters>(key: K, value: Filters[K]) =>
    setDraft((current) => ({ ...current, [key]: value }))
  const submit = (event: Event) => {
    event.preventDefault()
    const badRange = draft.from !== "" && draft.to !== "" && draft.to < draft.from
    setRangeError(badRange)
    if (!badRange) setApplied(draft)
  }
  const clear = () => {
    setRangeError(false)
    setDraft(NO_FILTERS)
    setApplied(NO_FILTERS)
  }
  return (
    <section aria-labelledby="documents-title">
      <h1 id="documents-title">{t("title")}</h1>
      <form class="filters" aria-label={t("filters")} onSubmit={submit}>
        <label>
          {t("status")}
          <select
            value={draft.status}
            onChange={(event) => set("status", event.currentTarget.value as Filters["status"])}
          >
            <option value="">{t("anyStatus")}</option>
            {STATUSES.map((status) => <option key={status} value={status}>{t(`status_${status}`)}</option>)}
          </select>
        </label>
        <label>
          {t("environment")}
          <select
            value={draft.environment}
            onChange={(event) => set("environment", event.currentTarget.value as Filters["environment"])}
          >
            <option value="">{t("anyEnvironment")}</option>
            <option value="live">{t("live")}</option>
            <option value="test">{t("test")}</option>
          </select>
        </label>
        <label>
          {t("createdFrom")}
          <input type="date" value={draft.from} onInput={(event) => set("from", event.currentTarget.value)} />
        </label>
        <label>
          {t("createdTo")}
          <input type="date" value={draft.to} onInput={(event) => set("to", event.currentTarget.value)} />
        </label>
        <label>
          {t("reference")}
          <input
            type="search"
            maxLength={100}
            value={draft.reference}
            onInput={(event) => set("reference", event.currentTarget.value)}
          />
        </label>
        <div class="actions">
          <button type="submit" class="primary">{t("apply")}</button>
          <button type="button" onClick={clear}>{t("clear")}</button>
        </div>
      </form>
      {rangeError && <p class="notice error" role="alert">{t("badRange")}</p>}
      <Async resource={pages.resource} onRetry={pages.reload}>
        {() =>
          pages.items.length === 0
            ? filtered
              ? (
                <Empty title={t("noMatch")}>
                  <button type="button" onClick={clear}>{t("clear")}</button>
                </Empty>
              )
              : <NoDocuments t={t} />
            : (
              <>
                <div class="table-wrap">
                  <table class="cards documents">
                    <caption class="visually-hidden">{t("list")}</caption>
                    <thead>
                      <tr>
                        <th scope="col">{t("number")}</th>
                        <th scope="col">{t("reference")}</th>
                        <th scope="col">{t("taker")}</th>
                        <th scope="col" class="num">{t("total")}</th>
                        <th scope="col">{t("status")}</th>
                        <th scope="col">{t("environment")}</th>
                        <th scope="col">{t("created")}</th>
                      </tr>
                    </thead>
                    <tbody>
                      {pages.items.map((document) => (
                        <tr key={document.id}>
                          <td data-label={t("number")}>
                            <a href={href("documents", document.id)}>
                              {t("numberSeries", { number: document.number, series: document.series })}
                            </a>
                          </td>
                          <td data-label={t("reference")} class="mono">{document.reference ?? "—"}</td>
                          <td data-label={t("taker")}>{document.taker?.name ?? t("noTaker")}</td>
                          <td data-label={t("total")} class="num">{formatMoney(document.amounts.total, lang)}</td>
                          <td data-label={t("status")}>
                            <StatusBadge status={document.status} t={t} />
                          </td>
                          <td data-label={t("environment")}>
                            <EnvironmentBadge environment={document.environment} t={t} />
                          </td>
                          <td data-label={t("created")}>{formatDateTime(document.created_at, lang)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
                <MoreButton pages={pages} />
              </>
            )}
      </Async>
    </section>
  )
}

/** What an empty tenant needs to know: documents come from its backend, with a key. */
const NoDocuments = ({ t }: { readonly t: Texts }) => {
  // A placeholder, not a token: the page never holds an API key (SPEC §4).
  const example = [
    `curl ${location.origin}/v1/documents \\`,
    `  -H "Authorization: Bearer etd_test_…" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '{"type": "service_invoice",`,
    `       "taker": {"tax_id": "52998224725", "name": "Maria da Silva"},`,
    `       "service": {"code": "010101", "nbs_code": "115013000", "description": "Consultoria", "municipality_code": "3550308"},`,
    `       "amounts": {"services": 150000, "iss_rate": "2.00"}}'`
  ].join("\n")
  return (
    <Empty title={t("none")}>
      <p>{t("noneHint")}</p>
      <p>{t("noneExample")}</p>
      <pre class="example">{example}</pre>
      <a class="button primary" href={href("keys")}>{t("createKey")}</a>
    </Empty>
  )
}

// ---------------------------------------------------------------------------------------------
// One document

const DocumentDetail = ({ id }: { readonly id: string }) => {
  const t = useTexts(text)
  const { api, tenant, notify } = useWorkspace()
  const { resource, reload } = useResource(
    () => api.documents.get({ params: { tenantId: tenant.id, docId: id } }),
    [tenant.id, id]
  )
  // The last document read stays on screen while a later read fails (shown above it) or runs.
  const lastRead = useRef<Document | undefined>(undefined)
  if (resource.state === "ready") lastRead.current = resource.value
  const loaded = lastRead.current
  // The cancellation's answer is shown at once; a later read replaces it when it is newer.
  const [answered, setAnswered] = useState<Document | undefined>(undefined)
  const current = answered !== undefined && (loaded === undefined || answered.updated_at >= loaded.updated_at)
    ? answered
    : loaded
  const [refreshing, setRefreshing] = useState(false)
  const refresh = () => {
    setRefreshing(true)
    reload()
  }
  useEffect(() => setRefreshing(false), [resource])

  // Light polling while the background work may still change the document; it stops when the
  // status is final or the screen is left (the timer is cleared with the effect).
  useEffect(() => {
    if (current === undefined || !IN_PROGRESS.has(current.status)) return
    const timer = setTimeout(reload, POLL_MS)
    return () => clearTimeout(timer)
  }, [resource, current?.status])

  // A status change the person did not cause is announced to screen readers.
  const seen = useRef<Status | undefined>(undefined)
  useEffect(() => {
    if (current === undefined) return
    if (seen.current !== undefined && seen.current !== current.status) {
      notify(t("statusNow", { status: t(`status_${current.status}`) }))
    }
    seen.current = current.status
  }, [current?.status])

  return (
    <section aria-labelledby="document-title">
      <p class="back">
        <a href={href("documents")}>← {t("back")}</a>
      </p>
      {current === undefined
        ? (
          <>
            <h1 id="document-title">{t("title")}</h1>
            <Async resource={resource} onRetry={reload}>{() => null}</Async>
          </>
        )
        : (
          <>
            {resource.state === "failed" && <ErrorNotice failure={resource.failure} onRetry={reload} />}
            {answered !== undefined && current.status === "cancel_requested" && (
              <p class="notice ok">{t("cancelRequested")}</p>
            )}
            <DocumentView
              document={current}
              refreshing={refreshing}
              onRefresh={refresh}
              onCancelled={(document) => {
                setAnswered(document)
                notify(t("cancelRequested"))
              }}
            />
          </>
        )}
    </section>
  )
}

const DocumentView = ({ document, refreshing, onRefresh, onCancelled }: {
  readonly document: Document
  readonly refreshing: boolean
  readonly onRefresh: () => void
  readonly onCancelled: (document: Document) => void
}) => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { canManage } = useWorkspace()
  const [cancelling, setCancelling] = useState(false)
  const { taker, service, amounts, authority, rejection, cancellation, last_error } = document
  const inProgress = IN_PROGRESS.has(document.status)
  return (
    <>
      <div class="toolbar">
        <h1 id="document-title">{t("detailTitle", { number: document.number, series: document.series })}</h1>
        <button type="button" onClick={onRefresh} disabled={refreshing}>
          {refreshing ? t("refreshing") : t("refresh")}
        </button>
      </div>
      <dl class="facts">
        <Fact label={t("status")}>
          <StatusBadge status={document.status} t={t} />
        </Fact>
        <Fact label={t("environment")}>
          <EnvironmentBadge environment={document.environment} t={t} />
        </Fact>
        <Fact label={t("number")}>{t("numberSeries", { number: document.number, series: document.series })}</Fact>
        <Fact label={t("reference")}>
          <span class="mono">{document.reference ?? t("noReference")}</span>
        </Fact>
        <Fact label={t("issueDate")}>{formatDate(`${document.issue_date}T00:00:00Z`, lang)}</Fact>
        <Fact label={t("total")}>{formatMoney(amounts.total, lang)}</Fact>
      </dl>
      {inProgress && <p class="notice info">{t("polling")}</p>}

      {rejection !== null && (
        <div class="notice error">
          <h2>{t("rejection")}</h2>
          <dl class="facts">
            <Fact label={t("code")}>
              <span class="mono">{rejection.code}</span>
            </Fact>
            <Fact label={t("message")}>{rejection.message}</Fact>
          </dl>
          <p>{t("rejectionHint")}</p>
        </div>
      )}

      <h2>{t("files")}</h2>
      {WITH_FILES.has(document.status) && authority !== null
        ? <Downloads document={document} accessKey={authority.access_key} />
        : <p class="hint">{t("noFiles")}</p>}

      <h2>{t("taker")}</h2>
      {taker === null ? <p class="hint">{t("noTaker")}</p> : <PartyFacts party={taker} t={t} />}
      {document.intermediary !== null && (
        <>
          <h2>{t("intermediary")}</h2>
          <PartyFacts party={document.intermediary} t={t} />
        </>
      )}

      <h2>{t("service")}</h2>
      <dl class="facts">
        <Fact label={t("serviceCode")}>
          <span class="mono">{service.code}</span>
        </Fact>
        {service.nbs_code !== undefined && (
          <Fact label={t("nbsCode")}>
            <span class="mono">{service.nbs_code}</span>
          </Fact>
        )}
        <Fact label={t("municipality")}>
          <span class="mono">{service.municipality_code}</span>
        </Fact>
        <Fact label={t("description")}>{service.description}</Fact>
        {document.notes !== null && <Fact label={t("notes")}>{document.notes}</Fact>}
      </dl>

      <h2>{t("amounts")}</h2>
      <dl class="facts">
        <Fact label={t("taxation")}>
          {t(`taxation_${document.tax.iss?.taxation ?? "taxable"}`)},{" "}
          {t(`withheldBy_${document.tax.iss?.withheld_by ?? "none"}`)}
        </Fact>
        <Fact label={t("amountsSource")}>
          {amounts.source === "note" ? t("amountsFromNote") : t("amountsComputed")}
        </Fact>
      </dl>
      <table class="amounts">
        <caption class="visually-hidden">{t("amounts")}</caption>
        <tbody>
          <tr>
            <th scope="row">{t("services")}</th>
            <td class="num">{formatMoney(amounts.services, lang)}</td>
          </tr>
          <tr>
            <th scope="row">{t("deductions")}</th>
            <td class="num">{formatMoney(amounts.deductions, lang)}</td>
          </tr>
          <tr>
            <th scope="row">{t("base")}</th>
            <td class="num">{formatMoney(amounts.base, lang)}</td>
          </tr>
          <tr>
            <th scope="row">{t("issRate")}</th>
            <td class="num">{amounts.iss_rate === null ? "—" : formatRate(amounts.iss_rate, lang)}</td>
          </tr>
          <tr>
            <th scope="row">{t("issAmount")}</th>
            <td class="num">{amounts.iss_amount === null ? "—" : formatMoney(amounts.iss_amount, lang)}</td>
          </tr>
          <tr>
            <th scope="row">{t("discounts")}</th>
            <td class="num">{formatMoney(amounts.unconditional_discount + amounts.conditional_discount, lang)}</td>
          </tr>
          <tr>
            <th scope="row">{t("issWithheld")}</th>
            <td class="num">{formatMoney(amounts.iss_withheld, lang)}</td>
          </tr>
          <tr>
            <th scope="row">{t("federalWithheld")}</th>
            <td class="num">{formatMoney(amounts.federal_withheld, lang)}</td>
          </tr>
          <tr>
            <th scope="row">{t("totalWithheld")}</th>
            <td class="num">{formatMoney(amounts.total_withheld, lang)}</td>
          </tr>
          <tr>
            <th scope="row">{t("net")}</th>
            <td class="num">{formatMoney(amounts.net, lang)}</td>
          </tr>
          <tr class="total">
            <th scope="row">{t("total")}</th>
            <td class="num">{formatMoney(amounts.total, lang)}</td>
          </tr>
        </tbody>
      </table>

      {(document.substitutes !== null || document.substituted_by !== null) && (
        <>
          <h2>{t("substitution")}</h2>
          <dl class="facts">
            {document.substitutes !== null && (
              <Fact label={t("substitutes")}>
                <a class="mono" href={href("documents", document.substitutes)}>{document.substitutes}</a>
              </Fact>
            )}
            {document.substitution !== null && (
              <Fact label={t("substitutionReason")}>
                <span class="mono">{document.substitution.reason_code}</span>
                {document.substitution.reason === null ? "" : ` — ${document.substitution.reason}`}
              </Fact>
            )}
            {document.substituted_by !== null && (
              <Fact label={t("substitutedBy")}>
                <a class="mono" href={href("documents", document.substituted_by)}>{document.substituted_by}</a>
              </Fact>
            )}
          </dl>
          <p class="hint">{t("substitutionHint")}</p>
        </>
      )}

      <h2>{t("authority")}</h2>
      {authority === null
        ? <p class="hint">{t("notAuthorized")}</p>
        : (
          <dl class="facts">
            <Fact label={t("accessKey")}>
              <span class="mono">{authority.access_key}</span>
            </Fact>
            {authority.nfse_number !== null && (
              <Fact label={t("nfseNumber")}>
                <span class="mono">{authority.nfse_number}</span>
              </Fact>
            )}
            <Fact label={t("protocol")}>
              <span class="mono">{authority.protocol}</span>
            </Fact>
            <Fact label={t("authorizedAt")}>{formatDateTime(authority.authorized_at, lang)}</Fact>
          </dl>
        )}

      {cancellation !== null && (
        <>
          <h2>{t("cancellation")}</h2>
          <dl class="facts">
            <Fact label={t("cancelState")}>
              {cancellation.cancelled_at !== null
                ? <Badge tone="muted">{t("cancelDone")}</Badge>
                : cancellation.error !== null
                ? <Badge tone="bad">{t("cancelRefused")}</Badge>
                : <Badge tone="warn">{t("cancelPending")}</Badge>}
            </Fact>
            <Fact label={t("reasonCode")}>{t(`reason_${cancellation.reason_code}`)}</Fact>
            <Fact label={t("reason")}>{cancellation.reason}</Fact>
            <Fact label={t("requestedAt")}>{formatDateTime(cancellation.requested_at, lang)}</Fact>
            {cancellation.cancelled_at !== null && (
              <Fact label={t("cancelledAt")}>{formatDateTime(cancellation.cancelled_at, lang)}</Fact>
            )}
            {cancellation.protocol !== null && (
              <Fact label={t("protocol")}>
                <span class="mono">{cancellation.protocol}</span>
              </Fact>
            )}
            {cancellation.error !== null && (
              <Fact label={t("cancelError")}>
                <span class="mono">{cancellation.error.code}</span> {cancellation.error.message}
              </Fact>
            )}
          </dl>
        </>
      )}

      {document.status === "authorized" && (
        <>
          <h2>{t("cancellation")}</h2>
          <p class="hint">{t("cancelNote")}</p>
          {canManage
            ? <button type="button" class="danger" onClick={() => setCancelling(true)}>{t("cancel")}</button>
            : <p class="notice info">{t("developerNote")}</p>}
        </>
      )}

      <h2>{t("processing")}</h2>
      <dl class="facts">
        <Fact label={t("attempts")}>{document.attempts}</Fact>
        <Fact label={t("lastError")}>
          {last_error === null
            ? t("noError")
            : (
              <>
                <span class="mono">{last_error.code}</span> {last_error.message}{" "}
                <span class="hint">({formatDateTime(last_error.at, lang)})</span>
              </>
            )}
        </Fact>
        <Fact label={t("created")}>{formatDateTime(document.created_at, lang)}</Fact>
        <Fact label={t("updated")}>{formatDateTime(document.updated_at, lang)}</Fact>
        <Fact label="ID">
          <span class="mono">{document.id}</span>
        </Fact>
      </dl>

      {cancelling && (
        <CancelDialog
          document={document}
          onClose={() => setCancelling(false)}
          onCancelled={(cancelled) => {
            setCancelling(false)
            onCancelled(cancelled)
          }}
        />
      )}
    </>
  )
}

const Fact = ({ label, children }: { readonly label: string; readonly children: ComponentChildren }) => (
  <div>
    <dt>{label}</dt>
    <dd>{children}</dd>
  </div>
)

const Downloads = ({ document, accessKey }: { readonly document: Document; readonly accessKey: string }) => {
  const t = useTexts(text)
  const { api, tenant, notify } = useWorkspace()
  const action = useAction()
  const params = { tenantId: tenant.id, docId: document.id }
  const download = (kind: "xml" | "pdf") =>
    action.run(async () => {
      const name = `NFSe-${accessKey}.${kind}`
      if (kind === "xml") {
        const file = await api.documentFiles.xml({ params })
        saveFile(file.body, "application/xml", name)
      } else {
        const file = await api.documentFiles.pdf({ params })
        // A copy on its own ArrayBuffer, which is what a Blob takes.
        saveFile(new Uint8Array(file.body), "application/pdf", name)
      }
      notify(t("downloaded", { name }))
    })
  return (
    <>
      <div class="actions">
        <button type="button" disabled={action.busy} onClick={() => download("xml")}>{t("downloadXml")}</button>
        <button type="button" disabled={action.busy} onClick={() => download("pdf")}>{t("downloadPdf")}</button>
      </div>
      {action.failure && <ErrorNotice failure={action.failure} />}
    </>
  )
}

const CancelDialog = ({ document, onClose, onCancelled }: {
  readonly document: Document
  readonly onClose: () => void
  readonly onCancelled: (document: Document) => void
}) => {
  const t = useTexts(text)
  const { api, tenant } = useWorkspace()
  const action = useAction()
  const [reasonCode, setReasonCode] = useState<ReasonCode>("issue_error")
  const [reason, setReason] = useState("")
  const [tried, setTried] = useState(false)
  // The API trims the reason before counting it.
  const length = reason.trim().length
  const tooShort = length < REASON_MIN
  const submit = (event: Event) => {
    event.preventDefault()
    setTried(true)
    if (tooShort) return
    action.run(() =>
      api.documents.cancel({
        params: { tenantId: tenant.id, docId: document.id },
        payload: { reason_code: reasonCode, reason: reason.trim() }
      })
    ).then((cancelled) => cancelled !== undefined && onCancelled(cancelled))
  }
  return (
    <Dialog title={t("cancelTitle", { number: document.number })} onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <p class="notice warning">{t("cancelNote")}</p>
        <label>
          {t("reasonCode")}
          <select value={reasonCode} onChange={(event) => setReasonCode(event.currentTarget.value as ReasonCode)}>
            {REASON_CODES.map((code) => <option key={code} value={code}>{t(`reason_${code}`)}</option>)}
          </select>
        </label>
        <label>
          {t("reason")}
          <textarea
            rows={4}
            maxLength={REASON_MAX}
            required
            aria-describedby="cancel-reason-hint cancel-reason-count"
            aria-invalid={tried && tooShort ? "true" : undefined}
            value={reason}
            onInput={(event) => setReason(event.currentTarget.value)}
          />
        </label>
        <p class="hint counter">
          <span id="cancel-reason-hint">{t("reasonHint", { min: REASON_MIN, max: REASON_MAX })}</span>{" "}
          <span id="cancel-reason-count">{t("counter", { count: length, max: REASON_MAX })}</span>
        </p>
        {tried && tooShort && <p class="notice error" role="alert">{t("tooShort", { min: REASON_MIN })}</p>}
        {action.failure && <ErrorNotice failure={action.failure} />}
        <div class="actions">
          <button type="button" onClick={onClose}>{t("keep")}</button>
          <button type="submit" class="danger" disabled={action.busy}>
            {action.busy ? t("sending") : t("confirmCancel")}
          </button>
        </div>
      </form>
    </Dialog>
  )
}

// ---------------------------------------------------------------------------------------------
// Formatting

type Party = NonNullable<Document["taker"]>

/** A taker's or intermediary's facts: whichever id it has, and its address in Brazil or abroad. */
const PartyFacts = ({ party, t }: { readonly party: Party; readonly t: Translate<keyof typeof text.en> }) => (
  <dl class="facts">
    <Fact label={t("takerName")}>{party.name}</Fact>
    <Fact label={t("taxId")}>
      <span class="mono">
        {party.tax_id !== undefined ? formatTaxId(party.tax_id) : party.nif ?? party.no_nif_reason ?? "—"}
      </span>
    </Fact>
    <Fact label={t("email")}>{party.email ?? "—"}</Fact>
    <Fact label={t("address")}>
      {party.address !== undefined
        ? formatAddress(party.address)
        : party.foreign_address !== undefined
        ? [
          party.foreign_address.street,
          party.foreign_address.number,
          party.foreign_address.city,
          party.foreign_address.country
        ].join(", ")
        : "—"}
    </Fact>
  </dl>
)

const formatAddress = (address: NonNullable<Party["address"]>) =>
  [
    [address.street, address.number, address.complement].filter((part) => part !== undefined).join(", "),
    address.district,
    `${address.municipality_code}/${address.state}`,
    `CEP ${address.postal_code.slice(0, 5)}-${address.postal_code.slice(5)}`
  ].join(" — ")

/** The API's decimal string ("2.00") with the language's decimal mark. */
const formatRate = (rate: string, lang: Lang) => `${lang === "pt" ? rate.replace(".", ",") : rate} %`
