/**
 * Screens are addressed by the URL's fragment (`#/documents/doc_…`): the service answers `/` with
 * the page, and every other path stays the API's (its unprefixed aliases such as `/documents`).
 * Ids of documents and endpoints may appear here; tokens and secrets never do.
 */
import { useEffect, useState } from "preact/hooks"

const current = () =>
  location.hash.replace(/^#\/?/, "").split("/").filter((part) => part !== "").map(decodeURIComponent)

export const useRoute = (): ReadonlyArray<string> => {
  const [route, setRoute] = useState(current)
  useEffect(() => {
    const onChange = () => setRoute(current())
    addEventListener("hashchange", onChange)
    return () => removeEventListener("hashchange", onChange)
  }, [])
  return route
}

export const href = (...parts: ReadonlyArray<string>) => `#/${parts.map(encodeURIComponent).join("/")}`

export const navigate = (...parts: ReadonlyArray<string>) => {
  location.hash = href(...parts)
}
