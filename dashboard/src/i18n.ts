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

/** The client decodes the API's RFC 3339 strings into `Date`s; the chart's days stay strings. */
type Instant = Date | string | null | undefined

export const formatDateTime = (iso: Instant, lang: Lang) =>
  iso == null
    ? "—"
    : new Date(iso).toLocaleString(locale(lang), { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }) + " UTC"

export const formatDate = (iso: Instant, lang: Lang) =>
  iso == null ? "—" : new Date(iso).toLocaleDateString(locale(lang), { dateStyle: "medium", timeZone: "UTC" })

/** Centavos as reais (SPEC §2: money is integer minor units). */
export const formatMoney = (cents: number, lang: Lang) =>
  new Intl.NumberFormat(locale(lang), { style: "currency", currency: "BRL" }).format(cents / 100)

export const formatNumber = (value: number, lang: Lang) => new Intl.NumberFormat(locale(lang)).format(value)

/** A CNPJ (also the alphanumeric one) as 00.000.000/0000-00 and a CPF as 000.000.000-00; anything else as it came. */
export const formatTaxId = (taxId: string) =>
  /^[0-9A-Z]{12}[0-9]{2}$/.test(taxId)
    ? `${taxId.slice(0, 2)}.${taxId.slice(2, 5)}.${taxId.slice(5, 8)}/${taxId.slice(8, 12)}-${taxId.slice(12)}`
    : /^[0-9]{11}$/.test(taxId)
    ? `${taxId.slice(0, 3)}.${taxId.slice(3, 6)}.${taxId.slice(6, 9)}-${taxId.slice(9)}`
    : taxId
