/**
 * What the simulator's authorization of a document consists of: the numbers it draws for it (the
 * 50-digit access key, the protocol) and the NFS-e XML the national system would have issued.
 */
import { Effect, Option, Random, Result } from "effect"
import { ibsCbsFiguresOf } from "../../domain/IbsCbsFigures.js"
import { buildAccessKey, yearMonthOf } from "../sefin/AccessKey.js"
import { dpsInputOf } from "../sefin/DocumentDps.js"
import { buildDps } from "../sefin/Dps.js"
import { readDps } from "../sefin/DpsRead.js"
import { buildNfse } from "../sefin/Nfse.js"
import { noteFiguresOf, noteIbsCbsComputation } from "../sefin/NfseValues.js"
import type { Authorization, SubmissionDocument, TaxAuthority } from "../TaxAuthority.js"
import type { SimulatorRecord } from "./SimulatorRepo.js"

export type AuthoritySystem = TaxAuthority["system"]

/** tpAmb of the national system. */
export const environmentCodeOf = (system: AuthoritySystem): 1 | 2 => (system === "production" ? 1 : 2)

const randomDigits = (count: number) =>
  Effect.map(
    Effect.all(Array.from({ length: count }, () => Random.nextIntBetween(0, 10, { halfOpen: true }))),
    (digits) => digits.join("")
  )

/** 15 digits like the national protocols: tpAmb + YYMMDD of processing + 8 random digits. */
export const protocolNumber = (system: AuthoritySystem, at: Date) =>
  Effect.map(
    randomDigits(8),
    (random) => `${environmentCodeOf(system)}${at.toISOString().slice(2, 10).replace(/-/g, "")}${random}`
  )

/**
 * The NFS-e XML of an authorized record, as the national system's would read (the DPS built from
 * the submitted document, inside the note), and its figures as a reader gets them back from it. Built from the record on every read (it is a pure
 * function of it), so nothing extra is stored. The simulator holds no certificate of the tenant or
 * of its own, so neither the DPS nor the note carries a signature.
 */
const noteOf = (
  system: AuthoritySystem,
  record: SimulatorRecord & { readonly accessKey: string; readonly nfseNumber: number; readonly authorizedAt: Date }
): Pick<Authorization, "nfseXml" | "amounts" | "ibsCbs"> => {
  const document = sentDocument(record.document)
  const environment = system === "production" ? "live" : "test"
  // Emitted when authorized: the simulator's records keep the document as sent, not when it was accepted.
  const dps = buildDps(dpsInputOf({ ...document, createdAt: record.authorizedAt }, environment))
  const registration = document.issuer.registration
  const address = registration?.address ?? null
  const parsed = Result.getOrThrow(readDps(dps.xml))
  // The simulator stands for every municipality: the rate the document expects is the municipality's.
  const issRate = document.amounts.iss_rate ?? undefined
  const xml = buildNfse({
    signedDpsXml: dps.xml,
    dps: parsed,
    accessKey: record.accessKey,
    nfseNumber: record.nfseNumber,
    processedAt: record.authorizedAt,
    tpAmb: environmentCodeOf(system),
    // The national system prints its register's name and address; the simulator's register is what
    // the tenant declared, sent with the document.
    issuerName: registration?.legal_name ?? undefined,
    issuerTradeName: registration?.trade_name ?? undefined,
    issuerAddress: address === null ? undefined : {
      street: address.street,
      number: address.number,
      complement: address.complement ?? undefined,
      district: address.district,
      municipalityCode: address.municipality_code,
      state: address.state,
      postalCode: address.postal_code
    },
    issRate
  })
  const ibsCbs = noteIbsCbsComputation(parsed, issRate)
  return {
    nfseXml: xml,
    amounts: noteFiguresOf(parsed, issRate),
    ibsCbs: ibsCbs === undefined ? null : ibsCbsFiguresOf(ibsCbs)
  }
}

/**
 * The port's SubmissionDocument the simulator recorded (Simulator.ts, submit). Records written before
 * the issuer carried its municipality were issued where the service was provided.
 */
const sentDocument = (recorded: unknown): SubmissionDocument => {
  const document = recorded as SubmissionDocument
  const municipalityCode = (document.issuer as Partial<SubmissionDocument["issuer"]>).municipalityCode ??
    document.service.municipality_code
  return { ...document, issuer: { ...document.issuer, municipalityCode } }
}

/** The authorization a record answers with: None until it has its numbers. */
export const authorizationOf = (system: AuthoritySystem, record: SimulatorRecord): Option.Option<Authorization> =>
  record.accessKey !== null && record.protocol !== null && record.authorizedAt !== null && record.nfseNumber !== null
    ? Option.some({
      accessKey: record.accessKey,
      protocol: record.protocol,
      authorizedAt: record.authorizedAt,
      nfseNumber: String(record.nfseNumber),
      ...noteOf(system, {
        ...record,
        accessKey: record.accessKey,
        nfseNumber: record.nfseNumber,
        authorizedAt: record.authorizedAt
      })
    })
    : Option.none()

/** The numbers of a new authorization: the access key for `nfseNumber`, then the protocol. */
export const authorize = (system: AuthoritySystem, document: SubmissionDocument, at: Date, nfseNumber: number) =>
  Effect.gen(function*() {
    const accessKey = buildAccessKey({
      // The municipality of emission, as in the DPS id.
      municipalityCode: sentDocument(document).issuer.municipalityCode,
      issuerTaxId: document.issuer.taxId,
      nfseNumber,
      yearMonth: yearMonthOf(document.issueDate, at),
      randomCode: yield* randomDigits(9)
    })
    return { nfseNumber, accessKey, protocol: yield* protocolNumber(system, at) }
  })
