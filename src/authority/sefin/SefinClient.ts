/**
 * The client of the national NFS-e system (SEFIN Nacional, and the ADN DANFSe API): its operations,
 * JSON bodies carrying gzip + base64 XML, and the system's answers read as they really are (three
 * error shapes, `alertas: null`, an HTML 404 for a wrong path; see
 * ../shared/reference/nfse-nacional/README.md). It builds no documents: it moves signed XML and
 * hands back what came back, with failures typed as final or transient (SefinErrors.ts) for the
 * adapter to map to the pipeline's retry rules. The connections, mutual TLS with the tenant's A1
 * certificate, are SefinTransport.ts's.
 */
import { Duration, Effect, Option, Schema, type Scope } from "effect"
import { gunzipSync, gzipSync } from "node:zlib"
import { currentTraceparent } from "../../telemetry/TraceContext.js"
import {
  readSefinErrors,
  readSefinMessages,
  type SefinError,
  type SefinMessage,
  SefinRefused,
  SefinTimeout,
  SefinUnavailable
} from "./SefinErrors.js"
import { type Answer, type ClientIdentity, makeSefinTransport } from "./SefinTransport.js"

export interface SefinEndpoints {
  /** e.g. https://sefin.nfse.gov.br/SefinNacional */
  readonly sefinUrl: string
  /** e.g. https://adn.nfse.gov.br/danfse */
  readonly danfseUrl: string
  /** Extra PEM bundle trusted for the authority's TLS, on top of Node's default roots. */
  readonly ca?: string | undefined
}

export interface DpsSubmitted {
  /** The 50-digit access key (chaveAcesso). */
  readonly accessKey: string
  /** The NFS-e XML, unpacked, exactly as the authority sent it. */
  readonly nfseXml: string
  /** `dataHoraProcessamento` as sent, e.g. "2026-01-22T14:42:34.4777475-03:00". */
  readonly processedAt: string
  /** `alertas` (null in real answers: empty here). */
  readonly alerts: ReadonlyArray<SefinMessage>
}

export interface SefinClient {
  /** `POST /nfse` with the signed DPS. */
  readonly submitDps: (identity: ClientIdentity, signedDpsXml: string) => Effect.Effect<DpsSubmitted, SefinError>
  /** `GET /dps/{id}`: None only when the authority says so in JSON (E2404). */
  readonly findDps: (
    identity: ClientIdentity,
    dpsId: string
  ) => Effect.Effect<Option.Option<{ readonly accessKey: string }>, SefinError>
  /** `GET /nfse/{chave}`: None only when the authority says so in JSON (E2401). */
  readonly getNfse: (
    identity: ClientIdentity,
    accessKey: string
  ) => Effect.Effect<Option.Option<{ readonly nfseXml: string }>, SefinError>
  /** `POST /nfse/{chave}/eventos` with the signed pedRegEvento; the registered event's XML. */
  readonly registerEvent: (
    identity: ClientIdentity,
    accessKey: string,
    signedPedRegEventoXml: string
  ) => Effect.Effect<{ readonly eventXml: string }, SefinError>
  /**
   * `GET /nfse/{chave}/eventos/{tipo}/{seq}`: the registered event's XML; None when the authority
   * says it has none (a JSON 404, `{}` as produção restrita answers, or with an error list).
   */
  readonly findEvent: (
    identity: ClientIdentity,
    accessKey: string,
    eventType: string,
    sequence: number
  ) => Effect.Effect<Option.Option<{ readonly eventXml: string }>, SefinError>
  /** `GET {danfseUrl}/{chave}`: the DANFSe PDF. */
  readonly getDanfse: (identity: ClientIdentity, accessKey: string) => Effect.Effect<Uint8Array, SefinError>
}

// Far above any real NFS-e or event unpacked (tens of KiB), and small enough that a broken or
// hostile endpoint cannot make us hold much.
const MAX_UNPACKED_XML_BYTES = 2 * 1024 * 1024

const gzipBase64 = (xml: string): string => gzipSync(Buffer.from(xml, "utf8")).toString("base64")

const gunzipBase64 = (what: string, b64: string): Effect.Effect<string, SefinUnavailable> =>
  Effect.try({
    try: () => gunzipSync(Buffer.from(b64, "base64"), { maxOutputLength: MAX_UNPACKED_XML_BYTES }).toString("utf8"),
    catch: () => new SefinUnavailable({ message: `SEFIN answered with ${what} that does not unpack (gzip + base64)` })
  })

/** The answer as JSON when it is JSON (whatever its content type says), else undefined. */
const jsonOf = (answer: Answer): unknown => {
  const text = answer.body.toString("utf8").trim()
  if (!text.startsWith("{")) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const trimSlash = (url: string) => url.replace(/\/+$/, "")

const SubmitAnswer = Schema.Struct({
  chaveAcesso: Schema.String,
  nfseXmlGZipB64: Schema.String,
  dataHoraProcessamento: Schema.String,
  alertas: Schema.optional(Schema.NullOr(Schema.Unknown))
})
const DpsAnswer = Schema.Struct({ chaveAcesso: Schema.String })
const NfseAnswer = Schema.Struct({ nfseXmlGZipB64: Schema.String })
const EventAnswer = Schema.Struct({ eventoXmlGZipB64: Schema.String })
/**
 * An event query's answer: the Swagger's `eventoXmlGZipB64`, or the list produção restrita answers
 * with (`eventos[].arquivoXml`, gzip + base64), whichever comes.
 */
const FoundEvents = Schema.Union([
  EventAnswer,
  Schema.Struct({ eventos: Schema.NonEmptyArray(Schema.Struct({ arquivoXml: Schema.String })) })
])

export const makeSefinClient = (options: {
  readonly endpoints: SefinEndpoints
  readonly timeout: Duration.Input
}): Effect.Effect<SefinClient, never, Scope.Scope> =>
  Effect.gen(function*() {
    const sefinUrl = trimSlash(options.endpoints.sefinUrl)
    const danfseUrl = trimSlash(options.endpoints.danfseUrl)
    const timeoutMs = Duration.toMillis(options.timeout)
    const exchange = yield* makeSefinTransport(options.endpoints.ca)

    /** The exchange bounded by the timeout, with every non-2xx answer classified; `absent` codes give None. */
    const call = <A>(
      operation: string,
      identity: ClientIdentity,
      request: {
        readonly method: "GET" | "POST"
        readonly url: string
        readonly json?: unknown
        readonly accept?: string
      },
      onSuccess: (answer: Answer) => Effect.Effect<A, SefinUnavailable>,
      absentCodes: ReadonlyArray<string> = [],
      /** A JSON 404 without errors (`{}`) means absent too: the event query's answer. */
      emptyNotFoundIsAbsent = false
    ): Effect.Effect<Option.Option<A>, SefinError> =>
      Effect.flatMap(currentTraceparent, (traceparent) =>
        exchange(identity, { accept: "application/json", ...request, traceparent })).pipe(
          Effect.timeoutOrElse({
            duration: timeoutMs,
            orElse: () =>
              Effect.fail(new SefinTimeout({ message: `SEFIN did not answer ${operation} within ${timeoutMs} ms` }))
          }),
          Effect.flatMap((answer): Effect.Effect<Option.Option<A>, SefinError> => {
            if (answer.status >= 200 && answer.status < 300) {
              return Effect.map(onSuccess(answer), Option.some)
            }
            const json = jsonOf(answer)
            const errors = readSefinErrors(json)
            if (emptyNotFoundIsAbsent && answer.status === 404 && json !== undefined && errors.length === 0) {
              return Effect.succeedNone
            }
            if (answer.status >= 500 || answer.status === 429) {
              const codes = errors.map((e) =>
                e.code
              ).filter((c) => c !== "")
              return Effect.fail(
                new SefinUnavailable({
                  message: `SEFIN answered ${operation} with ${answer.status}${
                    codes.length > 0 ? ` (${codes.join(", ")})` : ""
                  }`,
                  status: answer.status
                })
              )
            }
            if (answer.status >= 400 && errors.length > 0) {
              if (answer.status === 404 && errors.some((e) => absentCodes.includes(e.code))) return Effect.succeedNone
              const dpsId =
                json !== null && typeof json === "object" && "idDPS" in json && typeof json.idDPS === "string"
                  ? json.idDPS
                  : undefined
              return Effect.fail(
                new SefinRefused({ status: answer.status, errors, ...(dpsId === undefined ? {} : { dpsId }) })
              )
            }
            // A redirect, an HTML page (the 404 of a wrong base path), a 4xx without an error list: not the
            // authority's word on this request, so nothing final can be concluded from it.
            const kind = json === undefined ? "a non-JSON answer" : "an answer without an error list"
            return Effect.fail(
              new SefinUnavailable({
                message: `SEFIN answered ${operation} with ${answer.status} and ${kind}`,
                status: answer.status
              })
            )
          })
        )

    const decode =
      <S extends Schema.ConstraintDecoder<unknown>>(schema: S, operation: string) =>
      (answer: Answer): Effect.Effect<S["Type"], SefinUnavailable> => {
        const decoded = Schema.decodeUnknownOption(schema)(jsonOf(answer))
        return Option.isSome(decoded)
          ? Effect.succeed(decoded.value)
          : Effect.fail(
            new SefinUnavailable({
              message: `SEFIN answered ${operation} with ${answer.status} but not the expected JSON`,
              status: answer.status
            })
          )
      }

    // Only reached for 2xx answers of operations that have no None case.
    const required = <A>(option: Option.Option<A>): A => Option.getOrThrow(option)

    const submitDps = Effect.fn("SefinClient.submitDps")(function*(identity: ClientIdentity, signedDpsXml: string) {
      const answer = yield* call("POST /nfse", identity, {
        method: "POST",
        url: `${sefinUrl}/nfse`,
        json: { dpsXmlGZipB64: gzipBase64(signedDpsXml) }
      }, decode(SubmitAnswer, "POST /nfse"))
      const success = required(answer)
      return {
        accessKey: success.chaveAcesso,
        nfseXml: yield* gunzipBase64("an NFS-e", success.nfseXmlGZipB64),
        processedAt: success.dataHoraProcessamento,
        alerts: readSefinMessages(success.alertas)
      } satisfies DpsSubmitted
    })

    const findDps = Effect.fn("SefinClient.findDps")(function*(identity: ClientIdentity, dpsId: string) {
      const answer = yield* call(
        "GET /dps/{id}",
        identity,
        {
          method: "GET",
          url: `${sefinUrl}/dps/${encodeURIComponent(dpsId)}`
        },
        decode(DpsAnswer, "GET /dps/{id}"),
        ["E2404"]
      )
      return Option.map(answer, (found) => ({ accessKey: found.chaveAcesso }))
    })

    const getNfse = Effect.fn("SefinClient.getNfse")(function*(identity: ClientIdentity, accessKey: string) {
      const answer = yield* call(
        "GET /nfse/{chave}",
        identity,
        {
          method: "GET",
          url: `${sefinUrl}/nfse/${encodeURIComponent(accessKey)}`
        },
        decode(NfseAnswer, "GET /nfse/{chave}"),
        ["E2401"]
      )
      if (Option.isNone(answer)) return Option.none<{ readonly nfseXml: string }>()
      return Option.some({ nfseXml: yield* gunzipBase64("an NFS-e", answer.value.nfseXmlGZipB64) })
    })

    const registerEvent = Effect.fn("SefinClient.registerEvent")(
      function*(identity: ClientIdentity, accessKey: string, signedPedRegEventoXml: string) {
        const answer = yield* call("POST /nfse/{chave}/eventos", identity, {
          method: "POST",
          url: `${sefinUrl}/nfse/${encodeURIComponent(accessKey)}/eventos`,
          json: { pedidoRegistroEventoXmlGZipB64: gzipBase64(signedPedRegEventoXml) }
        }, decode(EventAnswer, "POST /nfse/{chave}/eventos"))
        return { eventXml: yield* gunzipBase64("an event", required(answer).eventoXmlGZipB64) }
      }
    )

    const findEvent = Effect.fn("SefinClient.findEvent")(
      function*(identity: ClientIdentity, accessKey: string, eventType: string, sequence: number) {
        const operation = "GET /nfse/{chave}/eventos/{tipo}/{seq}"
        const answer = yield* call(
          operation,
          identity,
          {
            method: "GET",
            url: `${sefinUrl}/nfse/${encodeURIComponent(accessKey)}/eventos/${eventType}/${sequence}`
          },
          decode(FoundEvents, operation),
          ["E2401"],
          true
        )
        if (Option.isNone(answer)) return Option.none<{ readonly eventXml: string }>()
        const packed = "eventoXmlGZipB64" in answer.value
          ? answer.value.eventoXmlGZipB64
          : answer.value.eventos[0].arquivoXml
        return Option.some({ eventXml: yield* gunzipBase64("an event", packed) })
      }
    )

    const getDanfse = Effect.fn("SefinClient.getDanfse")(function*(identity: ClientIdentity, accessKey: string) {
      const answer = yield* call("GET /danfse/{chave}", identity, {
        method: "GET",
        url: `${danfseUrl}/${encodeURIComponent(accessKey)}`,
        accept: "application/pdf"
      }, (answer) =>
        answer.body.subarray(0, 5).toString("latin1") === "%PDF-"
          ? Effect.succeed(new Uint8Array(answer.body))
          : Effect.fail(
            new SefinUnavailable({
              message: `the DANFSe API answered ${answer.status} without a PDF`,
              status: answer.status
            })
          ))
      return required(answer)
    })

    return { submitDps, findDps, getNfse, registerEvent, findEvent, getDanfse } satisfies SefinClient
  })
