/**
 * What every answer must be, whatever was sent (SPEC §2, issue 16): no 5xx, no dropped connection,
 * a JSON error body with `code` and `message` for every error, an `x-request-id`, no internals (stack
 * traces, SQL errors, server paths, runtime errors), no credential of the request, and no echo of
 * more than 1 KiB of the input in an error.
 */
import type { Outcome, WireRequest } from "./send.js"

/**
 * Marks of internals in a body. A match the request itself carried is an echo of the client's own
 * text (a stored name, a quoted invalid value), not a leak.
 */
const INTERNALS: ReadonlyArray<readonly [name: string, pattern: RegExp, errorsOnly: boolean]> = [
  ["a stack trace", /\n\s+at\s|\bat\s+(?:async\s+)?[\w$.<>]+\s+\((?:file:|node:|\/)/gu, false],
  [
    "a server path",
    /\/tmp\/|\/work\/|\/home\/|\/usr\/|\/var\/|node_modules|file:\/\/|\b[\w-]+\.(?:ts|js|mjs|cjs):\d+/gu,
    false
  ],
  [
    "a database error",
    /SQLSTATE|syntax error at or near|violates [\w -]*constraint|duplicate key value|relation "[^"]*"|column "[^"]*"|invalid input syntax for|current transaction is aborted|invalid byte sequence for encoding|unsupported Unicode escape sequence|PgliteError|SqlError|\bpg_[a-z_]+/giu,
    false
  ],
  ["an SQL statement", /\b(?:SELECT\s[\s\S]{0,200}?\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b/giu, true],
  [
    "a JavaScript error",
    /\b(?:TypeError|RangeError|ReferenceError|EvalError|Maximum call stack)\b|\[object Object\]/gu,
    false
  ],
  ["an Effect failure", /FiberFailure|UnknownError|"_tag":"(?:Die|Fail|Interrupt)"/gu, false]
]

const ECHO_LIMIT = 1024
const BLOCK = ECHO_LIMIT / 2

/** Every string (keys too) of a JSON value; iterative, as the value may be nested thousands deep. */
const stringLeaves = (root: unknown): Array<string> => {
  const found: Array<string> = []
  const pending: Array<unknown> = [root]
  while (pending.length > 0) {
    const value = pending.pop()
    if (typeof value === "string") found.push(value)
    else if (Array.isArray(value)) { for (const item of value) pending.push(item) }
    else if (typeof value === "object" && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        found.push(key)
        pending.push(item)
      }
    }
  }
  return found
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Every text the client sent as it went on the wire: the path (also decoded), header values, the body as text. */
const inputsOf = (request: WireRequest): ReadonlyArray<string> => {
  const body = request.body === undefined ? "" : Buffer.from(request.body).toString("utf8")
  let path = request.path
  try {
    path = decodeURIComponent(request.path)
  } catch {
    // A malformed escape stays as sent.
  }
  return [request.path, path, ...Object.values(request.headers), body]
}

/**
 * Whether the client sent `text`: on the wire, or inside a JSON string of its body (where it was
 * escaped). The body is parsed only when a suspicious match needs it: it may be a megabyte.
 */
const sentBy = (inputs: ReadonlyArray<string>, text: string): boolean =>
  inputs.some((input) => input.includes(text)) ||
  stringLeaves(parse(inputs[inputs.length - 1]!)).some((leaf) => leaf.includes(text))

/**
 * Whether `output` repeats more than 1 KiB of `input` in one run. Any such run contains a whole
 * 512-character block of the input that starts at a multiple of 512, so only those blocks are
 * looked for, and each one found is grown both ways to the run's real length.
 */
const echoes = (input: string, output: string): boolean => {
  if (input.length <= ECHO_LIMIT) return false
  for (let at = 0; at + BLOCK <= input.length; at += BLOCK) {
    const block = input.slice(at, at + BLOCK)
    let found = output.indexOf(block)
    while (found !== -1) {
      let before = 0
      while (before < at && before < found && input[at - before - 1] === output[found - before - 1]) before++
      let length = BLOCK
      while (
        at + length < input.length && found + length < output.length && input[at + length] === output[found + length]
      ) length++
      if (before + length > ECHO_LIMIT) return true
      // Any other start inside this run belongs to the same run: look past it.
      found = output.indexOf(block, found + length - BLOCK + 1)
    }
  }
  return false
}

/** The passwords a JSON or form body carried (secrets the answer must not repeat). */
const passwordsIn = (inputs: ReadonlyArray<string>): ReadonlyArray<string> => {
  const found: Array<string> = []
  for (const input of inputs) {
    for (const match of input.matchAll(/"password"\s*:\s*"((?:[^"\\]|\\.){8,})"/gu)) {
      const value = parse(`"${match[1]}"`)
      if (typeof value === "string") found.push(value)
    }
  }
  return found
}

const header = (headers: Readonly<Record<string, unknown>>, name: string): string => {
  const value = headers[name]
  return Array.isArray(value) ? value.join(", ") : typeof value === "string" ? value : ""
}

/** Everything wrong with one answer; empty when it is as the SPEC says. */
export const problemsOf = (
  request: WireRequest,
  outcome: Outcome,
  secrets: ReadonlyArray<string>
): ReadonlyArray<string> => {
  if (outcome._tag === "Dropped") return [`the connection was dropped: ${outcome.reason}`]
  const { headers, status, text } = outcome.response
  const problems: Array<string> = []
  const isError = status < 200 || status >= 300
  if (status >= 500) problems.push(`answered ${status}`)
  if (header(headers, "x-request-id") === "") problems.push("no x-request-id header")
  const json = parse(text)
  if (isError) {
    const body = typeof json === "object" && json !== null && !Array.isArray(json)
      ? json as Record<string, unknown>
      : undefined
    if (!header(headers, "content-type").includes("application/json")) {
      problems.push(`error content-type is ${header(headers, "content-type") || "missing"}`)
    }
    if (body === undefined) problems.push("the error body is not a JSON object")
    else {
      if (typeof body["code"] !== "string" || !/^[a-z][a-z0-9_]*$/u.test(body["code"])) {
        problems.push("the error has no snake_case code")
      }
      if (typeof body["message"] !== "string" || body["message"].length === 0) problems.push("the error has no message")
    }
  }
  const inputs = inputsOf(request)
  for (const [name, pattern, errorsOnly] of INTERNALS) {
    if (errorsOnly && !isError) continue
    const leak = [...text.matchAll(pattern)].find((match) => !sentBy(inputs, match[0]))
    if (leak !== undefined) problems.push(`the body shows ${name}: ${JSON.stringify(leak[0])}`)
  }
  const visible = `${text}\u0000${stringLeaves(json).join("\u0000")}`
  for (const secret of [...secrets, ...passwordsIn(inputs)]) {
    if (secret.length >= 8 && visible.includes(secret)) problems.push("the body repeats a credential of the request")
  }
  if (isError && inputs.some((input) => echoes(input, visible))) {
    problems.push("the error repeats more than 1 KiB of the input")
  }
  return problems
}
