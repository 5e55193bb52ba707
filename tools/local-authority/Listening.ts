/**
 * The TLS settings of a local authority's server: its certificate, and a client certificate asked
 * for but checked per request (to answer as the real systems do rather than break the handshake);
 * against `clientRoots` when given, else only its presence and validity count.
 */
export const mutualTlsOptions = (
  server: { readonly certificatePem: string; readonly privateKeyPem: string },
  clientRoots: ReadonlyArray<string> | undefined
) => ({
  key: server.privateKeyPem,
  cert: server.certificatePem,
  requestCert: true,
  ...(clientRoots === undefined ? {} : { ca: [...clientRoots] }),
  rejectUnauthorized: false
})

/**
 * Where a local authority listens: on `port` (0, a free one) of `host` (loopback by default, as
 * both are test systems), resolved once listening, with the origin its clients call.
 */
import type { Server } from "node:https"
import type { AddressInfo } from "node:net"

export const listenOn = async (
  server: Server,
  port: number | undefined,
  host: string | undefined
): Promise<{ readonly port: number; readonly origin: string }> => {
  const bound = host ?? "127.0.0.1"
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port ?? 0, bound, () => {
      server.off("error", reject)
      resolve()
    })
  })
  const actual = (server.address() as AddressInfo).port
  return { port: actual, origin: `https://${bound.includes(":") ? `[${bound}]` : bound}:${actual}` }
}
