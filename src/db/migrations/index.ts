import { Migrator } from "@effect/sql"
import foundation from "./0001_foundation.js"
import authoritySimulator from "./0002_authority_simulator.js"
import documents from "./0003_documents.js"

/** Ordered by id; the Migrator records each applied id in `etd_migrations`. */
export const migrations = Migrator.fromRecord({
  "0001_foundation": foundation,
  "0002_authority_simulator": authoritySimulator,
  "0003_documents": documents
})
