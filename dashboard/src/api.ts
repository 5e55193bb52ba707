/**
 * The dashboard talks to the API only through the project's typed client (src/client), derived
 * from the same contract as the server: a renamed field or a new error breaks this build, not a
 * person's page. The session token lives in this tab's sessionStorage (SPEC §15: never
 * localStorage, never a URL) and travels as a Bearer header like every other credential.
 */
import { type Schema, SchemaIssue } from "effect"
import { createClient, InvalidArgument, type PromiseClient, Redacted } from "../../src/client/index.js"

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

export { Redacted }
export type Api = PromiseClient

const SESSION_KEY = "etd.session"

export interface StoredSession {
  readonly token: string
  readonly expiresAt: string
}

export const storedSession = (): StoredSession | undefined => {
  try {
    const raw = sessionStorage.getItem(SESSION_KEY)
    if (raw === null) return undefined
    const session = JSON.parse(raw) as StoredSession
    if (Date.parse(session.expiresAt) > Date.now()) return session
    sessionStorage.removeItem(SESSION_KEY)
    return undefined
  } catch {
    return undefined
  }
}

export const storeSession = (session: StoredSession | undefined) => {
  if (session === undefined) sessionStorage.removeItem(SESSION_KEY)
  else sessionStorage.setItem(SESSION_KEY, JSON.stringify(session))
}

/** A client for this page's origin, with the session's token when there is one. */
export const apiFor = (token?: string): Api => createClient({ baseUrl: location.origin, token })

/**
 * What the page shows of a failed call: the API's stable `code`, its (English) message and the
 * fields at fault, or a screen's own `explanation` in the page's language.
 */
export interface Failure {
  readonly code: string
  readonly message: string
  readonly issues?: ReadonlyArray<{ readonly path: ReadonlyArray<string | number>; readonly message: string }>
  readonly explanation?: string
}

export const failureOf = (error: unknown): Failure => {
  // The client refused the call's arguments before sending them: the server would have said
  // invalid_request, naming the fields within the body or path (without the call's `payload.`).
  if (error instanceof InvalidArgument) {
    return {
      code: "invalid_request",
      message: error.message,
      issues: error.issues.map((issue) => ({ path: issue.path.slice(1), message: issue.message }))
    }
  }
  if (typeof error === "object" && error !== null) {
    const candidate = error as {
      code?: unknown
      message?: unknown
      issues?: unknown
      explanation?: unknown
      _tag?: unknown
    }
    if (typeof candidate.code === "string") {
      return {
        code: candidate.code,
        message: typeof candidate.message === "string" ? candidate.message : candidate.code,
        ...(Array.isArray(candidate.issues) ? { issues: candidate.issues as Failure["issues"] } : {}),
        // A screen's explanation of a failure it rethrows (a stale key, a last owner).
        ...(typeof candidate.explanation === "string" ? { explanation: candidate.explanation } : {})
      }
    }
    // A value the contract refuses that got past the argument check (an answer of another shape).
    if (candidate._tag === "SchemaError") {
      const issues = formatIssues((error as Schema.SchemaError).issue).issues.map((issue) => ({
        path: (issue.path ?? []).map((segment) => String(typeof segment === "object" ? segment.key : segment)),
        message: issue.message
      }))
      return { code: "invalid_request", message: String(candidate.message), ...(issues.length > 0 ? { issues } : {}) }
    }
    // No answer the contract describes: the network, or a proxy's error page.
    if (candidate._tag === "HttpClientError") return { code: "network_error", message: String(candidate.message) }
  }
  return { code: "unexpected", message: String(error) }
}

/** Saves a file the API answered with (the note's XML or PDF) under the given name. */
export const saveFile = (content: BlobPart, type: string, name: string) => {
  const url = URL.createObjectURL(new Blob([content], { type }))
  const link = document.createElement("a")
  link.href = url
  link.download = name
  link.hidden = true
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}
