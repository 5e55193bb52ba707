/**
 * Who is reporting: the service's name (`OTEL_SERVICE_NAME`), its version (the package's, so a
 * deployment's traces, metrics and logs say which release produced them) and this process's
 * instance id (several instances share one name).
 */
import { Config } from "effect"
import { randomUUID } from "node:crypto"
import packageJson from "../../package.json" with { type: "json" }

export const serviceVersion: string = packageJson.version

export const serviceInstanceId = randomUUID()

export const serviceNameConfig = Config.String("OTEL_SERVICE_NAME").pipe(Config.withDefault("etd-service"))
