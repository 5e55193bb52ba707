import { randomBytes } from "node:crypto"

/** Valid CNPJs (check digits computed) so every tenant in a run has its own. */
export const cnpj = (): string => {
  const digits = Array.from(randomBytes(12), (b) => b % 10)
  const check = (base: Array<number>) => {
    const weights = base.length === 12 ? [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] : [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
    const sum = base.reduce((acc, d, i) => acc + d * weights[i]!, 0)
    const rest = sum % 11
    return rest < 2 ? 0 : 11 - rest
  }
  const d1 = check(digits)
  const d2 = check([...digits, d1])
  return [...digits, d1, d2].join("")
}

const ALPHANUMERIC = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

/**
 * A valid alphanumeric CNPJ (issued from July 2026): 12 characters [0-9A-Z], at least one a
 * letter, then the two numeric check digits, each character weighing its char code minus 48.
 */
export const alphanumericCnpj = (): string => {
  const body = Array.from(randomBytes(12), (b) => ALPHANUMERIC[b % ALPHANUMERIC.length]!)
  body[0] = ALPHANUMERIC[10 + (randomBytes(1)[0]! % 26)]!
  const check = (chars: Array<string>) => {
    const weights = chars.length === 12 ? [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] : [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
    const rest = chars.reduce((acc, c, i) => acc + (c.charCodeAt(0) - 48) * weights[i]!, 0) % 11
    return rest < 2 ? "0" : String(11 - rest)
  }
  const d1 = check(body)
  return [...body, d1, check([...body, d1])].join("")
}
