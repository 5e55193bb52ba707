/**
 * The provider's registration in what is sent and issued (SPEC §5, issue 27): over mutual TLS to the
 * local authority, the DPS is issued in the provider's municipality (cLocEmi) wherever the service
 * was provided, `prest` carries IM (only when declared), phone, e-mail and the declared tax regime,
 * and the NFS-e's `emit` block names the provider as the register knows it. On the simulator
 * (live keys here), the NFS-e carries what the tenant declared and passes the official schema.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Result } from "effect"
import { readDps } from "../../src/authority/sefin/DpsRead.js"
import { readNfse } from "../../src/authority/sefin/Nfse.js"
import { signEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { loadSchemas, validateXml } from "../../src/authority/xml/Xsd.js"
import { makePkcs12 } from "../support/certificates.js"
import { createKey } from "../support/fixtures.js"
import { Authority, certifiedTenant, nationalApp, settle } from "../support/NationalApp.js"
import { completeRegistration } from "../support/registration.js"
import { consultingService } from "../support/samples.js"
import { rawRequest, testDatabases } from "../support/TestApp.js"

/** A service provided in Rio de Janeiro by a provider established in São Paulo. */
const invoice = (notes: string) => ({
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria da Silva" },
  service: { ...consultingService, municipality_code: "3304557" },
  // An ME/EPP informs no rate when nothing is withheld: the ISS is paid in the DAS.
  amounts: { services: 100_000 },
  notes
})

const signer = makePkcs12({ cn: "AUTORIDADE TESTE:00394460005887", cnpjOid: "00394460005887", password: "x" })

for (const database of testDatabases) {
  layer(nationalApp(database, { callTimeout: Duration.seconds(5) }), { timeout: 300_000, excludeTestServices: true })(
    `the provider's registration in the DPS and the NFS-e (${database})`,
    (it) => {
      it.effect("cLocEmi is the provider's municipality, IM goes only when declared, emit carries the registration", () =>
        Effect.gen(function*() {
          const local = yield* Authority
          const { owner, taxId, token } = yield* certifiedTenant("registro")
          const declared = yield* rawRequest("PATCH", `/v1/tenants/${owner.tenantId}`, {
            token: owner.session,
            body: {
              simples_nacional: "me_epp",
              registration: {
                municipal_registration: "51034401",
                simples_nacional_apportionment: "federal_in_simples",
                special_regime: "professional_society"
              }
            }
          })
          expect(declared.status, declared.text).toBe(200)

          const issue = (notes: string) =>
            Effect.gen(function*() {
              const accepted = yield* rawRequest("POST", "/v1/documents", { token, body: invoice(notes) })
              expect(accepted.status, accepted.text).toBe(202)
              const document = yield* settle(token, String(accepted.json?.["id"]), ["authorized", "rejected", "failed"])
              expect(document.status, JSON.stringify(document.last_error ?? document.rejection)).toBe("authorized")
              return local.submissions().find((s) => s.accessKey === document.authority!.access_key)!
            })

          const withIm = yield* issue("first")
          const dps = Result.getOrThrow(readDps(withIm.signedDpsXml))
          expect(dps.municipalityCode).toBe("3550308")
          expect(dps.service.municipalityCode).toBe("3304557")
          expect(dps.id.slice(3, 10)).toBe("3550308")
          expect(withIm.accessKey.slice(0, 7)).toBe("3550308")
          expect(dps.issuer).toEqual({
            taxId,
            simplesNacional: "3",
            municipalRegistration: "51034401",
            phone: completeRegistration.phone,
            email: completeRegistration.email
          })
          expect(withIm.signedDpsXml).toContain(
            "<regTrib><opSimpNac>3</opSimpNac><regApTribSN>2</regApTribSN><regEspTrib>6</regEspTrib></regTrib>"
          )
          // tpEmit 1: the system takes name and address from its register, and refuses them in the DPS.
          expect(withIm.signedDpsXml).not.toMatch(/<prest>(?:(?!<\/prest>).)*<(?:xNome|end)>/)

          const note = Result.getOrThrow(readNfse(withIm.nfseXml))
          const address = completeRegistration.address!
          expect(note.issuer).toEqual({
            taxId,
            name: completeRegistration.legal_name,
            tradeName: completeRegistration.trade_name,
            municipalRegistration: "51034401",
            municipalityName: expect.any(String),
            address: {
              street: address.street,
              number: address.number,
              district: address.district,
              municipalityCode: "3550308",
              state: "SP",
              postalCode: address.postal_code
            },
            email: completeRegistration.email,
            phone: completeRegistration.phone
          })

          // Without an IM declared, none is sent (the system refuses one it does not know).
          yield* rawRequest("PATCH", `/v1/tenants/${owner.tenantId}`, {
            token: owner.session,
            body: { registration: { municipal_registration: null } }
          })
          const withoutIm = yield* issue("second")
          expect(withoutIm.signedDpsXml).not.toContain("<IM>")
          expect(Result.getOrThrow(readNfse(withoutIm.nfseXml)).issuer.municipalRegistration).toBeUndefined()
        }))

      it.effect("the simulator's NFS-e carries the declared provider and the NBS code, and passes the official schema", () =>
        Effect.gen(function*() {
          yield* Effect.promise(loadSchemas)
          const { owner, taxId } = yield* certifiedTenant("simulado")
          const live = yield* createKey(owner, "live")
          const accepted = yield* rawRequest("POST", "/v1/documents", { token: live.token, body: invoice("live") })
          expect(accepted.status, accepted.text).toBe(202)
          const id = String(accepted.json?.["id"])
          const document = yield* settle(live.token, id, ["authorized", "rejected", "failed"])
          expect(document.status).toBe("authorized")
          const xml = yield* rawRequest("GET", `/v1/documents/${id}/xml`, { token: live.token })
          expect(xml.status).toBe(200)
          const note = Result.getOrThrow(readNfse(xml.text))
          expect(note.service.nbsCode).toBe("115013000")
          expect(note.issuer.name).toBe(completeRegistration.legal_name)
          expect(note.issuer.tradeName).toBe(completeRegistration.trade_name)
          expect(note.issuer.address?.municipalityCode).toBe("3550308")
          expect(note.issuer.address?.postalCode).toBe("01310100")
          expect(note.issuer.phone).toBe(completeRegistration.phone)
          expect(note.issuer.taxId).toBe(taxId)
          expect(xml.text).toContain("<cLocEmi>3550308</cLocEmi>")
          expect(xml.text).toContain("<cLocPrestacao>3304557</cLocPrestacao>")
          // The simulator holds no certificate: signed here, the note is what the schema requires.
          const signed = signEnveloped(xml.text, {
            element: "infNFSe",
            privateKeyPem: signer.privateKeyPem,
            certificatePem: signer.certificatePem
          })
          expect(validateXml("NFSe", signed)).toEqual(Result.void)
        }))
    }
  )
}
