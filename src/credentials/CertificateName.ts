/** Distinguished names of a forge certificate as text: RFC 4514 strings and the common name. */
import type forge from "node-forge"
import { decodeUtf16Be, decodeUtf8, Tag } from "./Pkcs12Asn1.js"

const OID_COMMON_NAME = "2.5.4.3"

const RDN_NAMES: Record<string, string> = {
  [OID_COMMON_NAME]: "CN",
  "2.5.4.6": "C",
  "2.5.4.7": "L",
  "2.5.4.8": "ST",
  "2.5.4.9": "STREET",
  "2.5.4.10": "O",
  "2.5.4.11": "OU",
  "2.5.4.5": "serialNumber",
  "1.2.840.113549.1.9.1": "emailAddress",
  "0.9.2342.19200300.100.1.1": "UID",
  "0.9.2342.19200300.100.1.25": "DC"
}

const escapeRdnValue = (v: string): string =>
  v
    .replace(/[\\"+,;<>]/g, (c) => `\\${c}`)
    .replace(/\0/g, "\\00")
    .replace(/^([ #])/, "\\$1")
    .replace(/ $/, "\\ ")

const attributeText = (attr: forge.pki.CertificateField): string => {
  if (typeof attr.value !== "string") return ""
  // forge hands over the raw bytes of the string, and types valueTagClass as a tag class while
  // storing the universal tag number there.
  const tag: number | undefined = attr.valueTagClass
  if (tag === Tag.UTF8_STRING) return decodeUtf8(attr.value) ?? attr.value
  if (tag === Tag.BMP_STRING) return decodeUtf16Be(attr.value)
  return attr.value
}

/** RFC 4514 order (most specific first), e.g. `CN=EMPRESA LTDA:12345678000195,O=ICP-Brasil,C=BR`. */
export const formatDistinguishedName = (attributes: ReadonlyArray<forge.pki.CertificateField>): string =>
  [...attributes]
    .reverse()
    .map((a) => `${RDN_NAMES[a.type ?? ""] ?? a.type ?? "?"}=${escapeRdnValue(attributeText(a))}`)
    .join(",")

/** The subject's most specific CN when it has several. */
export const commonName = (cert: forge.pki.Certificate): string | null => {
  const cns = cert.subject.attributes.filter((a) => a.type === OID_COMMON_NAME)
  const last = cns[cns.length - 1]
  return last === undefined ? null : attributeText(last)
}
