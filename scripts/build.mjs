/**
 * `npm run build` (run by `npm install`): the service as plain JavaScript in dist/, so `npm start`
 * runs `node` with no compiler in the process. esbuild bundles our code with Effect's: only the
 * modules the service uses are loaded (importing the `effect` barrel alone costs ~50 MiB of RSS and
 * a third of the start-up), in a few files instead of hundreds. Packages that read their own files
 * at run time (PGlite's WebAssembly, pdfkit's fonts, libxml2) or are CommonJS stay in node_modules.
 * Type checking is `npm run typecheck`'s job; this only strips types.
 *
 * It also makes, once, the embedded database's empty cluster (PGlite's initdb, ~3 s here) and
 * packs it beside the bundle: a first start on a new DATA_DIR unpacks it instead of running
 * initdb (src/db/PgliteClient.ts).
 *
 * dist/ is not emptied first: the chunks a running service loads on first use (the PDF renderer,
 * the reference page) are named by their content, so a rebuild under a running service (an
 * upgrade in place) leaves the ones it may still ask for. `rm -rf dist` clears earlier builds.
 * esbuild and the other build tools are devDependencies: install with them (`npm ci`), then
 * `npm prune --omit=dev` for a slim image.
 */
import { PGlite } from "@electric-sql/pglite"
import { build } from "esbuild"
import { writeFileSync } from "node:fs"

const external = [
  "@electric-sql/pglite",
  "@noble/hashes",
  "@xmldom/xmldom",
  "ioredis",
  "ipaddr.js",
  "libxml2-wasm",
  "node-forge",
  "pdfkit",
  "pg",
  "qrcode",
  // CommonJS that requires Node's modules at run time: kept as they are (both declared dependencies).
  "undici",
  "ws",
  "xml-crypto"
]

await build({
  entryPoints: {
    main: "src/main.ts",
    // The operator's commands (npm run operator), over the same layers as the service.
    operator: "src/operator.ts",
    // Started as a worker thread by Pkcs12Opener, from beside the chunk that holds it.
    Pkcs12Thread: "src/credentials/Pkcs12Thread.ts"
  },
  outdir: "dist",
  bundle: true,
  splitting: true,
  platform: "node",
  format: "esm",
  target: "node22",
  external,
  logLevel: "warning"
})

const cluster = await PGlite.create()
writeFileSync("dist/pglite-cluster.tar.gz", Buffer.from(await (await cluster.dumpDataDir("gzip")).arrayBuffer()))
await cluster.close()
