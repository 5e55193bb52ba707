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

