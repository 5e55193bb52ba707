/**
 * Screens are addressed by the URL's fragment (`#/documents/doc_…`): the service answers `/` with
 * the page, and every other path stays the API's (its unprefixed aliases such as `/documents`).
 * Ids of documents and endpoints may appear here; tokens and secrets never do.
 */
import { useEffect, useState } from "preact/hooks"

/** The fragment's path and its own query (`#/documents?taker=joao`), split at the first `?`. */
const fragment = () => {
  const [path = "", query = ""] = location.hash.replace(/^#\/?/, "").split("?", 2)
  return { path, query }
}

const current = () => fragment().path.split("/").filter((part) => part !== "").map(decodeURIComponent)

/** The fragment's path without its query (`documents` for `#/documents?q=joao`). */
export const fragmentPath = () => fragment().path.replace(/\/+$/, "")

/** A screen's state kept in the fragment's query, so a reload or a shared link shows the same. */
export const fragmentQuery = () => new URLSearchParams(fragment().query)

/** Rewrites the fragment's query in place: no history entry per keystroke, and no `hashchange`. */
export const replaceFragmentQuery = (query: URLSearchParams) => {
  const text = query.toString()
  const hash = `#/${fragment().path}${text === "" ? "" : `?${text}`}`
  history.replaceState(history.state, "", `${location.pathname}${location.search}${hash}`)
}

const sameRoute = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((part, index) => part === b[index])

export const useRoute = (): ReadonlyArray<string> => {
  const [route, setRoute] = useState(current)
  useEffect(() => {
    const onChange = () => setRoute((shown) => (sameRoute(shown, current()) ? shown : current()))
    addEventListener("hashchange", onChange)
    // Effects run a frame after the first render: an address changed in between (a link followed
    // as the screen appears) fired its hashchange before anyone listened, so read it once here.
    onChange()
    return () => removeEventListener("hashchange", onChange)
  }, [])
  return route
}

export const href = (...parts: ReadonlyArray<string>) => `#/${parts.map(encodeURIComponent).join("/")}`

export const navigate = (...parts: ReadonlyArray<string>) => {
  location.hash = href(...parts)
}
