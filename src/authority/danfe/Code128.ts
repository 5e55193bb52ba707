/**
 * Code 128, code set C (ISO/IEC 15417): the barcode of the access key on the DANFE, as the
 * national manual requires (MOC, annex II: "código de barras padrão CODE-128C"). Set C packs two
 * digits per symbol, so the 44 digits of a key are 22 symbols between the start, the check symbol
 * and the stop.
 *
 * The encoding is returned as alternating bar and space widths in modules, starting with a bar;
 * the caller scales a module to points and draws the bars.
 */

/**
 * The 107 symbols' patterns: six widths (bar, space, bar, space, bar, space) adding up to 11
 * modules, the stop's seven to 13. Indexed by the symbol's value.
 */
const PATTERNS = [
  "212222",
  "222122",
  "222221",
  "121223",
  "121322",
  "131222",
  "122213",
  "122312",
  "132212",
  "221213",
  "221312",
  "231212",
  "112232",
  "122132",
  "122231",
  "113222",
  "123122",
  "123221",
  "223211",
  "221132",
  "221231",
  "213212",
  "223112",
  "312131",
  "311222",
  "321122",
  "321221",
  "312212",
  "322112",
  "322211",
  "212123",
  "212321",
  "232121",
  "111323",
  "131123",
  "131321",
  "112313",
  "132113",
  "132311",
  "211313",
  "231113",
  "231311",
  "112133",
  "112331",
  "132131",
  "113123",
  "113321",
  "133121",
  "313121",
  "211331",
  "231131",
  "213113",
  "213311",
  "213131",
  "311123",
  "311321",
  "331121",
  "312113",
  "312311",
  "332111",
  "314111",
  "221411",
  "431111",
  "111224",
  "111422",
  "121124",
  "121421",
  "141122",
  "141221",
  "112214",
  "112412",
  "122114",
  "122411",
  "142112",
  "142211",
  "241211",
  "221114",
  "413111",
  "241112",
  "134111",
  "111242",
  "121142",
  "121241",
  "114212",
  "124112",
  "124211",
  "411212",
  "421112",
  "421211",
  "212141",
  "214121",
  "412121",
  "111143",
  "111341",
  "131141",
  "114113",
  "114311",
  "411113",
  "411311",
  "113141",
  "114131",
  "311141",
  "411131",
  "211412",
  "211214",
  "211232",
  "2331112"
] as const

const START_C = 105
const STOP = 106

/** The quiet zone the symbology asks on each side, in modules. */
export const QUIET_ZONE_MODULES = 10

/**
 * The bar and space widths, in modules, of `digits` in code set C. The digits must be an even
 * number of them (an access key's 44 are): set C has no symbol for a lone digit.
 */
export const code128C = (digits: string): ReadonlyArray<number> => {
  if (!/^(?:[0-9]{2})+$/.test(digits)) throw new Error("code set C encodes an even number of digits")
  const values = digits.match(/../g)!.map(Number)
  const check = values.reduce((sum, value, i) => sum + value * (i + 1), START_C) % 103
  return [START_C, ...values, check, STOP].flatMap((value) => [...PATTERNS[value]!].map(Number))
}
