/**
 * How the DANFE writes what the NF-e says, in pt-BR: amounts without a currency sign (the columns
 * and boxes say what they hold), quantities and unit values with the decimals the note carries,
 * the note's number grouped as the manual shows it, and the words for the codes it prints.
 */
import { EMPTY, formatNumber, present } from "../danfse/Format.js"

/** "178.22" → "178,22"; absent → "0,00", as the boxes of a DANFE's totals print a zero. */
export const amount = (raw: string | undefined): string => present(raw) ? formatNumber(raw) : "0,00"

/** An optional amount of an item's column: absent prints nothing. */
export const columnAmount = (raw: string | undefined): string => present(raw) ? formatNumber(raw) : ""

/**
 * A quantity or unit value with its insignificant zeros dropped, keeping at least two decimals:
 * "5.8990000000" → "5,899", "2.0000" → "2,00".
 */
export const trimmedDecimal = (raw: string): string => {
  const [integer = "0", fraction = ""] = raw.split(".")
  const kept = fraction.replace(/0+$/, "").padEnd(2, "0")
  return formatNumber(`${integer}.${kept}`)
}

/** "1042" → "000.001.042": the nine digits of nNF in groups of three. */
export const noteNumber = (raw: string): string => raw.padStart(9, "0").replace(/(\d{3})(?=\d)/g, "$1.")

export const seriesText = (raw: string): string => raw.padStart(3, "0")

/** The date part of a dhEmi, as written ("2026-11-10T11:30:15-03:00" → "10/11/2026"). */
export const dateOf = (raw: string): string => {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(raw)
  return match === null ? raw : `${match[3]}/${match[2]}/${match[1]}`
}

/** modFrete (NT 2016.002). */
export const FREIGHT_MODES: Readonly<Record<string, string>> = {
  "0": "0 - Remetente (CIF)",
  "1": "1 - Destinatário (FOB)",
  "2": "2 - Terceiros",
  "3": "3 - Próprio Remetente",
  "4": "4 - Próprio Destinatário",
  "9": "9 - Sem Transporte"
}

/** tPag: the means of payment. */
export const PAYMENT_METHODS: Readonly<Record<string, string>> = {
  "01": "Dinheiro",
  "02": "Cheque",
  "03": "Cartão de Crédito",
  "04": "Cartão de Débito",
  "05": "Crédito Loja",
  "10": "Vale Alimentação",
  "11": "Vale Refeição",
  "12": "Vale Presente",
  "13": "Vale Combustível",
  "15": "Boleto Bancário",
  "16": "Depósito Bancário",
  "17": "PIX Dinâmico",
  "18": "Transferência Bancária",
  "19": "Programa de Fidelidade",
  "20": "PIX Estático",
  "90": "Sem Pagamento",
  "99": "Outros"
}

export const paymentMethod = (code: string, description: string | undefined): string =>
  present(description) ? description : PAYMENT_METHODS[code] ?? code

export const orEmpty = (raw: string | undefined): string => present(raw) ? raw : EMPTY
