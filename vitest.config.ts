import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/load/**", "node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // A poll waits for what a loaded machine may take seconds to show (a page's fetch and render
    // behind the other worker's test); vitest's default of one second made browser tests flaky.
    expect: { poll: { timeout: 15_000 } },
    // PGlite boots a WASM Postgres per test file; two cores, so two forks at a time.
    pool: "forks",
    maxWorkers: 2,
    // Node 24's V8 can abort a process (SIGTRAP, "jit_page_->allocations_.erase(addr) == 1") when
    // its WebAssembly code collector frees code that tier-up replaced; PGlite and libxml2 are
    // WebAssembly. Keeping that code avoids the path (docs/operations.md, "Memory").
    execArgv: ["--no-wasm-code-gc"]
  }
})
