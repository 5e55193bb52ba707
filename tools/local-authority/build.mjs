/**
 * The local authority's own build (run by `npm run build`): one self-contained file,
 * dist/local-authority.js, started by `npm run authority:local`. It is a separate program from the
 * service, so it shares no chunks with the service's bundle; it reuses the service's SEFIN protocol
 * code (the DPS, NFS-e and event formats, the signature, the schemas) by importing it.
 */
import { build } from "esbuild"

await build({
  entryPoints: { "local-authority": "tools/local-authority/main.ts" },
  outdir: "dist",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  // Packages that read their own files at run time (libxml2's WebAssembly, pdfkit's fonts) or are CommonJS.
  packages: "external",
  logLevel: "warning"
})
