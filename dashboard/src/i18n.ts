/**
 * Portuguese and English (SPEC §15). Each screen declares its own texts next to its code with
 * `texts({ en, pt })`, so the two languages of a screen are reviewed together and a missing
 * translation is a type error. The chosen language is a preference, not a secret: it is kept in
 * localStorage (nothing else is).
 */
import { createContext } from "preact"
import { useContext } from "preact/hooks"

export type Lang = "en" | "pt"

const LANG_KEY = "etd.lang"

export const initialLang = (): Lang => {
  const saved = localStorage.getItem(LANG_KEY)
  if (saved === "en" || saved === "pt") return saved
  return navigator.language.toLowerCase().startsWith("pt") ? "pt" : "en"
}

export const saveLang = (lang: Lang) => {
  localStorage.setItem(LANG_KEY, lang)
  document.documentElement.lang = lang === "pt" ? "pt-BR" : "en"
}

export const LangContext = createContext<{ readonly lang: Lang; readonly setLang: (lang: Lang) => void }>({
  lang: "en",
  setLang: () => {}
})

export const useLang = () => useContext(LangContext)

type Dictionary<K extends string> = { readonly [Key in K]: string }

/** A screen's texts; `{name}` in a text is filled from the call's parameters. */
export const texts = <K extends string>(dictionaries: { readonly en: Dictionary<K>; readonly pt: Dictionary<K> }) =>
  dictionaries

export type Translate<K extends string> = (key: K, params?: Readonly<Record<string, string | number>>) => string

export const useTexts = <K extends string>(
  dictionaries: { readonly en: Dictionary<K>; readonly pt: Dictionary<K> }
): Translate<K> => {
  const { lang } = useLang()
  return (key, params) => {
    const text = dictionaries[lang][key]
    return params === undefined
      ? text
      : text.replace(/\{(\w+)\}/g, (whole, name: string) => String(params[name] ?? whole))
  }
}

const locale = (lang: Lang) => (lang === "pt" ? "pt-BR" : "en-GB")

/**
 * Every instant is shown as a wall time in Brasília, named so: the DANFSe, the authority and the
 * tenant's customers all read Brasília time, and one page must not say 19:11 where the note says
 * 16:11. The zone's name is a place, the same word in both languages.
 */
const TIME_ZONE = "America/Sao_Paulo"
const ZONE_NAME = "Brasília"

/** An instant: the client decodes the API's RFC 3339 strings into `Date`s. */
type Instant = Date | string | null | undefined

const formatters = new Map<string, Intl.DateTimeFormat>()

/** Formatters are costly to build and a table formats hundreds of cells: one per language and style. */
const formatter = (lang: Lang, style: "dateTime" | "date" | "day" | "month") => {
  const name = `${lang}:${style}`
  let found = formatters.get(name)
  if (found === undefined) {
    found = new Intl.DateTimeFormat(
      locale(lang),
      style === "dateTime"
        ? { dateStyle: "medium", timeStyle: "short", timeZone: TIME_ZONE }
        : style === "date"
        ? { dateStyle: "medium", timeZone: TIME_ZONE }
        // Calendar days and months are no instants: read at UTC so no zone moves them.
        : style === "day"
        ? { dateStyle: "medium", timeZone: "UTC" }
        : { month: "long", year: "numeric", timeZone: "UTC" }
    )
    formatters.set(name, found)
  }
  return found
}

/** An instant's date and time in Brasília, with the zone said: "27 de nov. de 2026, 16:11 (Brasília)". */
export const formatDateTime = (instant: Instant, lang: Lang) =>
  instant == null ? "—" : `${formatter(lang, "dateTime").format(new Date(instant))} (${ZONE_NAME})`

/** The day an instant falls on in Brasília. */
export const formatDate = (instant: Instant, lang: Lang) =>
  instant == null ? "—" : formatter(lang, "date").format(new Date(instant))

/** A calendar day as the API writes it ("2026-11-27"), which belongs to no zone. */
export const formatDay = (day: string, lang: Lang) => formatter(lang, "day").format(new Date(`${day}T00:00:00Z`))

/** A month as the API writes it ("2026-11") in words: "novembro de 2026", "November 2026". */
export const formatMonth = (month: string, lang: Lang) =>
  /^\d{4}-\d{2}$/.test(month) ? formatter(lang, "month").format(new Date(`${month}-01T00:00:00Z`)) : month

const wallClock = new Intl.DateTimeFormat("en-GB", {
  timeZone: TIME_ZONE,
  hourCycle: "h23",
  year: "numeric",
  month: "2-digit",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit"
})

/** How far Brasília's wall clock is from UTC at an instant, in milliseconds (negative: behind). */
const zoneOffset = (at: number) => {
  const part = Object.fromEntries(wallClock.formatToParts(at).map(({ type, value }) => [type, Number(value)]))
  return Date.UTC(part["year"]!, part["month"]! - 1, part["day"]!, part["hour"]!, part["minute"]!, part["second"]!) -
    Math.floor(at / 1000) * 1000
}

/** The instant a calendar day ("2026-11-27") begins in Brasília, as the API's RFC 3339 UTC string. */
export const dayStart = (day: string) => {
  const midnightUtc = Date.parse(`${day}T00:00:00Z`)
  return new Date(midnightUtc - zoneOffset(midnightUtc)).toISOString()
}

/** Centavos as reais (SPEC §2: money is integer minor units). */
export const formatMoney = (cents: number, lang: Lang) =>
  new Intl.NumberFormat(locale(lang), { style: "currency", currency: "BRL" }).format(cents / 100)

export const formatNumber = (value: number, lang: Lang) => new Intl.NumberFormat(locale(lang)).format(value)

/** A percentage as the API writes it ("2.00", a decimal string) with the language's decimal mark: "2,00 %". */
export const formatPercent = (rate: string, lang: Lang) => `${lang === "pt" ? rate.replace(".", ",") : rate} %`

/** Hundredths of a currency other than the real (an export's value), with two decimals and no symbol. */
export const formatHundredths = (hundredths: number, lang: Lang) =>
  new Intl.NumberFormat(locale(lang), { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(hundredths / 100)

/** A CNPJ (also the alphanumeric one) as 00.000.000/0000-00 and a CPF as 000.000.000-00; anything else as it came. */
export const formatTaxId = (taxId: string) =>
  /^[0-9A-Z]{12}[0-9]{2}$/.test(taxId)
    ? `${taxId.slice(0, 2)}.${taxId.slice(2, 5)}.${taxId.slice(5, 8)}/${taxId.slice(8, 12)}-${taxId.slice(12)}`
    : /^[0-9]{11}$/.test(taxId)
    ? `${taxId.slice(0, 3)}.${taxId.slice(3, 6)}.${taxId.slice(6, 9)}-${taxId.slice(9)}`
    : taxId
