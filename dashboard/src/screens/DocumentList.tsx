/**
 * The documents list (SPEC §6, §15): the tenant's service invoices of both environments, searched,
 * filtered and paged. Documents are issued by the tenant's backend with an API key, never from here:
 * the empty state says so and shows how.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { dayStart, formatDateTime, formatMoney, useLang, useTexts } from "../i18n.js"
import { fragmentPath, fragmentQuery, href, replaceFragmentQuery } from "../router.js"
import { Empty, EnvironmentBadge, PagedTable, usePages } from "../ui.js"
import { useWorkspace } from "../workspace.js"
import {
  counterpartOf,
  PAGE_SIZE,
  type Status,
  StatusBadge,
  STATUSES,
  text,
  type Texts,
  totalOf
} from "./DocumentTexts.js"

// ---------------------------------------------------------------------------------------------
// The list

const TYPES = ["service_invoice", "product_invoice", "consumer_invoice"] as const

interface Filters {
  readonly status: Status | ""
  readonly type: typeof TYPES[number] | ""
  readonly environment: "live" | "test" | ""
  readonly from: string
  readonly to: string
  readonly reference: string
}

const NO_FILTERS: Filters = { status: "", type: "", environment: "", from: "", to: "", reference: "" }

/** The day after `YYYY-MM-DD`: "until" a day includes it, and the API's bound is exclusive. */
const dayAfter = (day: string) => {
  const date = new Date(`${day}T00:00:00Z`)
  date.setUTCDate(date.getUTCDate() + 1)
  return date.toISOString().slice(0, 10)
}

/** Dates are days in Brasília, like every date and time the dashboard shows. */
const queryOf = (filters: Filters) => ({
  ...(filters.status === "" ? {} : { status: filters.status }),
  ...(filters.type === "" ? {} : { type: filters.type }),
  ...(filters.environment === "" ? {} : { environment: filters.environment }),
  ...(filters.from === "" ? {} : { created_gte: dayStart(filters.from) }),
  ...(filters.to === "" ? {} : { created_lt: dayStart(dayAfter(filters.to)) }),
  ...(filters.reference.trim() === "" ? {} : { reference: filters.reference.trim() })
})

type SearchField = "taker" | "nfse" | "dps"
const SEARCH_FIELDS: ReadonlyArray<SearchField> = ["taker", "nfse", "dps"]
const SEARCH_DELAY_MS = 300
const CPF_SHAPE = /^[0-9]{11}$/
const CNPJ_SHAPE = /^[0-9A-Z]{12}[0-9]{2}$/
const TAX_ID_PUNCTUATION = /[\s./-]/g

interface Search {
  readonly field: SearchField
  readonly text: string
}

/** The search as the list's filters: a whole CPF/CNPJ is the taker's tax id, other text a part of the name. */
const searchQuery = ({ field, text }: Search) => {
  const typed = text.trim()
  if (typed === "") return {}
  if (field === "taker") {
    const compact = typed.replace(TAX_ID_PUNCTUATION, "").toUpperCase()
    return CPF_SHAPE.test(compact) || CNPJ_SHAPE.test(compact) ? { taker_tax_id: compact } : { taker_name: typed }
  }
  if (!/^[0-9]+$/.test(typed) || /^0+$/.test(typed)) return undefined
  const digits = typed.replace(/^0+/, "")
  return field === "nfse" ? { nfse_number: digits } : { number: Number(digits) }
}

/** The search kept in the address (`#/documents?by=nfse&q=123`), so a reload or a shared link keeps it. */
const searchInAddress = (): Search => {
  const query = fragmentQuery()
  const by = query.get("by")
  return { field: SEARCH_FIELDS.find((field) => field === by) ?? "taker", text: query.get("q") ?? "" }
}

export const DocumentList = () => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { api, tenant } = useWorkspace()
  const [draft, setDraft] = useState<Filters>(NO_FILTERS)
  const [applied, setApplied] = useState<Filters>(NO_FILTERS)
  const [rangeError, setRangeError] = useState(false)
  const [typing, setTyping] = useState<Search>(searchInAddress)
  const [search, setSearch] = useState<Search>(typing)
  useEffect(() => {
    const timer = setTimeout(() => setSearch(typing), SEARCH_DELAY_MS)
    return () => clearTimeout(timer)
  }, [typing.field, typing.text])
  // The search this screen last wrote to the address: a hashchange that leaves it as written is
  // none of the list's business (nor a reason to drop what is being typed).
  const written = useRef(fragmentQuery().toString())
  useEffect(() => {
    const query = new URLSearchParams(
      search.text === "" ? {} : { ...(search.field === "taker" ? {} : { by: search.field }), q: search.text }
    )
    written.current = query.toString()
    replaceFragmentQuery(query)
  }, [search])
  useEffect(() => {
    // The address changed under the list (its navigation link, the back button): the screen follows
    // it, as if opened there, instead of keeping a search the address no longer holds.
    const followAddress = () => {
      if (fragmentPath() !== "documents" || fragmentQuery().toString() === written.current) return
      const inAddress = searchInAddress()
      setTyping(inAddress)
      setSearch(inAddress)
      setRangeError(false)
      setDraft(NO_FILTERS)
      setApplied(NO_FILTERS)
    }
    addEventListener("hashchange", followAddress)
    return () => removeEventListener("hashchange", followAddress)
  }, [])
  const searched = searchQuery(search)
  const pages = usePages(
    (startingAfter) =>
      api.documents.list({
        params: { tenantId: tenant.id },
        query: {
          limit: PAGE_SIZE,
          ...queryOf(applied),
          ...searched,
          ...(startingAfter === undefined ? {} : { starting_after: startingAfter })
        }
      }),
    [tenant.id, applied, JSON.stringify(searched)]
  )
  const filtered = JSON.stringify(applied) !== JSON.stringify(NO_FILTERS) || search.text.trim() !== ""
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
    setTyping((current) => ({ ...current, text: "" }))
  }
  return (
    <section aria-labelledby="documents-title">
      <h1 id="documents-title">{t("title")}</h1>
      <div class="search" role="search">
        <label>
          {t("searchBy")}
          <select
            value={typing.field}
            onChange={(event) => setTyping({ ...typing, field: event.currentTarget.value as SearchField })}
          >
            <option value="taker">{t("searchTaker")}</option>
            <option value="nfse">{t("searchNfse")}</option>
            <option value="dps">{t("searchDps")}</option>
          </select>
        </label>
        <label>
          {t("search")}
          <input
            type="search"
            maxLength={150}
            value={typing.text}
            onInput={(event) => setTyping({ ...typing, text: event.currentTarget.value })}
          />
        </label>
      </div>
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
          {t("type")}
          <select
            value={draft.type}
            onChange={(event) => set("type", event.currentTarget.value as Filters["type"])}
          >
            <option value="">{t("anyType")}</option>
            {TYPES.map((type) => <option key={type} value={type}>{t(`type_${type}`)}</option>)}
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
      {searched === undefined
        ? <p class="notice error" role="alert">{t("searchDigits")}</p>
        : (
          <PagedTable
            pages={pages}
            empty={filtered
              ? (
                <Empty title={t("noMatch")}>
                  <button type="button" onClick={clear}>{t("clear")}</button>
                </Empty>
              )
              : <NoDocuments t={t} />}
            class="documents"
            caption={t("list")}
            columns={[
              t("number"),
              t("nfseColumn"),
              t("reference"),
              t("taker"),
              { label: t("total"), numeric: true },
              t("status"),
              t("environment"),
              t("created")
            ]}
            row={(document) => (
              <tr key={document.id}>
                <td data-label={t("number")}>
                  <a href={href("documents", document.id)}>
                    {t("numberSeries", { number: document.number, series: document.series })}
                  </a>
                </td>
                <td data-label={t("nfseColumn")} class="mono">
                  {document.type === "service_invoice"
                    ? document.authority?.nfse_number ?? "—"
                    : t(`type_${document.type}`)}
                </td>
                <td data-label={t("reference")} class="mono">{document.reference ?? "—"}</td>
                <td data-label={t("taker")}>{counterpartOf(document) ?? t("noTaker")}</td>
                <td data-label={t("total")} class="num">{formatMoney(totalOf(document), lang)}</td>
                <td data-label={t("status")}>
                  <StatusBadge status={document.status} t={t} />
                </td>
                <td data-label={t("environment")}>
                  <EnvironmentBadge environment={document.environment} label={t(document.environment)} />
                </td>
                <td data-label={t("created")}>{formatDateTime(document.created_at, lang)}</td>
              </tr>
            )}
          />
        )}
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
