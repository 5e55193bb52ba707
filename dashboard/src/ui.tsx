/**
 * The pieces every screen shares: loading, error and empty states, confirmation before anything
 * destructive, the once-shown secret with its copy button, and cursor pagination.
 */
import type { ComponentChildren } from "preact"
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { type Failure, failureOf } from "./api.js"
import { type Lang, texts, useLang, useTexts } from "./i18n.js"
import { isRefusalCode, issueText, refusalTexts } from "./refusals.js"

const common = texts({
  en: {
    loading: "Loading…",
    retry: "Try again",
    cancel: "Cancel",
    close: "Close",
    copy: "Copy",
    copied: "Copied to the clipboard",
    copyFailed: "Could not copy: select the text and copy it yourself",
    loadMore: "Load more",
    secretOnce: "Copy it now: it is shown only this once and cannot be recovered.",
    working: "Working…",
    language: "Language"
  },
  pt: {
    loading: "Carregando…",
    retry: "Tentar de novo",
    cancel: "Cancelar",
    close: "Fechar",
    copy: "Copiar",
    copied: "Copiado para a área de transferência",
    copyFailed: "Não foi possível copiar: selecione o texto e copie manualmente",
    loadMore: "Carregar mais",
    secretOnce: "Copie agora: ele é exibido só desta vez e não pode ser recuperado.",
    working: "Processando…",
    language: "Idioma"
  }
})

/** Failures the page explains better than the API's English message, even in English. */
const pageWorded: ReadonlySet<string> = new Set([
  "network_error",
  "unexpected",
  "forbidden",
  "rate_limited",
  "invalid_session",
  "service_unavailable",
  "internal_error",
  "not_ready"
])

/**
 * A failure in the person's language: the screen's own explanation when it gave one, else the
 * text of its `code` with each field at fault named in the page's words. The API's English message
 * is shown on the English page only, where it names what clashed or what state forbade it.
 */
export const useFailureText = () => {
  const { lang } = useLang()
  return (failure: Failure) => {
    if (failure.explanation !== undefined) return failure.explanation
    const known = isRefusalCode(failure.code)
    const lead = refusalTexts[lang][known ? failure.code : "unexpected"]
    const issues = (failure.issues ?? []).map((issue) => issueText(issue, lang, failure.code))
    if (issues.length > 0) return `${lead} ${issues.join("; ")}.`
    return lang === "en" && !pageWorded.has(failure.code) ? failure.message : lead
  }
}

export type Resource<A> =
  | { readonly state: "loading" }
  | { readonly state: "failed"; readonly failure: Failure }
  | { readonly state: "ready"; readonly value: A }

/** Loads `load()` when `deps` change; `reload` loads again without dropping what is shown. */
export const useResource = <A extends unknown>(load: () => Promise<A>, deps: ReadonlyArray<unknown>) => {
  const [resource, setResource] = useState<Resource<A>>({ state: "loading" })
  const generation = useRef(0)
  const run = useCallback((showLoading: boolean) => {
    const mine = ++generation.current
    if (showLoading) setResource({ state: "loading" })
    // A load that throws before returning its promise is a failure like any other.
    Promise.resolve().then(load).then(
      (value) => mine === generation.current && setResource({ state: "ready", value }),
      (error: unknown) => mine === generation.current && setResource({ state: "failed", failure: failureOf(error) })
    )
  }, deps)
  useEffect(() => run(true), [run])
  return { resource, reload: () => run(false) }
}

export const Loading = () => {
  const t = useTexts(common)
  return <p class="loading" role="status" aria-live="polite">{t("loading")}</p>
}

export const ErrorNotice = ({ failure, onRetry }: { readonly failure: Failure; readonly onRetry?: () => void }) => {
  const t = useTexts(common)
  const text = useFailureText()
  return (
    <div class="notice error" role="alert">
      <p>{text(failure)}</p>
      {onRetry && <button type="button" onClick={onRetry}>{t("retry")}</button>}
    </div>
  )
}

export const Async = <A extends unknown>({ resource, onRetry, children }: {
  readonly resource: Resource<A>
  readonly onRetry: () => void
  readonly children: (value: A) => ComponentChildren
}) =>
  resource.state === "loading"
    ? <Loading />
    : resource.state === "failed"
    ? <ErrorNotice failure={resource.failure} onRetry={onRetry} />
    : <>{children(resource.value)}</>

/** What to show when a list is empty: what it is for, and the next step. */
export const Empty = ({ title, children }: { readonly title: string; readonly children?: ComponentChildren }) => (
  <div class="empty">
    <p class="empty-title">{title}</p>
    {children}
  </div>
)

/** Runs a call for a form or a button: busy while it runs, its failure shown, never two at once. */
export const useAction = () => {
  const [busy, setBusy] = useState(false)
  const [failure, setFailure] = useState<Failure | undefined>(undefined)
  const run = async <A extends unknown>(call: () => Promise<A>): Promise<A | undefined> => {
    if (busy) return undefined
    setBusy(true)
    setFailure(undefined)
    try {
      return await call()
    } catch (error) {
      setFailure(failureOf(error))
      return undefined
    } finally {
      setBusy(false)
    }
  }
  return { busy, failure, run, clear: () => setFailure(undefined) }
}

/**
 * A modal dialog on the native `<dialog>`: focus moves into it and stays there, Escape closes it
 * (unless `busy`: a call whose answer only this dialog can show, such as a new token, is running;
 * or `keepOnEscape`: it shows a secret that a reflexive Escape would lose for good), and focus
 * returns to what opened it.
 */
export const Dialog = ({ title, onClose, children, wide, busy, keepOnEscape }: {
  readonly title: string
  readonly onClose: () => void
  readonly children: ComponentChildren
  readonly wide?: boolean
  readonly busy?: boolean
  readonly keepOnEscape?: boolean
}) => {
  const ref = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null
    ref.current?.showModal()
    return () => opener?.focus()
  }, [])
  const titleId = useRef(`dialog-${Math.random().toString(36).slice(2)}`).current
  return (
    <dialog
      ref={ref}
      class={wide ? "wide" : undefined}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault()
        if (busy !== true && keepOnEscape !== true) onClose()
      }}
    >
      <h2 id={titleId}>{title}</h2>
      {children}
    </dialog>
  )
}

/** Asks before a destructive action; the action's failure stays in the dialog. */
export const Confirm = ({ title, body, confirmLabel, onConfirm, onClose }: {
  readonly title: string
  readonly body: ComponentChildren
  readonly confirmLabel: string
  readonly onConfirm: () => Promise<unknown>
  readonly onClose: () => void
}) => {
  const t = useTexts(common)
  const action = useAction()
  return (
    <Dialog title={title} onClose={onClose}>
      <div class="dialog-body">{body}</div>
      {action.failure && <ErrorNotice failure={action.failure} />}
      <div class="actions">
        <button type="button" onClick={onClose}>{t("cancel")}</button>
        <button
          type="button"
          class="danger"
          disabled={action.busy}
          onClick={() =>
            action.run(async () => {
              await onConfirm()
              return true
            }).then((done) => done === true && onClose())}
        >
          {action.busy ? t("working") : confirmLabel}
        </button>
      </div>
    </Dialog>
  )
}

/** `name`, when given, is the button's accessible name ("Copy access key"); it starts with its visible label. */
export const CopyButton = ({ text, label, name }: {
  readonly text: string
  readonly label?: string
  readonly name?: string
}) => {
  const t = useTexts(common)
  const [outcome, setOutcome] = useState<"copied" | "copyFailed" | undefined>(undefined)
  return (
    <>
      <button
        type="button"
        aria-label={name}
        onClick={() =>
          navigator.clipboard.writeText(text).then(() => setOutcome("copied"), () => setOutcome("copyFailed"))}
      >
        {label ?? t("copy")}
      </button>
      <span class="copy-outcome" role="status" aria-live="polite">{outcome && t(outcome)}</span>
    </>
  )
}

/** A token or signing secret, shown once, with its copy button and the warning that goes with it. */
export const SecretOnce = ({ label, secret }: { readonly label: string; readonly secret: string }) => {
  const t = useTexts(common)
  return (
    <div class="secret">
      <p class="notice warning">{t("secretOnce")}</p>
      <label>
        {label}
        <input class="mono" readOnly value={secret} onFocus={(event) => event.currentTarget.select()} />
      </label>
      <CopyButton text={secret} />
    </div>
  )
}

export const CloseButton = ({ onClose }: { readonly onClose: () => void }) => {
  const t = useTexts(common)
  return <button type="button" onClick={onClose}>{t("close")}</button>
}

/** A "load more" button over the API's cursor pagination (its `next_cursor`). */
export const usePages = <A extends unknown>(
  load: (startingAfter: string | undefined) => Promise<{
    readonly data: ReadonlyArray<A>
    readonly has_more: boolean
    readonly next_cursor: string | null
  }>,
  deps: ReadonlyArray<unknown>
) => {
  const [extra, setExtra] = useState<{ items: ReadonlyArray<A>; hasMore: boolean; cursor: string | null } | undefined>(
    undefined
  )
  // Counts first pages: a next page asked for before the list was read again (other filters,
  // another tenant, a reload) belongs to the old list and is dropped, not appended to the new one.
  const firstPages = useRef(0)
  const { resource, reload } = useResource(() => {
    firstPages.current++
    setExtra(undefined)
    return load(undefined)
  }, deps)
  const more = useAction()
  const items = resource.state === "ready" ? [...resource.value.data, ...(extra?.items ?? [])] : []
  const hasMore = extra?.hasMore ?? (resource.state === "ready" && resource.value.has_more)
  const cursor = extra !== undefined ? extra.cursor : resource.state === "ready" ? resource.value.next_cursor : null
  const loadMore = () =>
    more.run(async () => {
      const list = firstPages.current
      const page = await load(cursor ?? undefined)
      if (list !== firstPages.current) return
      setExtra((current) => ({
        items: [...(current?.items ?? []), ...page.data],
        hasMore: page.has_more,
        cursor: page.next_cursor
      }))
    })
  return { resource, reload, items, hasMore, loadMore, more }
}

/** A column of a `PagedTable`: its heading, and whether it holds numbers (aligned right); `false` leaves it out. */
export type Column = string | { readonly label: string; readonly numeric: true } | false

/**
 * A paged list as a table of cards (at phone width each row becomes a card, its cells labelled):
 * loading and failure, what shows when the list is empty, the header row, and "load more".
 * `row` gives an item's rows (usually one `<tr>`, keyed).
 */
export const PagedTable = <A extends unknown>({ pages, empty, columns, caption, labelledBy, class: className, row }: {
  readonly pages: ReturnType<typeof usePages<A>>
  readonly empty: ComponentChildren
  readonly columns: ReadonlyArray<Column>
  /** Read by screen readers only, when no heading labels the table (`labelledBy`). */
  readonly caption?: string
  readonly labelledBy?: string
  readonly class?: string
  readonly row: (item: A) => ComponentChildren
}) => (
  <Async resource={pages.resource} onRetry={pages.reload}>
    {() =>
      pages.items.length === 0 ? empty : (
        <>
          <div class="table-wrap">
            <table class={className === undefined ? "cards" : `cards ${className}`} aria-labelledby={labelledBy}>
              {caption !== undefined && <caption class="visually-hidden">{caption}</caption>}
              <thead>
                <tr>
                  {columns.map((column) =>
                    column === false
                      ? null
                      : typeof column === "string"
                      ? <th scope="col" key={column}>{column}</th>
                      : <th scope="col" class="num" key={column.label}>{column.label}</th>
                  )}
                </tr>
              </thead>
              <tbody>{pages.items.map(row)}</tbody>
            </table>
          </div>
          <MoreButton pages={pages} />
        </>
      )}
  </Async>
)

export const MoreButton = (
  { pages }: {
    readonly pages: { hasMore: boolean; loadMore: () => void; more: { busy: boolean; failure?: Failure | undefined } }
  }
) => {
  const t = useTexts(common)
  if (!pages.hasMore && !pages.more.failure) return null
  return (
    <div class="more">
      {pages.more.failure && <ErrorNotice failure={pages.more.failure} />}
      {pages.hasMore && (
        <button type="button" onClick={pages.loadMore} disabled={pages.more.busy}>
          {pages.more.busy ? t("loading") : t("loadMore")}
        </button>
      )}
    </div>
  )
}

export const Badge = (
  { tone, children }: { readonly tone: "ok" | "warn" | "bad" | "muted" | "info"; readonly children: ComponentChildren }
) => (
  <span class={`badge ${tone}`}>{children}</span>
)

/**
 * A document's, key's or endpoint's environment: one look on every screen, so "test" is recognised
 * at a glance wherever it appears. `label` is the screen's word for it.
 */
export const EnvironmentBadge = ({ environment, label }: {
  readonly environment: "live" | "test"
  readonly label: string
}) => <span class={`badge environment-${environment}`}>{label}</span>

/** The language switch, on the sign-in page and in the header: the choice is remembered. */
export const LanguageSelect = () => {
  const t = useTexts(common)
  const { lang, setLang } = useLang()
  return (
    <span class="control lang">
      <label for="language">{t("language")}</label>
      <select id="language" value={lang} onChange={(event) => setLang(event.currentTarget.value as Lang)}>
        <option value="pt">Português</option>
        <option value="en">English</option>
      </select>
    </span>
  )
}
