/**
 * XMLDSig for the national NFS-e documents (DPS, cancellation request, NFS-e, event) and the state
 * authorities' NF-e documents (the note, its events, number voiding): one enveloped signature over
 * the root's `inf…` child, shaped as both systems want it (unprefixed `Signature`, last child of
 * the root, `Reference URI="#<Id>"`, the signer's certificate in `KeyInfo`). Pure and synchronous so the sefin adapter, the simulator and the local authority
 * share it. `xml-crypto` does the canonicalization and cryptography; this module adds the shape
 * rules and the checks against signature wrapping that a generic library cannot know.
 */
import { type Document, DOMParser, type Element, type Node, onWarningStopParsing } from "@xmldom/xmldom"
import { Result, Schema } from "effect"
import forge from "node-forge"
import { createPrivateKey, createPublicKey, X509Certificate } from "node:crypto"
import { SignedXml } from "xml-crypto"
import { extractTaxId } from "../../credentials/CertificateTaxId.js"

export const NFSE_NAMESPACE = "http://www.sped.fazenda.gov.br/nfse"
const NFE_NAMESPACE = "http://www.portalfiscal.inf.br/nfe"
const DSIG_NAMESPACE = "http://www.w3.org/2000/09/xmldsig#"

interface SignedDocument {
  readonly root: string
  readonly element: string
  readonly namespace: string
  readonly system: string
  /**
   * The NF-e schemas fix the algorithms of 2001: inclusive C14N, RSA-SHA1 and SHA-1
   * (xmldsig-core-schema_v1.01.xsd); the NFS-e takes the newer ones.
   */
  readonly fixedSha1: boolean
}

const nfse = (root: string, element: string): SignedDocument => ({
  root,
  element,
  namespace: NFSE_NAMESPACE,
  system: "NFS-e",
  fixedSha1: false
})
const nfe = (root: string, element: string): SignedDocument => ({
  root,
  element,
  namespace: NFE_NAMESPACE,
  system: "NF-e",
  fixedSha1: true
})

/** The signed child of each document, the root it must sit under, and its system. */
const DOCUMENTS = {
  infDPS: nfse("DPS", "infDPS"),
  infPedReg: nfse("pedRegEvento", "infPedReg"),
  infNFSe: nfse("NFSe", "infNFSe"),
  infEvento: nfse("evento", "infEvento"),
  infNFe: nfe("NFe", "infNFe"),
  nfeEvent: nfe("evento", "infEvento"),
  infInut: nfe("inutNFe", "infInut")
} as const satisfies Record<string, SignedDocument>

/** Which document is signed or verified: its signed element, or `nfeEvent` for an NF-e event's `infEvento`. */
export type SignedElement = keyof typeof DOCUMENTS

const ALGORITHM = {
  c14n: "http://www.w3.org/TR/2001/REC-xml-c14n-20010315",
  c14nWithComments: "http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments",
  excC14n: "http://www.w3.org/2001/10/xml-exc-c14n#",
  excC14nWithComments: "http://www.w3.org/2001/10/xml-exc-c14n#WithComments",
  enveloped: "http://www.w3.org/2000/09/xmldsig#enveloped-signature",
  rsaSha1: "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
  rsaSha256: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
  rsaSha512: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
  sha1: "http://www.w3.org/2000/09/xmldsig#sha1",
  sha256: "http://www.w3.org/2001/04/xmlenc#sha256",
  sha512: "http://www.w3.org/2001/04/xmlenc#sha512"
} as const

// What real traffic uses (inclusive C14N 1.0 + RSA-SHA1 from older signers; exclusive C14N, with or
// without comments, + RSA-SHA256 from newer ones), plus SHA-512. Anything else (HMAC, XPath or XSLT
// transforms) is refused before the library sees it.
const ACCEPTED_CANONICALIZATIONS: ReadonlySet<string> = new Set([
  ALGORITHM.c14n,
  ALGORITHM.c14nWithComments,
  ALGORITHM.excC14n,
  ALGORITHM.excC14nWithComments
])
const ACCEPTED_TRANSFORMS: ReadonlySet<string> = new Set([...ACCEPTED_CANONICALIZATIONS, ALGORITHM.enveloped])
const ACCEPTED_SIGNATURE_METHODS: ReadonlySet<string> = new Set([
  ALGORITHM.rsaSha1,
  ALGORITHM.rsaSha256,
  ALGORITHM.rsaSha512
])
const ACCEPTED_DIGEST_METHODS: ReadonlySet<string> = new Set([ALGORITHM.sha1, ALGORITHM.sha256, ALGORITHM.sha512])

export class SignatureInvalid extends Schema.TaggedError<SignatureInvalid>()("SignatureInvalid", {
  message: Schema.String
}) {}

export interface SignOptions {
  readonly element: SignedElement
  readonly privateKeyPem: string
  readonly certificatePem: string
  /**
   * Exclusive C14N *with comments* for SignedInfo and the reference, as the national system signs
   * the NFS-e it issues. Default false: plain exclusive C14N, as the public adapters sign a DPS.
   * Ignored for the NF-e, whose schema fixes inclusive C14N.
   */
  readonly withComments?: boolean
}

export interface VerifiedSignature {
  /** The signer's certificate, from `KeyInfo`, as PEM. */
  readonly certificatePem: string
  /** Normalized CNPJ (or CPF) of an ICP-Brasil certificate, or null when it carries none. */
  readonly taxId: string | null
}

// Strict: a warning stops parsing too, so this parser and xml-crypto's own (a different xmldom
// release) never read a malformed document two different ways.
const parseStrict = (xml: string): Document =>
  new DOMParser({ onError: onWarningStopParsing }).parseFromString(xml, "text/xml")

const isElement = (node: Node): node is Element => node.nodeType === node.ELEMENT_NODE

const elementChildren = (parent: Element): Array<Element> => {
  const out: Array<Element> = []
  for (let node = parent.firstChild; node !== null; node = node.nextSibling) {
    if (isElement(node)) out.push(node)
  }
  return out
}

const childrenNamed = (parent: Element, namespace: string, localName: string): Array<Element> =>
  elementChildren(parent).filter((e) => e.namespaceURI === namespace && e.localName === localName)

const allElements = (root: Element): Array<Element> => {
  const out: Array<Element> = []
  const walk = (e: Element) => {
    out.push(e)
    for (const child of elementChildren(e)) walk(child)
  }
  walk(root)
  return out
}

// xml-crypto resolves a reference by any of these attribute names; an element elsewhere carrying
// the same value under one of them would be a second candidate for the reference.
const ID_ATTRIBUTES = ["Id", "ID", "id"] as const

const hasDoctype = (doc: Document): boolean => {
  for (let node = doc.firstChild; node !== null; node = node.nextSibling) {
    if (node.nodeType === node.DOCUMENT_TYPE_NODE) return true
  }
  return false
}

const toPem = (base64Der: string): string =>
  `-----BEGIN CERTIFICATE-----\n${base64Der.match(/.{1,64}/g)?.join("\n") ?? ""}\n-----END CERTIFICATE-----\n`

const spkiDer = (key: ReturnType<typeof createPublicKey>): Buffer => key.export({ type: "spki", format: "der" })

const taxIdOf = (certificatePem: string): string | null => {
  try {
    return extractTaxId(forge.pki.certificateFromPem(certificatePem))
  } catch {
    // forge reads RSA certificates only; any other key type simply has no tax id for us.
    return null
  }
}

/** The document's root and its one signable child, or why the document cannot be signed/verified. */
const locate = (
  doc: Document,
  { element, namespace, root: rootName, system }: SignedDocument
): Result.Result<{ root: Element; target: Element; id: string }, string> => {
  const root = doc.documentElement
  if (root === null) return Result.fail("the document has no root element")
  if (root.namespaceURI !== namespace || root.localName !== rootName) {
    return Result.fail(`the root element is not ${rootName} of the ${system} namespace`)
  }
  const targets = childrenNamed(root, namespace, element)
  if (targets.length !== 1) {
    return Result.fail(`${rootName} must have exactly one ${element}, found ${targets.length}`)
  }
  const target = targets[0]!
  const id = target.getAttribute("Id") ?? ""
  if (id === "") return Result.fail(`${element} has no Id`)
  return Result.succeed({ root, target, id })
}

/**
 * Signs the document's signed element (the root's child of that name) with an enveloped XMLDSig:
 * exclusive C14N, RSA-SHA256 and SHA-256 for the NFS-e; inclusive C14N, RSA-SHA1 and SHA-1 for the
 * NF-e, as its schema fixes them. The certificate goes in KeyInfo; the XML declaration of the input
 * is kept. Throws only on a caller's mistake: malformed XML, a missing element or Id, an already
 * signed document, or a key that does not belong to the certificate (the authority would refuse it).
 */
export const signEnveloped = (xml: string, options: SignOptions): string => {
  const document = DOCUMENTS[options.element]
  const doc = parseStrict(xml)
  if (hasDoctype(doc)) throw new Error("cannot sign: the document has a DOCTYPE")
  const located = locate(doc, document)
  if (Result.isFailure(located)) throw new Error(`cannot sign: ${located.failure}`)
  if (childrenNamed(located.success.root, DSIG_NAMESPACE, "Signature").length > 0) {
    throw new Error(`cannot sign: ${document.root} is already signed`)
  }

  const certificate = new X509Certificate(options.certificatePem)
  if (!spkiDer(createPublicKey(createPrivateKey(options.privateKeyPem))).equals(spkiDer(certificate.publicKey))) {
    throw new Error("cannot sign: the private key does not belong to the certificate")
  }

  const canonicalization = document.fixedSha1
    ? ALGORITHM.c14n
    : options.withComments === true
    ? ALGORITHM.excC14nWithComments
    : ALGORITHM.excC14n
  const signer = new SignedXml({
    privateKey: options.privateKeyPem,
    publicCert: options.certificatePem,
    signatureAlgorithm: document.fixedSha1 ? ALGORITHM.rsaSha1 : ALGORITHM.rsaSha256,
    canonicalizationAlgorithm: canonicalization
  })
  signer.addReference({
    // The element and namespace are fixed names of DOCUMENTS: nothing from the document reaches the XPath.
    xpath: `/*/*[local-name(.)='${document.element}' and namespace-uri(.)='${document.namespace}']`,
    transforms: [ALGORITHM.enveloped, canonicalization],
    digestAlgorithm: document.fixedSha1 ? ALGORITHM.sha1 : ALGORITHM.sha256
  })
  // No prefix: both systems want `<Signature xmlns="…xmldsig#">`; "append" to the root makes it
  // the last child, after the signed element (and after an NFC-e's infNFeSupl).
  signer.computeSignature(xml, { location: { reference: "/*", action: "append" } })
  return signer.getSignedXml()
}

const invalid = (message: string) => Result.fail(new SignatureInvalid({ message }))

const algorithmOf = (parent: Element, localName: string): string | null => {
  const found = childrenNamed(parent, DSIG_NAMESPACE, localName)
  return found.length === 1 ? found[0]!.getAttribute("Algorithm") : null
}

/**
 * Verifies the enveloped signature of a document signed over its root's `element` child: exactly
 * one `Signature` child of the root, one `Reference` pointing by Id at that very child (the Id
 * unique in the document, so a wrapped copy cannot stand in for it), accepted algorithms only, the
 * digest and signature value checked with the certificate from `KeyInfo`. Trust in the certificate
 * itself (chain, validity, whose tax id) is the caller's decision.
 */
export const verifyEnveloped = (
  xml: string,
  element: SignedElement
): Result.Result<VerifiedSignature, SignatureInvalid> => {
  let doc: Document
  try {
    doc = parseStrict(xml)
  } catch {
    return invalid("the document is not well-formed XML")
  }
  if (hasDoctype(doc)) return invalid("a signed document must not have a DOCTYPE")
  const document = DOCUMENTS[element]
  const located = locate(doc, document)
  if (Result.isFailure(located)) return invalid(located.failure)
  const { id, root } = located.success

  const signatures = childrenNamed(root, DSIG_NAMESPACE, "Signature")
  if (signatures.length !== 1) {
    return invalid(`${document.root} must have exactly one Signature, found ${signatures.length}`)
  }
  const signature = signatures[0]!
  const signedInfos = childrenNamed(signature, DSIG_NAMESPACE, "SignedInfo")
  if (signedInfos.length !== 1) return invalid("the Signature must have exactly one SignedInfo")
  const signedInfo = signedInfos[0]!

  const canonicalization = algorithmOf(signedInfo, "CanonicalizationMethod")
  if (canonicalization === null || !ACCEPTED_CANONICALIZATIONS.has(canonicalization)) {
    return invalid(`canonicalization method not accepted: ${canonicalization ?? "none"}`)
  }
  const signatureMethod = algorithmOf(signedInfo, "SignatureMethod")
  if (signatureMethod === null || !ACCEPTED_SIGNATURE_METHODS.has(signatureMethod)) {
    return invalid(`signature method not accepted: ${signatureMethod ?? "none"}`)
  }

  const references = childrenNamed(signedInfo, DSIG_NAMESPACE, "Reference")
  if (references.length !== 1) {
    return invalid(`the signature must have exactly one Reference, found ${references.length}`)
  }
  const reference = references[0]!
  if (reference.getAttribute("URI") !== `#${id}`) {
    return invalid(`the Reference does not point at ${document.element} (#${id})`)
  }
  const digestMethod = algorithmOf(reference, "DigestMethod")
  if (digestMethod === null || !ACCEPTED_DIGEST_METHODS.has(digestMethod)) {
    return invalid(`digest method not accepted: ${digestMethod ?? "none"}`)
  }
  for (const transforms of childrenNamed(reference, DSIG_NAMESPACE, "Transforms")) {
    for (const transform of childrenNamed(transforms, DSIG_NAMESPACE, "Transform")) {
      const algorithm = transform.getAttribute("Algorithm") ?? ""
      if (!ACCEPTED_TRANSFORMS.has(algorithm)) return invalid(`transform not accepted: ${algorithm}`)
    }
  }

  const sameId = allElements(root).filter((e) => ID_ATTRIBUTES.some((name) => e.getAttribute(name) === id))
  if (sameId.length !== 1) return invalid(`the Id ${id} appears on ${sameId.length} elements`)

  const certificates = childrenNamed(signature, DSIG_NAMESPACE, "KeyInfo")
    .flatMap((keyInfo) => childrenNamed(keyInfo, DSIG_NAMESPACE, "X509Data"))
    .flatMap((data) => childrenNamed(data, DSIG_NAMESPACE, "X509Certificate"))
    .flatMap((node) => {
      try {
        const pem = toPem((node.textContent ?? "").replace(/\s+/g, ""))
        return [{ pem, x509: new X509Certificate(pem) }]
      } catch {
        return []
      }
    })
  // Some signers add the chain: the signer is the one certificate that is not a CA.
  const signers = certificates.length === 1 ? certificates : certificates.filter((c) => !c.x509.ca)
  if (signers.length !== 1) return invalid("KeyInfo must carry the signer's X509Certificate")
  const certificatePem = signers[0]!.pem

  const checker = new SignedXml({ publicCert: certificatePem })
  try {
    checker.loadSignature(signature.toString())
    if (!checker.checkSignature(xml)) {
      return invalid(`the digest of ${document.element} does not match: the signed content was changed`)
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return invalid(
      reason.startsWith("invalid signature: the signature value")
        ? "the signature value does not verify with the certificate in KeyInfo"
        : `the signature could not be checked: ${reason.slice(0, 200)}`
    )
  }
  return Result.succeed({ certificatePem, taxId: taxIdOf(certificatePem) })
}
