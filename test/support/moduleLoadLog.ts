/**
 * Loaded into a child process with `node --import`: writes `module loaded: <url>` to stderr for
 * every module whose URL matches MODULE_LOAD_LOG (a regular expression), so a test can tell when,
 * or whether, the process loaded it.
 */
import { registerHooks } from "node:module"

const pattern = process.env["MODULE_LOAD_LOG"]
if (pattern !== undefined) {
  const matches = new RegExp(pattern)
  registerHooks({
    load: (url, context, nextLoad) => {
      if (matches.test(url)) process.stderr.write(`module loaded: ${url}\n`)
      return nextLoad(url, context)
    }
  })
}
