/**
 * The ICP-Brasil root certificates the service ships (trust/icp-brasil/, its README says where they
 * come from and how they were checked): the trust anchors of tenants' A1 certificates and, with
 * Node's public roots, of the TLS connection to the national NFS-e system.
 */
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"

/** `trust/icp-brasil/` of the package this module is in: two folders up from src/credentials/, one from dist/. */
const shippedRoots = (from: URL): string => {
  for (let dir = from;; dir = new URL("..", dir)) {
    const candidate = fileURLToPath(new URL("trust/icp-brasil/", dir))
    if (fs.existsSync(candidate)) return candidate
    if (dir.pathname === "/") throw new Error(`no trust/icp-brasil/ above ${fileURLToPath(from)}`)
  }
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----/g

/** Every certificate of a PEM bundle, in order, each normalized to LF line ends. */
export const pemCertificates = (text: string): ReadonlyArray<string> =>
  (text.match(PEM_CERTIFICATE) ?? []).map((pem) => `${pem.replace(/\r\n/g, "\n")}\n`)

let cached: ReadonlyArray<string> | undefined

/** The shipped roots, read once; a missing folder or an empty one is a broken installation. */
export const icpBrasilRootPems = (): ReadonlyArray<string> => {
  if (cached !== undefined) return cached
  const dir = shippedRoots(new URL(".", import.meta.url))
  const pems = fs.readdirSync(dir).filter((name) => name.endsWith(".pem")).sort().flatMap((name) =>
    pemCertificates(fs.readFileSync(path.join(dir, name), "utf8"))
  )
  if (pems.length === 0) throw new Error(`${dir} holds no PEM certificate`)
  cached = pems
  return pems
}
