/**
 * The vault: key material handed over in memory, master-key rotation (old envelopes still open,
 * then are re-wrapped under the new key id), and how the secrets are obtained at start-up
 * (configured, generated once in development, refused in production).
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Logger, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { createPrivateKey, randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PaymentProviderSecret, PaymentProviderSecretLive } from "../../src/billing/BillingService.js"
import { AppConfigTest } from "../../src/Config.js"
import { CredentialService } from "../../src/credentials/CredentialService.js"
import { CredentialVault, MASTER_KEY_FILE, MasterKeys, MasterKeysLive } from "../../src/credentials/CredentialVault.js"
import { generateMasterKey, parseMasterKeys } from "../../src/credentials/Envelope.js"
import { MigrationsLive } from "../../src/db/Database.js"
import { Transaction } from "../../src/db/Repository.js"
import { asId } from "../../src/domain/Ids.js"
import { secretFilePath } from "../../src/runtime/Secrets.js"
import { EventLogLive } from "../../src/webhooks/FanOut.js"
import { makePkcs12 } from "../support/certificates.js"
import { databaseLayer, testDatabases } from "../support/Databases.js"
import { cnpj } from "../support/taxIds.js"

const K1 = generateMasterKey("k1")
const K2 = generateMasterKey("k2")

const vaultWith = (keys: string) =>
  Layer.mergeAll(CredentialService.layer, CredentialVault.layer).pipe(
    Layer.provide(Layer.effect(MasterKeys, parseMasterKeys(keys))),
    Layer.provide(EventLogLive),
    Layer.provide([AppConfigTest(), Transaction.layer])
  )

const newTenantWithCredential = (keys: string) =>
  Effect.gen(function*() {
    // The test certificates are valid from an hour ago; the TestClock starts at 1970.
    yield* TestClock.setTime(Date.now())
    const sql = yield* SqlClient.SqlClient
    const taxId = cnpj()
    const tenantId = asId("tenant", `ten_vault${randomBytes(8).toString("hex")}`)
    yield* sql`INSERT INTO tenants (id, name, tax_id, monthly_quota, created_at) VALUES (${tenantId}, ${"Vault Ltda"}, ${taxId}, ${100}, ${new Date()})`
    const password = randomBytes(6).toString("hex")
    const p12 = makePkcs12({ cn: `VAULT LTDA:${taxId}`, cnpjOid: taxId, password })
    const credential = yield* Effect.provide(
      Effect.flatMap(CredentialService, (service) =>
        service.upload(tenantId, {
          pkcs12: Buffer.from(p12.pfx).toString("base64"),
          password: Redacted.make(password)
        })),
      vaultWith(keys)
    )
    return { tenantId, credentialId: credential.id, p12 }
  })

const envelopeOf = (id: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      Effect.map(
        sql<
          { envelope: string; masterKeyId: string }
        >`SELECT envelope, master_key_id FROM credentials WHERE id = ${id}`,
        (rows) => rows[0]!
      )
  )

const der = (pem: string) => createPrivateKey(pem).export({ type: "pkcs8", format: "der" })

for (const database of testDatabases) {
  layer(Layer.provideMerge(MigrationsLive, databaseLayer(database)), { timeout: 60_000 })(
    `credential vault (${database})`,
    (it) => {
      it.effect("hands over the active certificate and private key in memory", () =>
        Effect.gen(function*() {
          const { credentialId, p12, tenantId } = yield* newTenantWithCredential(K1)
          const material = yield* Effect.provide(
            Effect.flatMap(CredentialVault, (vault) => vault.activeFor(tenantId)),
            vaultWith(K1)
          )
          expect(material.credentialId).toBe(credentialId)
          expect(der(Redacted.value(material.privateKeyPem)).equals(der(p12.privateKeyPem))).toBe(true)
          expect(material.certificatePem).toContain("BEGIN CERTIFICATE")
          expect(String(material.privateKeyPem)).toBe("<redacted>")
          const nobody = asId("tenant", "ten_nobody")
          const none = yield* Effect.provide(
            Effect.flatMap(CredentialVault, (vault) => Effect.flip(vault.activeFor(nobody))),
            vaultWith(K1)
          )
          expect(none._tag).toBe("NoActiveCredential")
        }))

      it.effect("rotates the master key: old envelopes still open, then are re-wrapped under the new key id", () =>
        Effect.gen(function*() {
          const { credentialId, p12, tenantId } = yield* newTenantWithCredential(K1)
          const before = yield* envelopeOf(credentialId)
          expect(before.masterKeyId).toBe("k1")
          expect(before.envelope.startsWith("v1:k1:")).toBe(true)

          // Step 1: the new key first, the old one still listed. Everything still opens.
          const rotated = vaultWith(`${K2},${K1}`)
          const opened = yield* Effect.provide(
            Effect.flatMap(CredentialVault, (vault) => vault.activeFor(tenantId)),
            rotated
          )
          expect(der(Redacted.value(opened.privateKeyPem)).equals(der(p12.privateKeyPem))).toBe(true)

          // Step 2: the start-up re-wrap moves every envelope under k2; only the wrapped data key changes.
          const result = yield* Effect.provide(Effect.flatMap(CredentialVault, (vault) => vault.rewrapAll), rotated)
          expect(result.currentKeyId).toBe("k2")
          expect(result.rewrapped).toBeGreaterThanOrEqual(1)
          expect(result.failed).toBe(0)
          const after = yield* envelopeOf(credentialId)
          expect(after.masterKeyId).toBe("k2")
          expect(after.envelope.startsWith("v1:k2:")).toBe(true)
          expect(after.envelope.split(":")[3]).toBe(before.envelope.split(":")[3])
          expect(after.envelope.split(":")[2]).not.toBe(before.envelope.split(":")[2])
          const again = yield* Effect.provide(Effect.flatMap(CredentialVault, (vault) => vault.rewrapAll), rotated)
          expect(again.rewrapped).toBe(0)

          // Step 3: the old key can go.
          const onlyNew = yield* Effect.provide(
            Effect.flatMap(CredentialVault, (vault) => vault.activeFor(tenantId)),
            vaultWith(K2)
          )
          expect(der(Redacted.value(onlyNew.privateKeyPem)).equals(der(p12.privateKeyPem))).toBe(true)
          const onlyOld = yield* Effect.provide(
            Effect.flatMap(CredentialVault, (vault) => Effect.flip(vault.activeFor(tenantId))),
            vaultWith(K1)
          )
          expect(onlyOld._tag).toBe("CredentialUnreadable")
        }))

      it.effect("an envelope copied onto another credential does not open", () =>
        Effect.gen(function*() {
          const a = yield* newTenantWithCredential(K1)
          const b = yield* newTenantWithCredential(K1)
          const sql = yield* SqlClient.SqlClient
          const stolen = yield* envelopeOf(a.credentialId)
          yield* sql`UPDATE credentials SET envelope = ${stolen.envelope} WHERE id = ${b.credentialId}`
          const error = yield* Effect.provide(
            Effect.flatMap(CredentialVault, (vault) => Effect.flip(vault.activeFor(b.tenantId))),
            vaultWith(K1)
          )
          expect(error._tag).toBe("CredentialUnreadable")
        }))
    }
  )
}

describe("secrets at start-up", () => {
  const withDataDir = <A, E>(f: (dir: string) => Effect.Effect<A, E>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "etd-secrets-"))),
      f,
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )

  const unset = { credentialsMasterKey: Option.none(), paymentProviderWebhookSecret: Option.none() }

  it.effect("development: generated once into DATA_DIR (0600), reused afterwards, and never logged", () =>
    withDataDir((dataDir) =>
      Effect.gen(function*() {
        const logs: Array<string> = []
        const capture = Logger.layer([Logger.make(({ message }) => logs.push(JSON.stringify(message)))])
        const config = AppConfigTest({ ...unset, production: false, dataDir })
        const build = Effect.all([MasterKeys, PaymentProviderSecret]).pipe(
          Effect.provide(Layer.merge(MasterKeysLive, PaymentProviderSecretLive)),
          Effect.provide(config),
          Effect.provide(capture)
        )
        const [ring, secret] = yield* build
        const keyFile = secretFilePath(dataDir, MASTER_KEY_FILE)
        expect(statSync(keyFile).mode & 0o777).toBe(0o600)
        const stored = readFileSync(keyFile, "utf8").trim()
        expect(stored.startsWith(`${ring.current.id}:`)).toBe(true)
        expect(Redacted.value(secret).startsWith("whsec_")).toBe(true)
        expect(logs.join("\n")).toContain("CREDENTIALS_MASTER_KEY is not set")
        expect(logs.join("\n")).not.toContain(stored.split(":")[1])
        expect(logs.join("\n")).not.toContain(Redacted.value(secret).slice(6))

        const [ringAgain, secretAgain] = yield* build
        expect(Buffer.from(ringAgain.current.key).equals(Buffer.from(ring.current.key))).toBe(true)
        expect(Redacted.value(secretAgain)).toBe(Redacted.value(secret))
      })
    ))

  it.effect("production: a missing or malformed secret stops the start with a clear message", () =>
    withDataDir((dataDir) =>
      Effect.gen(function*() {
        const start = (overrides: Parameters<typeof AppConfigTest>[0]) =>
          Effect.exit(
            Effect.all([MasterKeys, PaymentProviderSecret]).pipe(
              Effect.provide(Layer.merge(MasterKeysLive, PaymentProviderSecretLive)),
              Effect.provide(AppConfigTest({ production: true, dataDir, ...overrides }))
            )
          )
        const messageOf = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "")
        const missingKey = yield* start({ credentialsMasterKey: Option.none() })
        expect(Exit.isFailure(missingKey)).toBe(true)
        expect(messageOf(missingKey)).toContain("CREDENTIALS_MASTER_KEY is not set. It is required in production")
        const missingSecret = yield* start({ paymentProviderWebhookSecret: Option.none() })
        expect(messageOf(missingSecret)).toContain("PAYMENT_PROVIDER_WEBHOOK_SECRET is not set")
        const badKey = yield* start({ credentialsMasterKey: Option.some(Redacted.make("k1:tooshort")) })
        expect(messageOf(badKey)).toContain("CREDENTIALS_MASTER_KEY entry 1")
        expect(messageOf(badKey)).not.toContain("tooshort")
        const badSecret = yield* start({ paymentProviderWebhookSecret: Option.some(Redacted.make("not-a-secret!")) })
        expect(messageOf(badSecret)).toContain("must be whsec_<base64>")
        // Nothing was generated.
        expect(() => statSync(secretFilePath(dataDir, MASTER_KEY_FILE))).toThrow()
      })
    ))
})
