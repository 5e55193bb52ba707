/**
 * How the national NFS-e system says no, and how the SEFIN client fails: the authority's error
 * lists read in the three shapes it really uses (see ../shared/reference/nfse-nacional/README.md),
 * and the client's failures typed as final (`SefinRefused`) or transient (`SefinUnavailable`,
 * `SefinTimeout`) for the adapter to map to the pipeline's retry rules.
 */
import { Schema } from "effect"

/** One entry of the authority's error or alert lists, whatever shape it came in. */
export interface SefinMessage {
  readonly code: string
  readonly message: string
  readonly complement?: string | undefined
}

const SefinMessageSchema = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  complement: Schema.optional(Schema.String)
})

/** The authority refused the request (a 4xx with an error list): final, never retried as is. */
export class SefinRefused extends Schema.TaggedError<SefinRefused>()("SefinRefused", {
  status: Schema.Number,
  errors: Schema.Array(SefinMessageSchema),
  /** `idDPS` of a refused submission, when the authority could read it (e.g. E0014, duplicate). */
  dpsId: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return `SEFIN refused the request (${this.status}): ${this.errors.map((e) => `${e.code} ${e.message}`).join("; ")}`
  }
}

/** No usable answer: 5xx, 429, an HTML or unreadable answer, a connection or TLS failure. Transient. */
export class SefinUnavailable extends Schema.TaggedError<SefinUnavailable>()("SefinUnavailable", {
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  /** The TLS handshake failed: usually our configuration (the authority's CA not trusted), not an outage. */
  tls: Schema.optional(Schema.Boolean),
  /** The request certainly never reached the authority: the connection was refused, or its host is unknown or unreachable. */
  unreached: Schema.optional(Schema.Boolean)
}) {}

/** No answer within the timeout (the request was aborted). Transient; the outcome is unknown. */
export class SefinTimeout extends Schema.TaggedError<SefinTimeout>()("SefinTimeout", {
  message: Schema.String
}) {}

export type SefinError = SefinRefused | SefinUnavailable | SefinTimeout

/**
 * The error list of an answer, in any of the three shapes the real system uses:
 * `erros: [{Codigo, Descricao, Complemento?}]` (PascalCase, `POST /nfse`),
 * `erro: {codigo, descricao}` (an object, the queries) and `erro: [{codigo, descricao}]` (a list,
 * the events endpoint). Keys are read case-insensitively. Empty when there is none.
 */
export const readSefinMessages = (list: unknown): Array<SefinMessage> => {
  const items = Array.isArray(list) ? list : list !== null && typeof list === "object" ? [list] : []
  return items.flatMap((item): Array<SefinMessage> => {
    if (item === null || typeof item !== "object") return []
    const field = (name: string): string | undefined => {
      const entry = Object.entries(item).find(([key]) => key.toLowerCase() === name)
      const value = entry?.[1]
      return typeof value === "string" ? value : typeof value === "number" ? String(value) : undefined
    }
    const code = field("codigo")
    const message = field("descricao") ?? field("mensagem")
    if (code === undefined && message === undefined) return []
    const complement = field("complemento")
    return [{ code: code ?? "", message: message ?? "", ...(complement === undefined ? {} : { complement }) }]
  })
}

export const readSefinErrors = (body: unknown): Array<SefinMessage> => {
  if (body === null || typeof body !== "object") return []
  const record = body as Record<string, unknown>
  return [...readSefinMessages(record["erros"]), ...readSefinMessages(record["erro"])]
}
