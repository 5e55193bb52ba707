/**
 * The layering of src/ (ARCHITECTURE.md), and the dashboard's one way into it, checked by
 * `npm run depcruise` in CI.
 * Dependencies point one way: a module's Http.ts → its services → its repositories → db/, and
 * everything may use domain/. The composition root (src/*.ts: Api.ts, App.ts, main.ts) wires
 * every module together, so cycles through it are not cycles between modules.
 */
/**
 * The contract: what the published client (client/, built by scripts/build-client.mjs) bundles.
 * domain/Tokens.ts is the server's token hashing (node:crypto, @noble/hashes), not contract.
 */
const CONTRACT = "^src/(Api\\.ts$|[^/]+/Api\\.ts$|client/|domain/(?!Tokens\\.ts$))"

/**
 * Infrastructure folders: what every feature module (auth, tenants, keys, documents, authority,
 * credentials, webhooks, billing, system, events) builds on.
 */
const INFRASTRUCTURE = "(db|http|queue|telemetry|ratelimit|runtime|domain)"

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "contract-imports-only-contract",
      severity: "error",
      comment: "The contract (Api.ts files, domain/, client/) is published as the typed client: it may import only " +
        "itself and `effect`, never a service, repository, db/, telemetry or a Node or server package. What only " +
        "the server needs goes beside it (e.g. ApiDocument.ts).",
      from: { path: CONTRACT },
      // Wherever the package manager puts effect (a hoisted or linked node_modules too).
      to: { pathNot: [CONTRACT, "(^|/)node_modules/effect/"] }
    },
    {
      name: "dashboard-uses-only-the-contract",
      severity: "error",
      comment: "The web dashboard (dashboard/) is a client like any other: of src/ it imports only the typed client " +
        "and the contract it is derived from, never server code.",
      from: { path: "^dashboard/" },
      to: { path: "^src/", pathNot: CONTRACT }
    },
    {
      name: "no-circular",
      severity: "error",
      comment: "A file must not import itself back through others.",
      from: { path: "^src/" },
      to: { circular: true }
    },
    {
      name: "no-folder-cycles",
      severity: "error",
      comment: "Modules (folders of src/) must not depend on each other in a loop; shared schemas go to domain/, " +
        "and a module that must call back into another does it through a tag it defines (e.g. events' EventFanOut).",
      scope: "folder",
      from: { path: "^src/[^/]+$" },
      to: { circular: true, viaNot: "^src$" }
    },
    {
      name: "domain-is-a-leaf",
      severity: "error",
      comment: "domain/ holds schemas, ids and errors every module shares: it imports nothing of ours.",
      from: { path: "^src/domain/" },
      to: { path: "^src/", pathNot: "^src/domain/" }
    },
    {
      name: "infrastructure-imports-no-feature",
      severity: "error",
      comment: "Infrastructure (db/, http/, queue/, telemetry/, ratelimit/, runtime/, domain/) serves every feature " +
        "module and imports none of them: what a feature must plug in (the authentication middleware, a worker's " +
        "job) lives in the feature and is wired by the composition root (src/*.ts), or goes through a tag the " +
        "infrastructure defines. Any other folder of src/ counts as a feature, so a new module is covered too.",
      from: { path: `^src/${INFRASTRUCTURE}/` },
      to: { path: "^src/[^/]+/", pathNot: `^src/${INFRASTRUCTURE}/` }
    },
    {
      name: "repositories-use-only-db-and-domain",
      severity: "error",
      comment: "A repository is SQL for its module's tables: it imports only db/ and domain/.",
      from: { path: "^src/[^/]+/[^/]*Repo\\.ts$" },
      to: { path: "^src/", pathNot: "^src/(db|domain)/" }
    },
    {
      name: "no-foreign-repositories",
      severity: "error",
      comment: "A module reaches another module's tables through that module's service, never its repository.",
      from: { path: "^src/([^/]+)/" },
      to: { path: "^src/[^/]+/[^/]*Repo\\.ts$", pathNot: "^src/$1/" }
    },
    {
      name: "documents-know-only-the-authority-port",
      severity: "error",
      comment: "Documents reach the tax authority through its port (authority/TaxAuthority.ts): which protocol a " +
        "target speaks, its ids and its XML are the authority's business.",
      from: { path: "^src/documents/" },
      to: { path: "^src/authority/", pathNot: "^src/authority/(TaxAuthority|GoodsAuthority)\\.ts$" }
    },
    {
      name: "service-never-imports-the-local-authority",
      severity: "error",
      comment: "The local authority (tools/local-authority/) is a program of its own that imitates the national " +
        "system for tests and customers' CI; the service must not depend on it.",
      from: { path: "^src/" },
      to: { path: "^tools/" }
    },
    {
      name: "no-unresolvable",
      severity: "error",
      from: {},
      to: { couldNotResolve: true }
    }
  ],
  options: {
    // Packages are leaves of the graph, not left out of it: contract-imports-only-contract judges them.
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"]
    }
  }
}
