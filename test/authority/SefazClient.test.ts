/**
 * The SEFAZ client against the local SEFAZ, over real mutual TLS: a note authorized with a valid
 * nfeProc, an NFC-e online and in offline contingency, refusals typed final or transient, and the
 * paths that must never make a second note: a retry after a lost answer adopts the authorization
 * (204 → lookup), and a timeout is reconciled by the lookup of the same key.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Option, Redacted, Result, Scope } from "effect"
import { loadCancellationSchemas } from "../../src/authority/sefaz/NfeCancellation.js"
import { loadNfeSchemas, validateNfe } from "../../src/authority/sefaz/NfeXsd.js"
import { type GoodsSubmission, makeSefazClient } from "../../src/authority/sefaz/SefazClient.js"
import { type Exchange, makeSefinTransport } from "../../src/authority/sefin/SefinTransport.js"
import { type LocalSefaz, startLocalSefaz } from "../../tools/local-authority/LocalSefaz.js"
import { makePkcs12 } from "../support/certificates.js"
import { counterSale, interstateSale, nfeInput } from "../support/NfeXml.js"

const certificate = makePkcs12({
  cn: "DISTRIBUIDORA PAULISTA:11222333000181",
  cnpjOid: "11222333000181",
  password: "x"
})
const identity = {
  credentialId: "crd_test",
  certificatePem: certificate.certificatePem,
  privateKeyPem: Redacted.make(certificate.privateKeyPem)
}

let sefaz: LocalSefaz
let scope: Scope.Closeable
let exchange: Exchange

beforeAll(async () => {
  await Promise.all([loadNfeSchemas(), loadCancellationSchemas()])
  sefaz = await startLocalSefaz({ unavailableTimes: 2, timeoutAfterMs: 2_000 })
  scope = await Effect.runPromise(Scope.make())
  exchange = await Effect.runPromise(Scope.provide(makeSefinTransport(sefaz.caPem, "SEFAZ"), scope))
})
afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await sefaz.close()
})

const client = (timeout = 5_000) =>
  makeSefazClient({ exchange, timeout, addressOf: (_model, _state, _environment, service) => sefaz.addressOf(service) })

const submission = (overrides: Partial<GoodsSubmission>): GoodsSubmission => nfeInput(overrides)

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.result(effect))

describe("the SEFAZ client", () => {
  it("authorizes an NF-e: its protocol, and an nfeProc the official schema accepts", async () => {
    const result = await run(client().submit(submission({ number: 3001 }), identity))
    const authorization = Result.getOrThrow(result)
    expect(authorization.protocol).toMatch(/^135[0-9]{12}$/)
    expect(validateNfe("nfeProc", authorization.xml)).toEqual(Result.void)
    expect(sefaz.notes().filter((note) => note.number === 3001)).toHaveLength(1)
  })

  it("sent again, the same note is adopted from the authority (204 → lookup): one note, one protocol", async () => {
    const first = Result.getOrThrow(await run(client().submit(submission({ number: 3002 }), identity)))
    const again = Result.getOrThrow(await run(client().submit(submission({ number: 3002 }), identity)))
    expect(again.protocol).toBe(first.protocol)
    expect(again.accessKey).toBe(first.accessKey)
    expect(sefaz.notes().filter((note) => note.number === 3002)).toHaveLength(1)
  })

  it("authorizes an NFC-e online and one in offline contingency, each with its QR code", async () => {
    const online = Result.getOrThrow(
      await run(client().submit(submission({ number: 3003, request: counterSale }), identity))
    )
    expect(online.xml).toMatch(
      /<qrCode>https:\/\/www\.homologacao\.nfce\.fazenda\.sp\.gov\.br\/qrcode\?p=[0-9]{44}\|3\|2<\/qrCode>/
    )
    const offline = Result.getOrThrow(
      await run(
        client().submit(
          submission({
            number: 3004,
            request: counterSale,
            contingency: { since: new Date(), reason: "Sem conexão com a SEFAZ" }
          }),
          identity
        )
      )
    )
    expect(offline.accessKey[34]).toBe("9")
    expect(validateNfe("nfeProc", offline.xml)).toEqual(Result.void)
    // Emitted on 10/11 and transmitted weeks later: authorized all the same, late (150), and found so.
    expect(offline.xml).toContain("<cStat>150</cStat>")
    const late = submission({
      number: 3004,
      request: counterSale,
      contingency: { since: new Date(), reason: "Sem conexão com a SEFAZ" }
    })
    expect(Option.map(Result.getOrThrow(await run(client().lookup(late, identity))), (found) => found.protocol))
      .toEqual(Option.some(offline.protocol))
    // Transmitted within the day: authorized in time (100).
    const now = new Date()
    const inTime = Result.getOrThrow(
      await run(
        client().submit(
          submission({
            number: 3009,
            request: counterSale,
            issuedAt: now,
            contingency: { since: now, reason: "Sem conexão com a SEFAZ" }
          }),
          identity
        )
      )
    )
    expect(inTime.xml).toContain("<cStat>100</cStat>")
  })

  it("transmits an offline note as it was issued, byte for byte, not a note rebuilt now", async () => {
    const issuedAt = new Date()
    const asIssued = submission({
      number: 3014,
      request: counterSale,
      issuedAt,
      contingency: { since: issuedAt, reason: "Queda de energia no caixa 2" }
    })
    const issued = Result.getOrThrow(await run(client().prepare(asIssued, identity)))
    // What the service would build now differs (another reason): the stored note is what goes.
    const now = { ...asIssued, contingency: { since: issuedAt, reason: "Sem conexão com a SEFAZ autorizadora" } }
    const authorized = Result.getOrThrow(await run(client().submit(now, identity, issued.note)))
    expect(authorized.accessKey).toBe(issued.accessKey)
    expect(authorized.xml).toContain(issued.note.replace(/^<\?xml[^>]*\?>/, ""))
    expect(authorized.xml).toContain("Queda de energia no caixa 2")
  })

  it("types a business refusal as final (AuthorityRejected, with the code) and a 503 as transient", async () => {
    const rejected = await run(
      client().submit(submission({ number: 3005, request: { ...interstateSale, notes: "simulate:reject" } }), identity)
    )
    expect(Result.isFailure(rejected) && rejected.failure).toMatchObject({ _tag: "AuthorityRejected", code: "999" })
    const busy = submission({ number: 3006, request: { ...interstateSale, notes: "simulate:unavailable" } })
    const first = await run(client().submit(busy, identity))
    expect(Result.isFailure(first) && first.failure).toMatchObject({ _tag: "AuthorityUnavailable", status: 503 })
    await run(client().submit(busy, identity))
    expect(Result.isSuccess(await run(client().submit(busy, identity)))).toBe(true)
  })

  it("a timeout is reconciled by the lookup of the same key, and a retry adopts it: never a second note", async () => {
    const slow = submission({ number: 3007, request: { ...interstateSale, notes: "simulate:timeout" } })
    const timedOut = await run(client(400).submit(slow, identity))
    expect(Result.isFailure(timedOut) && timedOut.failure._tag).toBe("AuthorityTimeout")
    const found = Result.getOrThrow(await run(client().lookup(slow, identity)))
    expect(Option.isSome(found)).toBe(true)
    const record = sefaz.notes().find((note) => note.number === 3007)!
    expect(Option.getOrThrow(found).protocol).toBe(record.protocol)
    expect(validateNfe("nfeProc", Option.getOrThrow(found).xml)).toEqual(Result.void)
    const retried = Result.getOrThrow(await run(client().submit(slow, identity)))
    expect(retried.protocol).toBe(record.protocol)
    expect(sefaz.notes().filter((note) => note.number === 3007)).toHaveLength(1)
  })

  it("cancels a note (110111): registered once, the same event again is done (573), a wrong protocol refused (222)", async () => {
    const note = submission({ number: 3010 })
    const authorization = Result.getOrThrow(await run(client().submit(note, identity)))
    const request = {
      accessKey: authorization.accessKey,
      protocol: authorization.protocol,
      reason: "Pedido cancelado pelo cliente antes da entrega.",
      requestedAt: new Date()
    }
    const wrong = await run(client().cancel(note, { ...request, protocol: "135000000000000" }, identity))
    expect(Result.isFailure(wrong) && wrong.failure).toMatchObject({ _tag: "AuthorityRejected", code: "222" })
    const cancelled = Result.getOrThrow(await run(client().cancel(note, request, identity)))
    const record = sefaz.notes().find((candidate) => candidate.number === 3010)!
    expect(cancelled.protocol).toBe(record.cancellation?.protocol)
    // Its answer lost, the cancellation is sent again: the SEFAZ's duplicity of the event is done.
    const again = Result.getOrThrow(await run(client().cancel(note, request, identity)))
    expect(again.protocol).toBeNull()
    // Looked up, a cancelled note (101) is still the note that was authorized.
    const found = Result.getOrThrow(await run(client().lookup(note, identity)))
    expect(Option.getOrThrow(found).protocol).toBe(authorization.protocol)
  })

  it("finds nothing for a note never sent, and reports the authorizer in operation", async () => {
    expect(Result.getOrThrow(await run(client().lookup(submission({ number: 3999 }), identity)))).toEqual(Option.none())
    const status = Result.getOrThrow(await run(client().status("55", "SP", "test", identity, "35")))
    expect(status).toEqual({ inOperation: true, code: "107", reason: "Serviço em Operação" })
  })

  it("says when the authority certainly never took the note (unreached): a paused service, a refused connection; not a 503 nor a timeout", async () => {
    const paused = await run(
      client().submit(submission({ number: 3010, request: { ...counterSale, notes: "simulate:offline" } }), identity)
    )
    expect(Result.isFailure(paused) && paused.failure).toMatchObject({ _tag: "AuthorityUnavailable", unreached: true })
    const busy = await run(
      client().submit(
        submission({ number: 3011, request: { ...interstateSale, notes: "simulate:unavailable" } }),
        identity
      )
    )
    expect(Result.isFailure(busy) && busy.failure).toMatchObject({ status: 503 })
    expect(Result.isFailure(busy) && busy.failure._tag === "AuthorityUnavailable" && busy.failure.unreached).toBeFalsy()
    // Nothing listens on port 9 of the loopback: the connection is refused before anything is sent.
    const nowhere = makeSefazClient({ exchange, timeout: 5_000, addressOf: () => "https://127.0.0.1:9/ws" })
    const refused = await run(nowhere.submit(submission({ number: 3012 }), identity))
    expect(Result.isFailure(refused) && refused.failure).toMatchObject({
      _tag: "AuthorityUnavailable",
      unreached: true
    })
    const slow = submission({ number: 3013, request: { ...interstateSale, notes: "simulate:timeout" } })
    const timedOut = await run(client(300).submit(slow, identity))
    expect(Result.isFailure(timedOut) && timedOut.failure._tag).toBe("AuthorityTimeout")
  })

  it("never sends a note the schema refuses (our bug): NoteNotValid, and the authority saw nothing", async () => {
    const before = sefaz.counts().NfeAutorizacao ?? 0
    const broken = submission({ number: 3008, issuer: { ...nfeInput().issuer, stateRegistration: "IE-INVALIDA" } })
    const result = await run(client().submit(broken, identity))
    expect(Result.isFailure(result) && result.failure._tag).toBe("NoteNotValid")
    expect(sefaz.counts().NfeAutorizacao ?? 0).toBe(before)
  })
})
