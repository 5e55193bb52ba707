/**
 * The overview (SPEC §15): the tenant's plan and billing status, this month's live quota, and a
 * chart of documents per day in each environment (with the same figures as a table, for screen
 * readers and for anyone who prefers numbers).
 */
import { useEffect, useRef } from "preact/hooks"
import uPlot from "uplot"
import "uplot/dist/uPlot.min.css"
import {
  formatDay,
  formatMonth,
  formatNumber,
  formatTaxId,
  type Lang,
  texts,
  type Translate,
  useLang,
  useTexts
} from "../i18n.js"
import { href } from "../router.js"
import { Async, Badge, Empty, useResource } from "../ui.js"
import { useWorkspace } from "../workspace.js"

const text = texts({
  en: {
    title: "Overview",
    plan: "Plan",
    status: "Billing status",
    status_active: "active",
    status_past_due: "past due",
    status_suspended: "suspended",
    suspendedHint: "Live issuing is suspended until the subscription is active again. Test keys keep working.",
    pastDueHint: "A payment failed. Live issuing continues, but update your payment details soon.",
    plan_free: "Free",
    quota: "Live documents this month ({period})",
    quotaUse: "{used} of {limit}",
    quotaNote: "Only live documents count; test documents are free.",
    chart: "Documents per day, last {days} days",
    live: "Live",
    test: "Test",
    date: "Date",
    table: "Show the figures as a table",
    totals: "{live} live and {test} test documents in the last {days} days.",
    nothingYet: "No documents in the last {days} days.",
    nothingYetHint: "Create a test API key, then issue a document with it from your backend.",
    createKey: "Create an API key",
    taxId: "Tax id",
    verified: "verified",
    unverified: "not verified",
    unverifiedHint: "Upload the company's A1 certificate to verify the tax id and issue live documents.",
    uploadCertificate: "Upload the certificate"
  },
  pt: {
    title: "Visão geral",
    plan: "Plano",
    status: "Situação da assinatura",
    status_active: "ativa",
    status_past_due: "pagamento pendente",
    status_suspended: "suspensa",
    suspendedHint:
      "A emissão em produção está suspensa até a assinatura voltar a ficar ativa. As chaves de teste continuam funcionando.",
    pastDueHint: "Um pagamento falhou. A emissão em produção continua, mas atualize seus dados de pagamento logo.",
    plan_free: "Gratuito",
    quota: "Documentos de produção neste mês ({period})",
    quotaUse: "{used} de {limit}",
    quotaNote: "Só documentos de produção contam; os de teste são gratuitos.",
    chart: "Documentos por dia, últimos {days} dias",
    live: "Produção",
    test: "Teste",
    date: "Data",
    table: "Mostrar os números em tabela",
    totals: "{live} documentos de produção e {test} de teste nos últimos {days} dias.",
    nothingYet: "Nenhum documento nos últimos {days} dias.",
    nothingYetHint: "Crie uma chave de API de teste e emita um documento com ela a partir do seu backend.",
    createKey: "Criar uma chave de API",
    taxId: "CNPJ/CPF",
    verified: "verificado",
    unverified: "não verificado",
    unverifiedHint: "Envie o certificado A1 da empresa para verificar o CNPJ e emitir documentos de produção.",
    uploadCertificate: "Enviar o certificado"
  }
})

const DAYS = 30

/** The axes' font (uPlot's own, set here so the labels' widths are measured in it). */
const AXIS_FONT = "12px system-ui, -apple-system, \"Segoe UI\", Roboto, \"Helvetica Neue\", Arial, sans-serif"
/** Room kept between two day labels, beside the widest label itself. */
const LABEL_GAP = 16

/** The widest of these labels, in CSS pixels, as the chart's canvas draws them. */
const widestLabel = (labels: ReadonlyArray<string>) => {
  const context = document.createElement("canvas").getContext("2d")
  if (context === null) return 0
  context.font = AXIS_FONT
  return Math.max(0, ...labels.map((label) => context.measureText(label).width))
}

/** The plans this service names itself; a plan the payment provider named is shown as it named it. */
const planName = (plan: string, t: Translate<keyof typeof text.en>) => plan === "free" ? t("plan_free") : plan

export const OverviewScreen = () => {
  const t = useTexts(text)
  const { lang } = useLang()
  const { api, tenant } = useWorkspace()
  const usage = useResource(() => api.usage.get({ params: { tenantId: tenant.id }, query: { days: DAYS } }), [
    tenant.id
  ])
  const { quota } = tenant
  const statusTone = tenant.status === "active" ? "ok" : tenant.status === "past_due" ? "warn" : "bad"
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">{tenant.name}</h1>
      <dl class="facts">
        <div>
          <dt>{t("taxId")}</dt>
          <dd>
            <span class="mono">{formatTaxId(tenant.tax_id)}</span>{" "}
            <Badge tone={tenant.verified ? "ok" : "muted"}>{t(tenant.verified ? "verified" : "unverified")}</Badge>
          </dd>
        </div>
        <div>
          <dt>{t("plan")}</dt>
          <dd>{planName(tenant.plan, t)}</dd>
        </div>
        <div>
          <dt>{t("status")}</dt>
          <dd>
            <Badge tone={statusTone}>{t(`status_${tenant.status}`)}</Badge>
          </dd>
        </div>
      </dl>
      {tenant.status === "suspended" && <p class="notice error">{t("suspendedHint")}</p>}
      {tenant.status === "past_due" && <p class="notice warning">{t("pastDueHint")}</p>}
      {!tenant.verified && (
        <p class="notice info">
          {t("unverifiedHint")} <a href={href("certificate")}>{t("uploadCertificate")}</a>
        </p>
      )}
      <h2 id="quota-title">{t("quota", { period: formatMonth(quota.period, lang) })}</h2>
      <div class="quota">
        <meter
          aria-labelledby="quota-title"
          min={0}
          max={quota.limit}
          low={quota.limit * 0.8}
          high={quota.limit * 0.99}
          optimum={0}
          value={quota.used}
        />
        <span>{t("quotaUse", { used: formatNumber(quota.used, lang), limit: formatNumber(quota.limit, lang) })}</span>
      </div>
      <p class="hint">{t("quotaNote")}</p>
      <h2>{t("chart", { days: DAYS })}</h2>
      <Async resource={usage.resource} onRetry={usage.reload}>
        {(value) => {
          const live = value.days.reduce((sum, day) => sum + day.live, 0)
          const test = value.days.reduce((sum, day) => sum + day.test, 0)
          if (live + test === 0) {
            return (
              <Empty title={t("nothingYet", { days: DAYS })}>
                <p>{t("nothingYetHint")}</p>
                <a class="button" href={href("keys")}>{t("createKey")}</a>
              </Empty>
            )
          }
          return (
            <>
              <p>{t("totals", { live: formatNumber(live, lang), test: formatNumber(test, lang), days: DAYS })}</p>
              <DailyChart days={value.days} labels={{ live: t("live"), test: t("test") }} lang={lang} />
              <details>
                <summary>{t("table")}</summary>
                <table>
                  <thead>
                    <tr>
                      <th scope="col">{t("date")}</th>
                      <th scope="col">{t("live")}</th>
                      <th scope="col">{t("test")}</th>
                    </tr>
                  </thead>
                  <tbody>
                    {value.days.map((day) => (
                      <tr key={day.date}>
                        <th scope="row">{formatDay(day.date, lang)}</th>
                        <td>{day.live}</td>
                        <td>{day.test}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </details>
            </>
          )
        }}
      </Async>
    </section>
  )
}

/** Bars per day, live beside test; redrawn to the container's width. */
const DailyChart = ({ days, labels, lang }: {
  readonly days: ReadonlyArray<{ readonly date: string; readonly live: number; readonly test: number }>
  readonly labels: { readonly live: string; readonly test: string }
  readonly lang: Lang
}) => {
  const container = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const element = container.current
    if (element === null) return
    const bars = uPlot.paths.bars!
    const dayLabel = new Intl.DateTimeFormat(lang === "pt" ? "pt-BR" : "en-GB", {
      day: "numeric",
      month: "short",
      timeZone: "UTC"
    })
    // uPlot picks the days between ticks so that ticks are at least `space` apart: the widest label
    // and a gap, so that on a phone's width fewer days are labelled instead of labels overlapping.
    const tickSpace = Math.ceil(
      widestLabel(days.map((day) => dayLabel.format(new Date(`${day.date}T00:00:00Z`)))) + LABEL_GAP
    )
    const data: uPlot.AlignedData = [
      days.map((day) => Date.parse(`${day.date}T00:00:00Z`) / 1000),
      days.map((day) => day.live),
      days.map((day) => day.test)
    ]
    const chart = new uPlot(
      {
        width: Math.max(element.clientWidth, 280),
        height: 240,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
        legend: { show: false },
        // Half a day of room on each side, so the first and last days' bars are drawn whole.
        scales: {
          x: { time: true, range: (_self, min, max) => [min - 43_200, max + 43_200] },
          y: { range: (_self, _min, max) => [0, Math.max(1, max)] }
        },
        // Days as the page's language writes them ("26 out", "26 Oct"), not uPlot's US month/day.
        axes: [{
          font: AXIS_FONT,
          space: tickSpace,
          values: (_self, ticks) => ticks.map((tick) => dayLabel.format(new Date(tick * 1000)))
        }, {
          font: AXIS_FONT,
          values: (_self, ticks) => ticks.map((tick) => (Number.isInteger(tick) ? String(tick) : ""))
        }],
        series: [
          {},
          {
            label: labels.live,
            fill: "#0b5cad",
            stroke: "#0b5cad",
            paths: bars({ size: [0.4, 24], align: -1 }),
            points: { show: false }
          },
          {
            label: labels.test,
            fill: "#b35c00",
            stroke: "#b35c00",
            paths: bars({ size: [0.4, 24], align: 1 }),
            points: { show: false }
          }
        ]
      },
      data,
      element
    )
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(element.clientWidth, 280), height: 240 }))
    resize.observe(element)
    return () => {
      resize.disconnect()
      chart.destroy()
    }
  }, [days, labels.live, labels.test, lang])
  // The canvas says nothing to a screen reader; the table below it says everything.
  return (
    <div aria-hidden="true">
      <div class="chart" ref={container} />
      <p class="legend">
        <span class="swatch live" /> {labels.live} <span class="swatch test" /> {labels.test}
      </p>
    </div>
  )
}
