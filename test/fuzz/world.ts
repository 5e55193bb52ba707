/**
 * The tenants the fuzz runs against, built through the API: tenant A, whose owner's session and
 * test key (every scope) authenticate the requests, with one of each resource a path can name (a
 * member, a spare key, a document, a webhook endpoint and its delivery, a credential), and tenant
 * B, whose ids are put in A's paths and whose key knocks on A's doors.
 */
import { randomBytes } from "node:crypto"
import { allScopes } from "../../src/domain/Principal.js"
import { makePkcs12 } from "../support/certificates.js"
import { PASSWORD, uniqueEmail } from "../support/fixtures.js"
import { completeRegistration } from "../support/registration.js"
import { cnpj } from "../support/taxIds.js"
import type { Known } from "./hostile.js"
import { send } from "./send.js"

export interface Tenant {
  readonly tenantId: string
  readonly taxId: string
  readonly email: string
  readonly memberEmail: string
  /** Replaced by `keepSession` when a fuzzed logout ends it. */
  session: string
  readonly key: string
  /** Ids of this tenant's resources, by the path parameter that names them. */
  readonly ids: Readonly<Record<string, ReadonlyArray<string>>>
}

export interface World {
  readonly port: number
  readonly a: Tenant
  readonly b: Tenant
  /**
   * A valid upload for tenant A, its certificate and password, already uploaded once. Only in the
   * long run: making it with openssl and opening it cost seconds the short run does not have.
   */
  readonly certificate: { readonly pkcs12: Uint8Array; readonly password: string } | undefined
  /** The payment provider's signing secret, so some billing events arrive signed. */
  readonly providerSecret: string
  /** Values that mean something to the service, by the field they go in (see `Known`). */
  readonly known: Known
}

/** The world's endpoint never receives anything: `.invalid` names never resolve (RFC 2606). */
const WEBHOOK_URL = "https://fuzz.invalid/hook"

const call = async (port: number, method: string, path: string, token: string | undefined, body?: unknown) => {
  const outcome = await send(port, {
    method,
    path,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    body: body === undefined ? undefined : Buffer.from(JSON.stringify(body))
  }, 30_000)
  if (outcome._tag === "Dropped") throw new Error(`setup ${method} ${path}: ${outcome.reason}`)
  const { status, text } = outcome.response
  if (status >= 300) throw new Error(`setup ${method} ${path}: ${status} ${text.slice(0, 500)}`)
  return text.length === 0 ? undefined : JSON.parse(text)
}

const documentBody = {
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Fuzz Tomador" },
  service: { code: "010101", nbs_code: "115013000", description: "Consultoria", municipality_code: "3550308" },
  amounts: { services: 1000, iss_rate: "2.00" }
}

/** The endpoint's deliveries, once the document's first event has been fanned out to it (a few seconds at most). */
const firstDeliveries = async (port: number, path: string, token: string) => {
  for (let attempt = 0; attempt < 100; attempt++) {
    const page = await call(port, "GET", path, token)
    if (page.data.length > 0) return page
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error("setup: the world's document gave its webhook endpoint no delivery within 10 s")
}

const makeTenant = async (
  port: number,
  label: string,
  taxId: string,
  verifyEmail: (userId: string) => Promise<void>,
  certificate?: { pkcs12: Uint8Array; password: string }
) => {
  const email = uniqueEmail(label)
  const registered = await call(port, "POST", "/v1/auth/register", undefined, {
    email,
    password: PASSWORD,
    name: label,
    tenant: { name: `${label} Ltda`, tax_id: taxId }
  })
  const tenantId: string = registered.tenant.id
  // As a followed verification link would: an unverified owner could not upload the certificate.
  await verifyEmail(registered.user.id)
  const session: string = (await call(port, "POST", "/v1/auth/login", undefined, { email, password: PASSWORD })).token
  const tenantPath = `/v1/tenants/${tenantId}`
  await call(port, "PATCH", tenantPath, session, { registration: completeRegistration })
  const createKey = async (name: string) =>
    call(port, "POST", `${tenantPath}/api-keys`, session, { name, environment: "test", scopes: allScopes })
  const key = await createKey("fuzz")
  // The key the fuzz may rotate and revoke: never the one its requests authenticate with.
  const spare = await createKey("spare")
  const memberEmail = uniqueEmail(`${label}-member`)
  const member = await call(port, "POST", "/v1/auth/register", undefined, { email: memberEmail, password: PASSWORD })
  await verifyEmail(member.user.id)
  // Members join by invitation: the member accepts from their own list (address verified above).
  const joining = await call(port, "POST", `${tenantPath}/invitations`, session, {
    email: memberEmail,
    role: "developer"
  })
  const memberSession: string =
    (await call(port, "POST", "/v1/auth/login", undefined, { email: memberEmail, password: PASSWORD })).token
  await call(port, "POST", `/v1/me/invitations/${joining.id}/accept`, memberSession)
  // One left pending, for the fuzz to resend, revoke and accept.
  const invitation = await call(port, "POST", `${tenantPath}/invitations`, session, {
    email: uniqueEmail(`${label}-invited`),
    role: "admin"
  })
  const endpoint = await call(port, "POST", `${tenantPath}/webhook-endpoints`, key.token, {
    url: WEBHOOK_URL,
    events: ["*"]
  })
  const document = await call(port, "POST", "/v1/documents", key.token, documentBody)
  const deliveries = await firstDeliveries(port, `${tenantPath}/webhook-endpoints/${endpoint.id}/deliveries`, key.token)
  const credential = certificate === undefined ?
    undefined :
    await call(port, "POST", `${tenantPath}/credentials`, session, {
      pkcs12: Buffer.from(certificate.pkcs12).toString("base64"),
      password: certificate.password
    })
  const tenant: Tenant = {
    tenantId,
    taxId,
    email,
    memberEmail,
    session,
    key: key.token,
    ids: {
      tenantId: [tenantId],
      userId: [member.user.id],
      invitationId: [invitation.id],
      keyId: [spare.api_key.id],
      docId: [document.id],
      endpointId: [endpoint.id],
      deliveryId: deliveries.data.map((d: { readonly id: string }) => d.id),
      credId: credential === undefined ? [] : [credential.id]
    }
  }
  return tenant
}

export const makeWorld = async (
  port: number,
  providerSecret: string,
  withCertificate: boolean,
  verifyEmail: (userId: string) => Promise<void>
): Promise<World> => {
  const taxId = cnpj()
  const password = randomBytes(9).toString("base64url")
  const certificate = withCertificate
    ? { pkcs12: makePkcs12({ cn: `FUZZ LTDA:${taxId}`, cnpjOid: taxId, password }).pfx, password }
    : undefined
  const a = await makeTenant(port, "fuzz-a", taxId, verifyEmail, certificate)
  const b = await makeTenant(port, "fuzz-b", cnpj(), verifyEmail)
  const known: Known = [
    ["url", [WEBHOOK_URL]],
    ["email", [a.email, a.memberEmail, b.email, b.memberEmail]],
    ["password", [PASSWORD]],
    ["tax_id", [a.taxId, b.taxId]],
    ["tenant_id", [a.tenantId, b.tenantId]],
    ["id", [...Object.values(a.ids).flat(), ...Object.values(b.ids).flat()]]
  ]
  return { port, a, b, certificate, providerSecret, known }
}

/**
 * Logs tenant A's owner in again when a fuzzed `POST /auth/logout` (a legitimate request) ended
 * the session the fuzz authenticates with.
 */
export const keepSession = async (world: World) => {
  const me = await send(world.port, {
    method: "GET",
    path: "/v1/me",
    headers: { authorization: `Bearer ${world.a.session}` }
  }, 30_000)
  if (me._tag === "Answered" && me.response.status === 401) {
    world.a.session =
      (await call(world.port, "POST", "/v1/auth/login", undefined, { email: world.a.email, password: PASSWORD })).token
  }
}

/** The world's own credentials still work: no request of the fuzz revoked them by the way. */
export const checkWorld = async (world: World) => {
  await call(world.port, "GET", "/v1/me", world.a.session)
  await call(world.port, "GET", `/v1/tenants/${world.a.tenantId}`, world.a.key)
}
