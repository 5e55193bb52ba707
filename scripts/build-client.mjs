/**
 * `npm run build:client` (part of `npm run build`): the typed client as its own package in client/,
 * for integrators (`npm pack client`, or publish it). The contract's sources (src/client/index.ts →
 * src/Api.ts → the modules' Api.ts → src/domain/) are bundled twice, as ESM (dist/index.js) and
 * CommonJS (dist/index.cjs), with `effect` left out: it is the package's one dependency, at the
 * service's exact version, so a consumer that also uses Effect shares one copy. The declarations
 * (dist/types/) come from `tsc` over the same sources, without Node's types.
 *
 * It refuses to build a package that would not match the service: another version, another
 * `effect`, another dependency, or a source outside the contract (which `npm run depcruise` also
 * forbids, rule contract-imports-only-contract).
 */
import { build } from "esbuild"
import { execFileSync } from "node:child_process"
import { readFileSync, rmSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const readJson = (path) => JSON.parse(readFileSync(`${root}/${path}`, "utf8"))
const service = readJson("package.json")
const client = readJson("client/package.json")

const problems = []
if (client.version !== service.version) {
  problems.push(`client/package.json has version ${client.version}, the service ${service.version}`)
}
if (JSON.stringify(client.dependencies) !== JSON.stringify({ effect: service.dependencies.effect })) {
  problems.push(`client/package.json must depend on exactly { "effect": "${service.dependencies.effect}" }`)
}
if (problems.length > 0) throw new Error(`build-client: ${problems.join("; ")}`)

const dist = `${root}/client/dist`
rmSync(dist, { recursive: true, force: true })

// The contract as dependency-cruiser names it; anything else in the bundle is a leak of the server.
const CONTRACT = /^src\/(Api\.ts$|[^/]+\/Api\.ts$|client\/|domain\/(?!Tokens\.ts$))/

for (const [format, file] of [["esm", "index.js"], ["cjs", "index.cjs"]]) {
  const result = await build({
    absWorkingDir: root,
    entryPoints: ["src/client/index.ts"],
    outfile: `${dist}/${file}`,
    bundle: true,
    format,
    // Neither Node nor a browser: the contract needs only `effect` and the global fetch.
    platform: "neutral",
    target: "es2022",
    external: ["effect", "effect/*"],
    legalComments: "none",
    metafile: true,
    logLevel: "warning"
  })
  const inputs = Object.keys(result.metafile.inputs)
  const outside = inputs.filter((path) => !CONTRACT.test(path))
  const imports = Object.values(result.metafile.outputs).flatMap((output) => output.imports.map((i) => i.path))
  const foreign = imports.filter((path) => path !== "effect" && !path.startsWith("effect/"))
  if (outside.length > 0 || foreign.length > 0) {
    throw new Error(
      `build-client: the ${format} bundle reaches outside the contract: ${[...outside, ...foreign].join(", ")}`
    )
  }
}

execFileSync(process.execPath, [`${root}/node_modules/typescript/bin/tsc`, "-p", `${root}/client/tsconfig.json`], {
  stdio: "inherit"
})
console.log("built client/dist (ESM, CommonJS, declarations)")
