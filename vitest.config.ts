import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/load/**", "node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // PGlite boots a WASM Postgres per test file; two cores, so two forks at a time.
    pool: "forks",
    maxWorkers: 2
  }
})
