/**
 * The tenant's identity toward an authority: its active A1 certificate, for the mutual-TLS
 * connection and for signing. No usable certificate means the request never leaves
 * (`RequestNotSent`): the document fails without the authority seeing it.
 */
import { Context, Effect } from "effect"
import { CredentialVault } from "../credentials/CredentialVault.js"
import type { TenantId } from "../domain/Ids.js"
import type { Environment } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import type { ClientIdentity } from "./sefin/SefinTransport.js"
import { RequestNotSent } from "./TaxAuthority.js"

/** `authority` names who the certificate is for in the messages ("the national system", "the state authority"). */
export const tenantIdentity = (environment: Environment, authority: string) =>
  Effect.map(Effect.context<CredentialVault>(), (context) => {
    const vault = Context.get(context, CredentialVault)
    const icpBrasilRequired = `Live documents go to ${authority}'s production, which accepts only ICP-Brasil ` +
      "certificates: the tenant's active certificate does not chain to an ICP-Brasil root (its `verified_chain` is " +
      "false), or the tenant has not proven its tax id with one. Upload the tenant's ICP-Brasil A1 certificate, " +
      "exported with its certification path."
    return (tenantId: TenantId): Effect.Effect<ClientIdentity, RequestNotSent> =>
      Effect.gen(function*() {
        const material = yield* vault.activeFor(tenantId).pipe(
          Effect.catchTags({
            NoActiveCredential: () =>
              Effect.fail(
                new RequestNotSent({
                  code: "credential_required",
                  message: `The tenant has no active A1 certificate; upload one to send documents to ${authority}.`
                })
              ),
            CredentialUnreadable: () =>
              Effect.fail(
                new RequestNotSent({
                  code: "credential_unusable",
                  message: "The tenant's certificate could not be opened; upload it again."
                })
              )
          })
        )
        if (material.notAfter.getTime() <= (yield* now).getTime()) {
          return yield* new RequestNotSent({
            code: "credential_required",
            message: "The tenant's A1 certificate has expired; upload a valid one."
          })
        }
        // The certificate may have been replaced by one stored for homologation after acceptance.
        if (environment === "live" && !material.verifiedChain) {
          return yield* new RequestNotSent({ code: "credential_required", message: icpBrasilRequired })
        }
        return {
          credentialId: material.credentialId,
          certificatePem: material.certificatePem,
          privateKeyPem: material.privateKeyPem
        } satisfies ClientIdentity
      })
  })
