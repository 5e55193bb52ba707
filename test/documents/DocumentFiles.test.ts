/**
 * A document's files in simulator mode (SPEC §6 "Files"): the NFS-e XML as the authority returned
 * it and the DANFSe the service renders from it, for a key with `documents:read` (its environment) and for
 * a member's session (either environment); `409 invalid_state` before authorization; a cancelled
 * note's files stay and say so.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeApp } from "../../src/App.js"
import type { AppConfigShape } from "../../src/Config.js"
import { Document } from "../../src/domain/Document.js"
import { addMember, expectError } from "../support/accounts.js"
import { missingValues, pdfText } from "../support/DanfseText.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import {
  bytesRequest,
  client,
  databaseLayer,
  httpServerTest,
  rawRequest,
  testConfig,
  type TestDatabase,
  testDatabases
} from "../support/TestApp.js"
import { hasTool } from "../support/tools.js"

const POPPLER = hasTool("pdftoppm") && hasTool("pdftotext")

const fast: Partial<AppConfigShape> = {
  loginRateLimit: { perMinute: 100_000 },
  rateLimit: { perSecond: 100_000, burst: 100_000 },
  queue: { instanceId: "t", shutdownGrace: Duration.seconds(1) },
  issuance: { concurrency: 4, pollInterval: Duration.millis(20), lease: Duration.seconds(60) },
  retry: { baseDelay: Duration.millis(10), maxDelay: Duration.millis(50), window: Duration.seconds(5) }
}

const appOn = (database: TestDatabase) =>
  makeApp(testConfig(fast), databaseLayer(database)).pipe(Layer.provideMerge(httpServerTest))

const decodeDocument = Schema.decodeUnknownSync(Schema.toCodecJson(Document))

const invoice = (notes?: string) => ({
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "João da Conceição Araújo" },
  service: {
    code: "010101",
    nbs_code: "115013000",
    description: "Consultoria em segurança da informação",
    municipality_code: "3550308"
  },
  amounts: { services: 123456, iss_rate: "5.00" },
  ...(notes === undefined ? {} : { notes })
})

const issued = (token: string, notes?: string) =>
  Effect.gen(function*() {
    const response = yield* rawRequest("POST", "/v1/documents", { token, body: invoice(notes) })
    expect(response.status, response.text).toBe(202)
    return String(response.json?.["id"])
  })

const settled = (token: string, id: string, until: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 400; i++) {
      const document = decodeDocument((yield* rawRequest("GET", `/v1/documents/${id}`, { token })).json)
      if (until.includes(document.status)) return document
      yield* Effect.sleep(Duration.millis(25))
    }
    return yield* Effect.die(`document ${id} did not reach ${until.join("/")}`)
  })

/** The text of a PDF's first page, and its PNG rendering (poppler-utils). */
const pdfPage = (pdf: Uint8Array) => {
  const dir = mkdtempSync(join(tmpdir(), "etd-danfse-"))
  writeFileSync(join(dir, "note.pdf"), pdf)
  execFileSync("pdftoppm", [
    "-png",
    "-r",
    "50",
    "-f",
    "1",
    "-l",
    "1",
    "-singlefile",
    join(dir, "note.pdf"),
    join(dir, "page")
  ])
  const png = readFileSync(join(dir, "page.png"))
  const text = execFileSync("pdftotext", ["-layout", join(dir, "note.pdf"), "-"], { encoding: "utf8" })
  return { png, text }
}

const bytesOf = (token: string, path: string) => bytesRequest(path, token)

for (const database of testDatabases) {
  layer(appOn(database), { timeout: 120_000, excludeTestServices: true })(
    `document files on the simulator (${database})`,
    (it) => {
      it.effect("an authorized note's XML and DANFSe, by key and by member's session; another tenant and a key without the scope are refused", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner("arquivos")
          const test = yield* createKey(owner, "test")
          const id = yield* issued(test.token)
          const document = yield* settled(test.token, id, ["authorized"])
          const accessKey = document.authority!.access_key

          for (const path of [`/v1/documents/${id}/xml`, `/v1/tenants/${owner.tenantId}/documents/${id}/xml`]) {
            const xml = yield* rawRequest("GET", path, { token: test.token })
            expect(xml.status, xml.text).toBe(200)
            expect(xml.headers["content-type"]).toContain("application/xml")
            expect(xml.headers["content-disposition"]).toBe(`inline; filename="NFSe-${accessKey}.xml"`)
            expect(xml.headers["etd-document-status"]).toBe("authorized")
            // A browser never second-guesses the type of a stored document.
            expect(xml.headers["x-content-type-options"]).toBe("nosniff")
            expect(xml.headers["cache-control"]).toBe("private, no-store")
            expect(xml.headers["content-security-policy"]).toBe("default-src 'none'; sandbox")
            expect(xml.text).toContain(`<infNFSe Id="NFS${accessKey}"`)
            expect(xml.text).toContain(`<nNFSe>${document.authority!.nfse_number}</nNFSe>`)
            expect(xml.text).toContain("João da Conceição Araújo")
          }

          // The typed client downloads both, with their headers.
          const typed = yield* client(test.token)
          const xmlFile = yield* typed.documents.xmlForKey({ params: { docId: id } })
          expect(xmlFile.body).toContain(`<infNFSe Id="NFS${accessKey}"`)
          expect(xmlFile.headers["etd-document-status"]).toBe("authorized")
          const pdfFile = yield* typed.documentFiles.pdf({ params: { tenantId: owner.tenantId, docId: id } })
          expect(new TextDecoder().decode(pdfFile.body.subarray(0, 5))).toBe("%PDF-")

          const session = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}/documents/${id}/pdf`, {
            token: owner.session
          })
          expect(session.status).toBe(200)
          expect(session.headers["content-type"]).toContain("application/pdf")
          expect(session.text.startsWith("%PDF-")).toBe(true)

          // A member of any role reads files: the dashboard shows them to developers too.
          const developer = yield* addMember(owner, "developer")
          const asDeveloper = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}/documents/${id}/xml`, {
            token: developer.session
          })
          expect(asDeveloper.status).toBe(200)

          const stranger = yield* registerOwner("estranho")
          expectError(
            yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}/documents/${id}/xml`, { token: stranger.session }),
            404,
            "not_found"
          )
          const strangerKey = yield* createKey(stranger, "test")
          expectError(
            yield* rawRequest("GET", `/v1/documents/${id}/xml`, { token: strangerKey.token }),
            404,
            "not_found"
          )

          const writeOnly = yield* createKey(owner, "test", ["documents:write"])
          expectError(
            yield* rawRequest("GET", `/v1/documents/${id}/pdf`, { token: writeOnly.token }),
            403,
            "insufficient_scope"
          )
          expectError(
            yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}/documents/${id}/pdf`, { token: writeOnly.token }),
            403,
            "insufficient_scope"
          )
          // A live key does not see test documents; the session sees both.
          const live = yield* createKey(owner, "live")
          expectError(yield* rawRequest("GET", `/v1/documents/${id}/xml`, { token: live.token }), 404, "not_found")
        }))

      it.effect("a note authorized before its XML was kept is asked of the authority once, then kept", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner("legado")
          const test = yield* createKey(owner, "test")
          const id = yield* issued(test.token)
          const document = yield* settled(test.token, id, ["authorized"])
          const first = yield* rawRequest("GET", `/v1/documents/${id}/xml`, { token: test.token })
          const sql = yield* SqlClient.SqlClient
          yield* sql`DELETE FROM document_files WHERE document_id = ${id}`
          const again = yield* rawRequest("GET", `/v1/documents/${id}/xml`, { token: test.token })
          expect(again.status).toBe(200)
          expect(again.text).toBe(first.text)
          expect(again.text).toContain(document.authority!.access_key)
          const kept = yield* sql<
            { readonly n: number }
          >`SELECT count(*)::int AS n FROM document_files WHERE document_id = ${id}`
          expect(kept[0]!.n).toBe(1)
        }))

      it.effect("no files before authorization, nor for a rejected note: 409 invalid_state", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner("sem-arquivos")
          const test = yield* createKey(owner, "test")
          const id = yield* issued(test.token, "simulate:reject")
          yield* settled(test.token, id, ["rejected"])
          for (const kind of ["xml", "pdf"]) {
            expectError(
              yield* rawRequest("GET", `/v1/documents/${id}/${kind}`, { token: test.token }),
              409,
              "invalid_state"
            )
          }
          expectError(
            yield* rawRequest("GET", `/v1/documents/doc_${"0".repeat(26)}/xml`, { token: test.token }),
            404,
            "not_found"
          )
        }))

      it.effect.skipIf(!POPPLER)(
        "the DANFSe renders (pdftoppm) with every value of the note's XML, and says CANCELADA once cancelled (needs poppler-utils)",
        () =>
          Effect.gen(function*() {
            const owner = yield* registerOwner("danfse")
            const test = yield* createKey(owner, "test")
            const id = yield* issued(test.token, "Pedido 4711")
            const document = yield* settled(test.token, id, ["authorized"])
            const pdf = yield* bytesOf(test.token, `/v1/documents/${id}/pdf`)
            expect(pdf.status).toBe(200)
            const before = pdfPage(pdf.bytes)
            expect(before.png.subarray(1, 4).toString()).toBe("PNG")
            const flat = before.text.replace(/\s+/g, "")
            expect(flat).toContain(document.authority!.access_key)
            expect(before.text).toContain("João da Conceição Araújo")
            expect(before.text).toContain("1.234,56")
            expect(before.text).toContain("SEM VALIDADE JURÍDICA")
            expect(before.text).not.toContain("CANCELADA")
            // Every value of the note the simulator authorized, read back from the page (its places named).
            const nfseXml = (yield* rawRequest("GET", `/v1/documents/${id}/xml`, { token: test.token })).text
            expect(nfseXml).toContain("<xLocEmi>São Paulo</xLocEmi>")
            expect(missingValues(nfseXml, pdfText(pdf.bytes))).toEqual([])

            const cancel = yield* rawRequest("POST", `/v1/documents/${id}/cancel`, {
              token: test.token,
              body: { reason_code: "issue_error", reason: "Valor errado na nota, reemitindo." }
            })
            expect(cancel.status).toBe(202)
            yield* settled(test.token, id, ["cancelled"])
            const xml = yield* rawRequest("GET", `/v1/documents/${id}/xml`, { token: test.token })
            expect(xml.headers["etd-document-status"]).toBe("cancelled")
            const after = pdfPage((yield* bytesOf(test.token, `/v1/documents/${id}/pdf`)).bytes)
            expect(after.text).toContain("CANCELADA")
            expect(missingValues(nfseXml, pdfText((yield* bytesOf(test.token, `/v1/documents/${id}/pdf`)).bytes)))
              .toEqual([])
          })
      )
    }
  )
}
