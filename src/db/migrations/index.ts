import { Migrator } from "@effect/sql"
import foundation from "./0001_foundation.js"

/** Ordered by id; the Migrator records each applied id in `etd_migrations`. */
export const migrations = Migrator.fromRecord({
  "0001_foundation": foundation
})
