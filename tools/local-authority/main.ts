/**
 * `npm run authority:local`: the protocol-faithful local SEFIN Nacional and, beside it, a local SEFAZ
 * for goods invoices, for running the service's `sefin` and `sefaz` targets against them on a machine
 * without the internet (docs/going-live.md, "Try it offline").
 *
 * Settings (flag, then environment variable, then default):
 * - `--port` / `LOCAL_AUTHORITY_PORT`: default 8443;
 * - `--sefaz-port` / `LOCAL_SEFAZ_PORT`: the local SEFAZ's, default 8444 (0 when `--port` is 0: any free port);
 * - `--host` / `LOCAL_AUTHORITY_HOST`: default 127.0.0.1 (loopback only: it is a test system);
 * - `--environment` / `LOCAL_AUTHORITY_ENVIRONMENT`: tpAmb it stands for, 1 (production) or
 *   2 (produção restrita), default 2;
 * - `--ca-file` / `LOCAL_AUTHORITY_CA_FILE`: where to write its CA certificate (public PEM, what the
 *   service must trust), default `local-authority-<port>-ca.pem` in the system's temporary directory;
 * - `--timeout-after` / `LOCAL_AUTHORITY_TIMEOUT_AFTER`: how long a `simulate:timeout` answer is
 *   held back, as an Effect duration ("30 seconds", "500 millis"), default 30 seconds;
 * - `--cancellation-deadline` / `LOCAL_AUTHORITY_CANCELLATION_DEADLINE`: how long after authorization
 *   the issuer may cancel a note itself (then E0822), as a duration; default none;
 * - `--event-form` / `LOCAL_AUTHORITY_EVENT_FORM`: the event request form it takes,
 *   `without_sequence` (production's, default) or `with_sequence` (the published v1.01 schema's);
 * - `CREDENTIALS_EXTRA_CA_FILE`: the same file the service reads; client certificates must chain to
 *   the shipped ICP-Brasil roots or to its certificates (which may include intermediates);
 * - `--taxpayers` / `LOCAL_AUTHORITY_TAXPAYERS_FILE`: a JSON file with the providers' register (the
 *   real system's CNC), `{"<CNPJ or CPF, digits>": {"name", "tradeName"?, "address"?: {"street",
 *   "number", "complement"?, "district", "municipalityCode", "state", "postalCode"}, "email"?,
 *   "phone"?}}`: the name and address its NFS-e print for that provider ("Não informado" without one).
 *
 * It prints its URLs and the environment lines the service needs, then runs until SIGINT/SIGTERM.
 * `--timeout-after` and the client certificates' roots apply to the local SEFAZ too.
 * Its CA and keys are new at every start, so the CA file is rewritten each time.
 */
import { Duration, Option } from "effect"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { icpBrasilRootPems, pemCertificates } from "../../src/credentials/IcpBrasilRoots.js"
import { type RegisteredTaxpayer, startLocalAuthority } from "./LocalAuthority.js"
import { startLocalSefaz } from "./LocalSefaz.js"

const fail = (message: string): never => {
  process.stderr.write(`authority:local: ${message}\n`)
  process.exit(2)
}

const { values } = parseArgs({
  options: {
    port: { type: "string" },
    "sefaz-port": { type: "string" },
    host: { type: "string" },
    environment: { type: "string" },
    "ca-file": { type: "string" },
    "timeout-after": { type: "string" },
    "cancellation-deadline": { type: "string" },
    "event-form": { type: "string" },
    taxpayers: { type: "string" }
  },
  strict: true
})

const setting = (flag: string | undefined, variable: string): string | undefined => {
  const fromEnv = process.env[variable]
  return flag ?? (fromEnv === undefined || fromEnv === "" ? undefined : fromEnv)
}

const portText = setting(values.port, "LOCAL_AUTHORITY_PORT") ?? "8443"
const port = /^[0-9]{1,5}$/.test(portText) && Number(portText) <= 65535
  ? Number(portText)
  : fail(`port "${portText}" is not a TCP port`)
const sefazPortText = setting(values["sefaz-port"], "LOCAL_SEFAZ_PORT") ?? (port === 0 ? "0" : String(port + 1))
const sefazPort = /^[0-9]{1,5}$/.test(sefazPortText) && Number(sefazPortText) <= 65535
  ? Number(sefazPortText)
  : fail(`sefaz-port "${sefazPortText}" is not a TCP port`)
const host = setting(values.host, "LOCAL_AUTHORITY_HOST") ?? "127.0.0.1"
const environmentText = setting(values.environment, "LOCAL_AUTHORITY_ENVIRONMENT") ?? "2"
const environment = environmentText === "1"
  ? 1
  : environmentText === "2"
  ? 2
  : fail(`environment "${environmentText}" is not 1 or 2`)
const caFileSetting = setting(values["ca-file"], "LOCAL_AUTHORITY_CA_FILE")
const timeoutText = setting(values["timeout-after"], "LOCAL_AUTHORITY_TIMEOUT_AFTER")
const timeoutAfter = timeoutText === undefined
  ? Duration.seconds(30)
  : Option.getOrElse(
    Duration.fromInput(timeoutText as Duration.Input),
    () => fail(`timeout-after "${timeoutText}" is not a duration (e.g. "30 seconds")`)
  )

// Tenants' certificates are taken as the real system takes them: ICP-Brasil's, or the configured test ones.
const extraCaFile = setting(undefined, "CREDENTIALS_EXTRA_CA_FILE")
const readExtra = (file: string): ReadonlyArray<string> => {
  try {
    return pemCertificates(readFileSync(file, "utf8"))
  } catch {
    return fail(`CREDENTIALS_EXTRA_CA_FILE=${file} cannot be read`)
  }
}
const clientRoots = [...icpBrasilRootPems(), ...(extraCaFile === undefined ? [] : readExtra(extraCaFile))]

const deadlineText = setting(values["cancellation-deadline"], "LOCAL_AUTHORITY_CANCELLATION_DEADLINE")
const cancellationDeadline = deadlineText === undefined
  ? undefined
  : Option.getOrElse(
    Duration.fromInput(deadlineText as Duration.Input),
    () => fail(`cancellation-deadline "${deadlineText}" is not a duration (e.g. "1 hour")`)
  )
const eventFormText = setting(values["event-form"], "LOCAL_AUTHORITY_EVENT_FORM") ?? "without_sequence"
const eventForm = eventFormText === "without_sequence" || eventFormText === "with_sequence"
  ? eventFormText
  : fail(`event-form "${eventFormText}" is not without_sequence or with_sequence`)

const taxpayersFile = setting(values.taxpayers, "LOCAL_AUTHORITY_TAXPAYERS_FILE")
const taxpayers = taxpayersFile === undefined ? undefined : (() => {
  try {
    const parsed: unknown = JSON.parse(readFileSync(taxpayersFile, "utf8"))
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not a JSON object")
    return parsed as Readonly<Record<string, RegisteredTaxpayer>>
  } catch (error) {
    return fail(`taxpayers "${taxpayersFile}": ${error instanceof Error ? error.message : String(error)}`)
  }
})()

const authority = await startLocalAuthority({
  port,
  host,
  environment,
  timeoutAfter,
  cancellationDeadline,
  eventForm,
  clientRoots,
  taxpayers
}).catch((error: unknown) =>
  fail(`cannot listen on ${host}:${port}: ${error instanceof Error ? error.message : String(error)}`)
)
// The same throw-away CA issues both servers' certificates (LocalAuthorityKeys.ts): one CA file for both.
const sefaz = await startLocalSefaz({
  port: sefazPort,
  host,
  environment: environment === 1 ? "live" : "test",
  timeoutAfterMs: Duration.toMillis(timeoutAfter),
  clientRoots
}).catch((error: unknown) =>
  fail(`cannot listen on ${host}:${sefazPort}: ${error instanceof Error ? error.message : String(error)}`)
)
// Named by port: a second local authority never overwrites the CA a service trusts for the first.
const caFile = resolve(caFileSetting ?? join(tmpdir(), `local-authority-${authority.port}-ca.pem`))
// A fresh file of our own: a file or link someone else left at that path is replaced, never written through.
rmSync(caFile, { force: true })
writeFileSync(caFile, authority.caPem, { mode: 0o644, flag: "wx" })

// The service's variables for the environment this instance stands for.
const prefix = environment === 1 ? "TAX_AUTHORITY_LIVE" : "TAX_AUTHORITY_SANDBOX"
process.stdout.write(
  [
    `Local SEFIN Nacional (tpAmb ${environment}, ${environment === 1 ? "production" : "produção restrita"}) listening`,
    `  SEFIN:   ${authority.url}`,
    `  DANFSe:  ${authority.danfseUrl}`,
    `Local SEFAZ (NF-e and NFC-e 4.00, the same environment) listening`,
    `  SEFAZ:   ${sefaz.origin}/ws/`,
    `  CA file: ${caFile}`,
    "",
    "Service environment:",
    `${prefix}_TARGET=sefin`,
    `${prefix}_URL=${authority.url}`,
    `${prefix}_DANFSE_URL=${authority.danfseUrl}`,
    `${prefix}_GOODS_TARGET=sefaz`,
    `${prefix}_SEFAZ_URL=${sefaz.origin}`,
    `${prefix}_CA_FILE=${caFile}`,
    "",
    "Stop with Ctrl-C.",
    ""
  ].join("\n")
)

let stopping = false
const stop = (signal: NodeJS.Signals) => {
  if (stopping) return
  stopping = true
  process.stdout.write(`${signal}: stopping\n`)
  Promise.all([authority.close(), sefaz.close()]).then(
    () => process.exit(0),
    () => process.exit(1)
  )
}
process.once("SIGINT", stop)
process.once("SIGTERM", stop)
