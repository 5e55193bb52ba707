/**
 * `npm run build` (run by `npm install`), last step: the web dashboard (dashboard/, SPEC §15) with
 * Vite into dist/dashboard. Text files are also written compressed (`.br`, `.gz`) here, once, so
 * the service sends them compressed without spending its own CPU on it at run time.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { brotliCompressSync, constants, gzipSync } from "node:zlib"
import { build } from "vite"

await build({ configFile: "dashboard/vite.config.ts", logLevel: "warn" })

const COMPRESSIBLE = /\.(?:html|js|css|svg|json)$/
const files = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)]
  )
for (const file of files("dist/dashboard")) {
  if (!COMPRESSIBLE.test(file)) continue
  const content = readFileSync(file)
  writeFileSync(
    `${file}.br`,
    brotliCompressSync(content, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: content.length }
    })
  )
  writeFileSync(`${file}.gz`, gzipSync(content, { level: 9 }))
}
