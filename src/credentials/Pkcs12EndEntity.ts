/**
 * Which key and certificate of a bundle are the tenant's credential. A bundle may carry the whole
 * chain; the end-entity certificate is the one whose public key matches a private key, a non-CA one
 * if several do. Only RSA keys are supported, which is what ICP-Brasil A1 issues.
 */
import * as Effect from "effect/Effect"
import type forge from "node-forge"
import type { Pkcs12Contents } from "./Pkcs12Bundle.js"
import { type Pkcs12Error, pkcs12Error } from "./Pkcs12Error.js"

export interface KeyPair {
  readonly key: forge.pki.rsa.PrivateKey
  readonly cert: forge.pki.Certificate
}

// Many certificates carry no basicConstraints at all: forge then answers null (its typings say
// undefined), and such a certificate is not a CA.
const isCa = (cert: forge.pki.Certificate): boolean => {
  const bc: unknown = cert.getExtension("basicConstraints")
  return typeof bc === "object" && bc !== null && "cA" in bc && bc.cA === true
}

const keyMatches = (key: forge.pki.rsa.PrivateKey, cert: forge.pki.Certificate): boolean => {
  const pub = cert.publicKey
  return "n" in pub && "e" in pub && pub.n.equals(key.n) && pub.e.equals(key.e)
}

export const pickEndEntity = ({ certificates, keys }: Pkcs12Contents): Effect.Effect<KeyPair, Pkcs12Error> => {
  if (keys.length === 0) return Effect.fail(pkcs12Error("no_private_key"))
  const pairs = keys.flatMap((key) =>
    certificates.filter((cert) => keyMatches(key, cert)).map((cert) => ({ key, cert }))
  )
  const chosen = pairs.find((p) => !isCa(p.cert)) ?? pairs[0]
  return chosen === undefined ? Effect.fail(pkcs12Error("no_certificate")) : Effect.succeed(chosen)
}
