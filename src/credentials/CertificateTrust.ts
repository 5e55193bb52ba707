/**
 * The trust anchors of tenants' certificates (SPEC §8 "Trust"): the shipped ICP-Brasil roots, plus
 * the certificates of `CREDENTIALS_EXTRA_CA_FILE` when an operator configures it (the local
 * authority's test hierarchy, tests). Only a certificate that chains to one of them verifies a
 * tenant's tax id; the file is read once at start-up, and an unreadable one stops the start.
 */
import { Context, Effect, Layer, Option } from "effect"
import { readFileSync } from "node:fs"
import { AppConfig } from "../Config.js"
import { type PathVerdict, validatePath } from "./CertificatePath.js"
import { icpBrasilRootPems, pemCertificates } from "./IcpBrasilRoots.js"

export interface CertificateTrustShape {
  /** The ICP-Brasil roots followed by the configured extra ones. */
  readonly anchorPems: ReadonlyArray<string>
  /** Whether `leafPem` chains, through `intermediatePems`, to an anchor at `at`. */
  readonly verify: (leafPem: string, intermediatePems: ReadonlyArray<string>, at: Date) => PathVerdict
}

export const makeCertificateTrust = (anchorPems: ReadonlyArray<string>): CertificateTrustShape => ({
  anchorPems,
  verify: (leafPem, intermediatePems, at) => validatePath({ leafPem, intermediatePems, anchorPems, at })
})

/** The certificates of an extra CA file; fails naming the variable when it is unreadable or holds none. */
export const readExtraCaFile = (file: string): Effect.Effect<ReadonlyArray<string>, Error> =>
  Effect.try({
    try: () => readFileSync(file, "utf8"),
    catch: () => new Error(`CREDENTIALS_EXTRA_CA_FILE=${file} cannot be read`)
  }).pipe(
    Effect.map(pemCertificates),
    Effect.filterOrFail(
      (pems) => pems.length > 0,
      () => new Error(`CREDENTIALS_EXTRA_CA_FILE=${file} holds no PEM certificate`)
    )
  )

export class CertificateTrust extends Context.Service<CertificateTrust, CertificateTrustShape>()(
  "etd/CertificateTrust"
) {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const { credentialsExtraCaFile } = yield* AppConfig
      const extra = Option.isSome(credentialsExtraCaFile)
        ? yield* Effect.orDie(readExtraCaFile(credentialsExtraCaFile.value))
        : []
      if (extra.length > 0) {
        yield* Effect.logWarning("extra certificate authorities trusted for tenants' certificates", {
          count: extra.length
        })
      }
      return makeCertificateTrust([...icpBrasilRootPems(), ...extra])
    })
  )
}
