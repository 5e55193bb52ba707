// The npm registry this project is built against serves only the packages for this platform, so
// `npm install` records no lock entries for other platforms' optional binaries (rollup's, esbuild's,
// msgpackr's…), and `npm ci` then refuses the lock as out of sync. This adds those entries as
// optional ones; npm skips an optional package that it cannot or need not install.
// Run after changing dependencies: `node scripts/complete-lockfile.cjs`.
const fs = require("node:fs")
const path = require("node:path")
const file = path.join(__dirname, "..", "package-lock.json")
const lock = JSON.parse(fs.readFileSync(file, "utf8"))
const packages = lock.packages
let added = 0
for (const [location, entry] of Object.entries(packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${location}/node_modules/${name}`
    const hoisted = `node_modules/${name}`
    if (packages[nested] || packages[hoisted]) continue
    const version = String(range).replace(/^[\^~=]/, "")
    packages[hoisted] = { version, optional: true }
    added++
  }
}
const sorted = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b)))
)
lock.packages = sorted
fs.writeFileSync(file, JSON.stringify(lock, null, 2) + "\n")
console.log(`added ${added} optional lock entries`)
