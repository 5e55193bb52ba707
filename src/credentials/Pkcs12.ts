/**
 * ICP-Brasil A1 certificates: reading a PKCS#12 (.pfx) bundle and deciding whether it may be used
 * by a tenant. The pieces live in `Pkcs12*.ts` (the bundle) and `Certificate*.ts` (its certificate);
 * this is the entry point the rest of the service imports.
 *
 * forge is synchronous pure JavaScript: a bundle with an absurd PBKDF2 iteration count would hold
 * the event loop. Callers must cap the upload size and the iteration count (`Pkcs12Limits.ts`) and
 * should only expose this to authenticated tenant administrators.
 */
import * as Effect from "effect/Effect"
import { describeCertificate, type ParsedCertificate } from "./CertificateFields.js"
import { openPkcs12 } from "./Pkcs12Bundle.js"
import { pickEndEntity } from "./Pkcs12EndEntity.js"
import { type Pkcs12Error, pkcs12Error } from "./Pkcs12Error.js"

export { CertificateRejected, CertificateRejectedReason, checkCertificate } from "./CertificateAcceptance.js"
export type { ParsedCertificate } from "./CertificateFields.js"
export { extractTaxId, normalizeTaxIdChars } from "./CertificateTaxId.js"
export { Pkcs12Error, Pkcs12ErrorReason } from "./Pkcs12Error.js"

/** Parses an A1 bundle with its password into its end-entity certificate and private key. */
export const parsePkcs12 = (pfx: Uint8Array, password: string): Effect.Effect<ParsedCertificate, Pkcs12Error> =>
  openPkcs12(pfx, password).pipe(
    Effect.flatMap((contents) =>
      Effect.flatMap(pickEndEntity(contents), ({ cert, key }) =>
        Effect.try({
          try: () =>
            describeCertificate(
              cert,
              key,
              contents.certificates.filter((other) => other !== cert)
            ),
          catch: () => pkcs12Error("malformed")
        }))
    )
  )
