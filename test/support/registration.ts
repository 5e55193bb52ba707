/**
 * A complete provider's registration (SPEC §5), in São Paulo: what the fixtures give every tenant so
 * its documents can be issued, and what unit tests pass as a document's issuer.
 */
import type { Registration } from "../../src/domain/Registration.js"

export const completeRegistration: Registration = {
  legal_name: "Prestadora de Servicos de Teste Ltda",
  trade_name: "Prestadora Teste",
  municipal_registration: null,
  state_registration: null,
  address: {
    street: "Avenida Paulista",
    number: "1000",
    complement: null,
    district: "Bela Vista",
    municipality_code: "3550308",
    state: "SP",
    postal_code: "01310100"
  },
  phone: "1133334444",
  email: "fiscal@prestadora.example.com",
  simples_nacional_apportionment: null,
  special_regime: null,
  crt: null
}

/** The issuer of a submission of a tenant with `completeRegistration`. */
export const registeredIssuer = (taxId: string, name = "Prestadora de Servicos de Teste Ltda") => ({
  taxId,
  name,
  municipalityCode: "3550308",
  registration: completeRegistration
})

/** Declares `completeRegistration` for a tenant over plain HTTP (scripts and tests without the typed client). */
export const declareRegistration = async (base: string, tenantId: string, session: string): Promise<void> => {
  const response = await fetch(`${base}/v1/tenants/${tenantId}`, {
    method: "PATCH",
    headers: { "content-type": "application/json", authorization: `Bearer ${session}` },
    body: JSON.stringify({ registration: completeRegistration })
  })
  if (response.status !== 200) {
    throw new Error(`declaring the registration: ${response.status} ${await response.text()}`)
  }
}
