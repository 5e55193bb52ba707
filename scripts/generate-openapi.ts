/** Writes schemas/openapi.json from the contract. `npm run openapi`; a test fails when it is stale. */
import { OpenApi } from "effect/http-api"
import { writeFileSync } from "node:fs"
import { ApiDocument } from "../src/ApiDocument.js"

export const renderOpenApi = () => JSON.stringify(OpenApi.fromApi(ApiDocument), null, 2) + "\n"

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(new URL("../schemas/openapi.json", import.meta.url), renderOpenApi())
  console.log("wrote schemas/openapi.json")
}
