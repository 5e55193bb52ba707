/**
 * Hostile PKCS#12 files for the work-bound tests (SPEC §8: opening a file costs bounded CPU time),
 * made from real bundles by rewriting their ASN.1 with node-forge: iteration counts raised, the MAC
 * removed (forge then skips its check), bags repeated, and the AuthenticatedSafe moved into a
 * constructed (chunked) OCTET STRING, which BER allows and a naive pre-check does not look inside.
 */
import forge from "node-forge"

const { UNIVERSAL } = forge.asn1.Class
const OCTET_STRING = 4
const INTEGER = 2
const SEQUENCE = 16

const der = (node: forge.asn1.Asn1): Uint8Array =>
  new Uint8Array(Buffer.from(forge.asn1.toDer(node).getBytes(), "latin1"))
const parse = (bytes: Uint8Array | string): forge.asn1.Asn1 =>
  forge.asn1.fromDer(typeof bytes === "string" ? bytes : Buffer.from(bytes).toString("latin1"), false)
const children = (node: forge.asn1.Asn1): Array<forge.asn1.Asn1> => node.value as Array<forge.asn1.Asn1>
const isOctets = (node: forge.asn1.Asn1) => node.tagClass === UNIVERSAL && node.type === OCTET_STRING

const integer = (n: number): forge.asn1.Asn1 => {
  let hex = n.toString(16)
  if (hex.length % 2 === 1) hex = `0${hex}`
  if (parseInt(hex.slice(0, 2), 16) >= 0x80) hex = `00${hex}`
  return forge.asn1.create(UNIVERSAL, INTEGER, false, forge.util.hexToBytes(hex))
}

/** Rewrites, in place and through nested DER OCTET STRINGs, every `SEQUENCE { salt, iterations }`. */
const setIterations = (node: forge.asn1.Asn1, iterations: number): void => {
  if (isOctets(node) && typeof node.value === "string" && node.value.charCodeAt(0) === 0x30) {
    try {
      const inner = parse(node.value)
      setIterations(inner, iterations)
      node.value = forge.asn1.toDer(inner).getBytes()
    } catch {
      // Not DER (ciphertext that happens to start with 0x30): leave it.
    }
    return
  }
  if (!Array.isArray(node.value)) return
  const list = children(node)
  list.forEach((child, i) => {
    const previous = list[i - 1]
    if (node.type === SEQUENCE && previous !== undefined && isOctets(previous) && child.type === INTEGER) {
      list[i] = integer(iterations)
    } else {
      setIterations(child, iterations)
    }
  })
}

/** The PFX's AuthenticatedSafe bytes, as found in `authSafe.content[0]`. */
const authSafeOctets = (pfx: forge.asn1.Asn1): forge.asn1.Asn1 => children(children(children(pfx)[1]!)[1]!)[0]!

/**
 * The bundle with every iteration count set to `iterations`, no MAC, and its AuthenticatedSafe in
 * a constructed OCTET STRING of two chunks.
 */
export const chunkedWithIterations = (bundle: Uint8Array, iterations: number): Uint8Array => {
  const pfx = parse(bundle)
  const [version, authSafe] = children(pfx)
  setIterations(authSafe!, iterations)
  const octets = authSafeOctets(pfx)
  const bytes = octets.value as string
  const half = Math.floor(bytes.length / 2)
  const chunked = forge.asn1.create(UNIVERSAL, OCTET_STRING, true, [
    forge.asn1.create(UNIVERSAL, OCTET_STRING, false, bytes.slice(0, half)),
    forge.asn1.create(UNIVERSAL, OCTET_STRING, false, bytes.slice(half))
  ])
  children(children(authSafe!)[1]!)[0] = chunked
  return der(forge.asn1.create(UNIVERSAL, SEQUENCE, true, [version!, authSafe!]))
}

/**
 * A forge-packed bundle of a small key whose clear SafeContents repeats the shrouded key bag
 * `copies` times, each asking for `iterations`; no MAC.
 */
export const repeatedKeyBags = (copies: number, iterations: number, password: string): Uint8Array => {
  const keys = forge.pki.rsa.generateKeyPair({ bits: 512, e: 0x10001 })
  const noCertificate = null as unknown as Array<forge.pki.Certificate>
  const pfx = forge.pkcs12.toPkcs12Asn1(keys.privateKey, noCertificate, password, { algorithm: "3des", useMac: false })
  setIterations(pfx, iterations)
  const octets = authSafeOctets(pfx)
  const safes = parse(octets.value as string)
  const dataInfo = children(safes)[0]!
  const safeOctets = children(children(dataInfo)[1]!)[0]!
  const safeContents = parse(safeOctets.value as string)
  const bag = children(safeContents)[0]!
  safeOctets.value = forge.asn1.toDer(
    forge.asn1.create(UNIVERSAL, SEQUENCE, true, Array.from({ length: copies }, () => bag))
  ).getBytes()
  octets.value = forge.asn1.toDer(safes).getBytes()
  return der(pfx)
}
