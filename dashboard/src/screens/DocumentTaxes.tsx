/**
 * A document's tax content on its detail, grouped as the DANFSe groups it: municipal taxation
 * (ISSQN), federal taxation, the note's totals, the approximate taxes, IBS/CBS, and the foreign
 * trade of an export (shown with the service, as the DANFSe does). Only the groups the document
 * has are shown. Money in reais and percentages with the language's decimal mark.
 *
 * The API grows: a figure or field this screen has no words for yet is still shown, under its API
 * name, in the group it belongs to, rather than hidden from the person comparing page and PDF.
 */
import type { ComponentChildren } from "preact"
import { formatHundredths, formatMoney, formatPercent, type Lang, useLang, useTexts } from "../i18n.js"
import { taxText, type TaxTexts } from "./DocumentTaxTexts.js"
import type { Document } from "./DocumentTexts.js"

type Tax = Document["tax"]

type Row = readonly [label: string, value: ComponentChildren, kind?: "num" | "total"]

/** The amounts' fields this screen names; any other is a figure it shows under its API name. */
const KNOWN_AMOUNTS: ReadonlySet<string> = new Set([
  "source",
  "services",
  "unconditional_discount",
  "conditional_discount",
  "deductions",
  "benefit_reduction",
  "base",
  "iss_rate",
  "iss_amount",
  "iss_withheld",
  "federal_withheld",
  "total_withheld",
  "net",
  "total",
  "ibs_cbs"
])
const IBS_CBS_FIELD = /ibs|cbs/i
const KNOWN_TRADE: ReadonlySet<string> = new Set([
  "mode",
  "relationship",
  "currency",
  "foreign_amount",
  "provider_support",
  "taker_support",
  "temporary_goods",
  "import_declaration",
  "export_registration",
  "share_with_mdic"
])

const Group = (
  { id, title, rows }: { readonly id: string; readonly title: string; readonly rows: ReadonlyArray<Row> }
) =>
  rows.length === 0 ? null : (
    <section class="tax-group" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <table class="amounts">
        <caption class="visually-hidden">{title}</caption>
        <tbody>
          {rows.map(([label, value, kind]) => (
            <tr key={label} class={kind === "total" ? "total" : undefined}>
              <th scope="row">{label}</th>
              <td class={kind === undefined ? undefined : "num"}>{value}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )

const Code = ({ children }: { readonly children: ComponentChildren }) => <span class="mono">{children}</span>

/**
 * A value the screen has no words for, formatted by its shape: centavos as money, a `…rate` or
 * `…percent` as a percentage, a flag as yes/no, anything else as it came.
 */
const anyValue = (key: string, value: unknown, lang: Lang, t: TaxTexts): ComponentChildren =>
  value === null || value === undefined
    ? "—"
    : typeof value === "number"
    ? formatMoney(value, lang)
    : typeof value === "boolean"
    ? t(value ? "yes" : "no")
    : typeof value === "string" && /(rate|percent)$/.test(key) && /^[0-9]+(\.[0-9]+)?$/.test(value)
    ? formatPercent(value, lang)
    : typeof value === "string"
    ? <Code>{value}</Code>
    : <Code>{JSON.stringify(value)}</Code>

/** The fields of `object` not in `known`, nested objects flattened (`a.b`), each under its API name. */
const otherRows = (
  object: object | undefined,
  known: ReadonlySet<string>,
  lang: Lang,
  t: TaxTexts,
  prefix = ""
): ReadonlyArray<Row> =>
  object === undefined ? [] : Object.entries(object).flatMap(([key, value]): ReadonlyArray<Row> =>
    known.has(key)
      ? []
      : value !== null && typeof value === "object" && !Array.isArray(value)
      ? otherRows(value as object, new Set(), lang, t, `${prefix}${key}.`)
      : [[`${prefix}${key}`, anyValue(key, value, lang, t), typeof value === "number" ? "num" : undefined]]
  )

const present = <A extends unknown>(value: A | undefined | null, row: (value: A) => Row): ReadonlyArray<Row> =>
  value === undefined || value === null ? [] : [row(value)]

/** The foreign trade of an export (`comExt`), shown after the service as the DANFSe does. */
export const ForeignTradeGroup = ({ tax }: { readonly tax: Tax }) => {
  const t = useTexts(taxText)
  const { lang } = useLang()
  const trade = tax.foreign_trade
  if (trade === undefined) return null
  const rows: ReadonlyArray<Row> = [
    [t("mode"), t(`mode_${trade.mode}`)],
    [t("relationship"), t(`relationship_${trade.relationship}`)],
    [t("currency"), <Code>{trade.currency}</Code>],
    [t("foreignAmount"), formatHundredths(trade.foreign_amount, lang), "num"],
    ...present(trade.provider_support, (code) => [t("providerSupport"), <Code>{code}</Code>]),
    ...present(trade.taker_support, (code) => [t("takerSupport"), <Code>{code}</Code>]),
    ...present(trade.temporary_goods, (goods) => [t("temporaryGoods"), t(`temporaryGoods_${goods}`)]),
    ...present(trade.import_declaration, (number) => [t("importDeclaration"), <Code>{number}</Code>]),
    ...present(trade.export_registration, (number) => [t("exportRegistration"), <Code>{number}</Code>]),
    ...present(trade.share_with_mdic, (shared) => [t("shareWithMdic"), t(shared ? "yes" : "no")]),
    ...otherRows(trade, KNOWN_TRADE, lang, t)
  ]
  return <Group id="tax-foreign-trade" title={t("foreignTrade")} rows={rows} />
}

/** Every tax group of the document after its service: ISSQN, federal, totals, approximate, IBS/CBS. */
export const TaxGroups = ({ document }: { readonly document: Document }) => {
  const t = useTexts(taxText)
  const { lang } = useLang()
  const { amounts, tax } = document
  const money = (cents: number) => formatMoney(cents, lang)
  const iss = tax.iss ?? {}
  const extraAmounts = Object.fromEntries(
    Object.entries(amounts).filter(([key]) => !KNOWN_AMOUNTS.has(key))
  )
  const extraIbsCbs = Object.fromEntries(Object.entries(extraAmounts).filter(([key]) => IBS_CBS_FIELD.test(key)))
  const extraOthers = Object.fromEntries(Object.entries(extraAmounts).filter(([key]) => !IBS_CBS_FIELD.test(key)))

  const municipal: ReadonlyArray<Row> = [
    [t("taxation"), `${t(`taxation_${iss.taxation ?? "taxable"}`)}, ${t(`withheldBy_${iss.withheld_by ?? "none"}`)}`],
    ...present(iss.immunity, (kind) => [t("immunity"), t(`immunity_${kind}`)]),
    ...present(iss.result_country, (country) => [t("resultCountry"), <Code>{country}</Code>]),
    ...present(iss.suspension, (suspension) => [
      t("suspension"),
      t(`suspension_${suspension.kind}`, { process: suspension.process_number })
    ]),
    ...present(iss.municipal_benefit, (benefit) => [t("benefit"), <Code>{benefit.id}</Code>]),
    ...present(iss.municipal_benefit?.reduction_rate, (rate) => [t("benefitRate"), formatPercent(rate, lang), "num"]),
    ...(amounts.benefit_reduction > 0
      ? [[t("benefitReduction"), money(amounts.benefit_reduction), "num"] as const]
      : []),
    [t("base"), money(amounts.base), "num"],
    [t("issRate"), amounts.iss_rate === null ? "—" : formatPercent(amounts.iss_rate, lang), "num"],
    [t("issAmount"), amounts.iss_amount === null ? "—" : money(amounts.iss_amount), "num"],
    [t("issWithheld"), money(amounts.iss_withheld), "num"]
  ]

  const federal = tax.federal
  const pisCofins = federal?.pis_cofins
  // `retention` names each contribution withheld; the older flag `withheld` means PIS and COFINS.
  const retention = pisCofins?.retention ??
    (pisCofins?.withheld === undefined ? undefined : { pis: pisCofins.withheld, cofins: pisCofins.withheld })
  const withheldNames = retention === undefined ? undefined : [
    ...(retention.pis ? ["PIS"] : []),
    ...(retention.cofins ? ["COFINS"] : []),
    ...(retention.csll === true ? ["CSLL"] : [])
  ]
  const federalRows: ReadonlyArray<Row> = federal === undefined ? [] : [
    ...present(pisCofins?.cst, (cst) => [t("pisCofinsCst"), <Code>{cst}</Code>]),
    ...present(pisCofins?.base, (base) => [t("pisCofinsBase"), money(base), "num"]),
    ...present(pisCofins?.pis_rate, (rate) => [t("pisRate"), formatPercent(rate, lang), "num"]),
    ...present(pisCofins?.pis_amount, (amount) => [t("pisAmount"), money(amount), "num"]),
    ...present(pisCofins?.cofins_rate, (rate) => [t("cofinsRate"), formatPercent(rate, lang), "num"]),
    ...present(pisCofins?.cofins_amount, (amount) => [t("cofinsAmount"), money(amount), "num"]),
    ...present(withheldNames, (names) => [
      t("pisCofinsWithheld"),
      names.length === 0 ? t("withheldNone") : `${names.join(", ")}: ${t("withheldYes")}`
    ]),
    ...otherRows(
      pisCofins,
      new Set(["cst", "base", "pis_rate", "pis_amount", "cofins_rate", "cofins_amount", "withheld", "retention"]),
      lang,
      t,
      "pis_cofins."
    ),
    ...present(federal.inss_withheld, (amount) => [t("inss"), money(amount), "num"]),
    ...present(federal.irrf_withheld, (amount) => [t("irrf"), money(amount), "num"]),
    ...present(federal.csll_withheld, (amount) => [t("csll"), money(amount), "num"]),
    ...otherRows(federal, new Set(["pis_cofins", "inss_withheld", "irrf_withheld", "csll_withheld"]), lang, t),
    [t("federalWithheld"), money(amounts.federal_withheld), "num"]
  ]

  const totals: ReadonlyArray<Row> = [
    [t("amountsSource"), amounts.source === "note" ? t("amountsFromNote") : t("amountsComputed")],
    [t("services"), money(amounts.services), "num"],
    ...(amounts.unconditional_discount > 0
      ? [[t("unconditionalDiscount"), money(amounts.unconditional_discount), "num"] as const]
      : []),
    ...(amounts.conditional_discount > 0
      ? [[t("conditionalDiscount"), money(amounts.conditional_discount), "num"] as const]
      : []),
    [t("deductions"), money(amounts.deductions), "num"],
    ...present(tax.deduction_rate, (rate) => [t("deductionRate"), formatPercent(rate, lang), "num"]),
    ...present(tax.deduction_documents, (documents) => [t("deductionDocuments"), String(documents.length), "num"]),
    [t("issWithheld"), money(amounts.iss_withheld), "num"],
    [t("federalWithheld"), money(amounts.federal_withheld), "num"],
    [t("totalWithheld"), money(amounts.total_withheld), "num"],
    ...otherRows(extraOthers, new Set(), lang, t),
    [t("net"), money(amounts.net), "num"],
    [t("total"), money(amounts.total), "total"]
  ]

  const approximate = tax.approximate_taxes
  const approximateRows: ReadonlyArray<Row> = approximate === undefined ? [] : [
    ...(approximate.amounts === undefined ? [] : [
      [t("approximateFederal"), money(approximate.amounts.federal), "num"] as const,
      [t("approximateState"), money(approximate.amounts.state), "num"] as const,
      [t("approximateMunicipal"), money(approximate.amounts.municipal), "num"] as const
    ]),
    ...(approximate.rates === undefined ? [] : [
      [t("approximateFederal"), formatPercent(approximate.rates.federal, lang), "num"] as const,
      [t("approximateState"), formatPercent(approximate.rates.state, lang), "num"] as const,
      [t("approximateMunicipal"), formatPercent(approximate.rates.municipal, lang), "num"] as const
    ]),
    ...present(approximate.simples_rate, (rate) => [t("simplesRate"), formatPercent(rate, lang), "num"])
  ]

  const reform = tax.ibs_cbs
  // The service's estimate before authorization, the note's own figures after; null while the
  // year's rates are unpublished and only the authority can compute them.
  const figures = amounts.ibs_cbs
  const figureRows: ReadonlyArray<Row> = figures === null || figures === undefined
    ? [[t("ibsCbsByAuthority"), t("ibsCbsByAuthorityText")]]
    : [
      [t("ibsCbsBase"), money(figures.base), "num"],
      [t("cbsRate"), formatPercent(figures.cbs_rate, lang), "num"],
      [t("stateIbsRate"), formatPercent(figures.state_ibs_rate, lang), "num"],
      [t("municipalIbsRate"), formatPercent(figures.municipal_ibs_rate, lang), "num"],
      [t("cbsAmount"), money(figures.cbs), "num"],
      [t("stateIbsAmount"), money(figures.state_ibs), "num"],
      [t("municipalIbsAmount"), money(figures.municipal_ibs), "num"],
      [t("ibsTotal"), money(figures.ibs_total), "num"],
      [t("noteTotal"), money(figures.note_total), "num"]
    ]
  const ibsCbsRows: ReadonlyArray<Row> = [
    ...(reform === undefined ? [] : [
      [t("operationIndicator"), <Code>{reform.operation_indicator}</Code>] as const,
      ...present(reform.personal_use, (personal) => [t("personalUse"), t(personal ? "yes" : "no")]),
      ...present(reform.destination, (destination) => [
        t("destination"),
        [destination.name, destination.tax_id ?? destination.nif, destination.email]
          .filter((part) => part !== undefined).join(" · ")
      ]),
      [t("cst"), <Code>{reform.cst}</Code>] as const,
      [t("classCode"), <Code>{reform.class_code}</Code>] as const,
      ...present(reform.regular_taxation, (regular) => [
        t("regularTaxation"),
        <Code>{regular.cst} / {regular.class_code}</Code>
      ]),
      ...present(reform.deferral, (deferral) => [
        t("deferral"),
        t("deferralShares", {
          state: formatPercent(deferral.state_ibs_percent, lang),
          municipal: formatPercent(deferral.municipal_ibs_percent, lang),
          cbs: formatPercent(deferral.cbs_percent, lang)
        })
      ])
    ]),
    ...(reform === undefined ? [] : figureRows),
    ...otherRows(extraIbsCbs, new Set(), lang, t)
  ]

  return (
    <>
      <Group id="tax-municipal" title={t("municipal")} rows={municipal} />
      <Group id="tax-federal" title={t("federal")} rows={federalRows} />
      <Group id="tax-totals" title={t("totals")} rows={totals} />
      <Group id="tax-approximate" title={t("approximate")} rows={approximateRows} />
      <Group id="tax-ibs-cbs" title={t("ibsCbs")} rows={ibsCbsRows} />
    </>
  )
}
