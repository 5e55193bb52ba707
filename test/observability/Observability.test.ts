/**
 * The SREs' kit in observability/ (issue 12): the alert rules load and pass their promtool unit
 * tests, every alert is exercised by them and has its runbook, the Prometheus configuration is valid,
 * the Grafana dashboard is well-formed, the alerts and the dashboard use only metric names of the
 * catalogue (observability/metrics.md, which lists exactly what telemetry/Metrics.ts exports), and the
 * collector's pipelines use only components it defines.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { load } from "js-yaml"
import { spawnSync } from "node:child_process"
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { prometheusNames } from "../../src/telemetry/Metrics.js"
import { hasTool } from "../support/tools.js"

const dir = fileURLToPath(new URL("../../observability/", import.meta.url))
const path = (name: string) => join(dir, name)
const read = (name: string) => readFileSync(path(name), "utf8")

const hasPromtool = hasTool("promtool")
/** The test's title, saying why it is skipped when promtool is missing. */
const withPromtool = (title: string) =>
  hasPromtool ? title : `${title} [skipped: promtool (Debian package prometheus) is not installed]`

const scratch = mkdtempSync(join(tmpdir(), "etd-observability-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const promtool = (...args: ReadonlyArray<string>) => {
  const run = spawnSync("promtool", args, { encoding: "utf8" })
  return { status: run.status, output: `${run.stdout}${run.stderr}` }
}

// ---- The alert rules, as far as these checks read them.
const Rule = Schema.Struct({
  alert: Schema.String,
  expr: Schema.String,
  for: Schema.optional(Schema.String),
  labels: Schema.Struct({ severity: Schema.Literals(["critical", "warning"]) }),
  annotations: Schema.Struct({ summary: Schema.String, description: Schema.String, runbook_url: Schema.String })
})
const RuleFile = Schema.Struct({
  groups: Schema.Array(Schema.Struct({ name: Schema.String, rules: Schema.Array(Rule) }))
})
const ruleFile = Schema.decodeUnknownSync(RuleFile)(load(read("alerts.yml")))
const rules = ruleFile.groups.flatMap((group) => group.rules)
const alertNames = [...new Set(rules.map((rule) => rule.alert))]

// ---- The metric catalogue: the first column of metrics.md's table, with each histogram's series.
const catalogue = [...read("metrics.md").matchAll(/^\| `([a-z_:][a-z0-9_:]*)` \| (histogram|counter|gauge) \|/gm)]
  .map(([, name, type]) => ({ name: name!, type: type! }))
const seriesOf = ({ name, type }: { name: string; type: string }) =>
  type === "histogram" ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name]
/** Series Prometheus makes itself: a target's health and the state of alerts. */
const prometheusOwn = ["up", "ALERTS"]
const knownSeries = new Set([...catalogue.flatMap(seriesOf), ...prometheusOwn])

// PromQL words that are not metric names: aggregations, functions, operators, modifiers.
const promqlWords = new Set([
  "sum",
  "min",
  "max",
  "avg",
  "count",
  "group",
  "stddev",
  "stdvar",
  "topk",
  "bottomk",
  "quantile",
  "count_values",
  "rate",
  "irate",
  "increase",
  "delta",
  "idelta",
  "deriv",
  "predict_linear",
  "resets",
  "changes",
  "histogram_quantile",
  "absent",
  "absent_over_time",
  "present_over_time",
  "scalar",
  "vector",
  "time",
  "timestamp",
  "abs",
  "ceil",
  "floor",
  "round",
  "clamp",
  "clamp_min",
  "clamp_max",
  "sort",
  "sort_desc",
  "label_replace",
  "label_join",
  "avg_over_time",
  "min_over_time",
  "max_over_time",
  "sum_over_time",
  "count_over_time",
  "last_over_time",
  "quantile_over_time",
  "and",
  "or",
  "unless",
  "bool",
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "offset",
  "inf",
  "nan"
])

/**
 * The metric names an expression selects: what is left once strings, label matchers, ranges, label
 * lists, offsets, Grafana variables and PromQL's own words are taken out.
 */
const metricNames = (expr: string): ReadonlyArray<string> => {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, "\"\"")
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
    .replace(/\boffset\s+\d+[smhdwy]/g, " ")
    .replace(/\$\{?\w+\}?/g, " ")
  return [...new Set((bare.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? []).filter((word) => !promqlWords.has(word)))]
}

describe("the metric-name reader", () => {
  it("finds the metrics of an expression and nothing else", () => {
    expect(metricNames(
      "histogram_quantile(0.99, sum by (le, http_route) (rate(http_server_request_duration_seconds_bucket{job=\"etd-service\", le!=\"x\"}[5m]))) > 1" +
        " and sum by (http_route) (rate(etd_typo_total{job=~\"$job\"}[$__rate_interval])) or up unless up offset 10m"
    )).toEqual(["http_server_request_duration_seconds_bucket", "etd_typo_total", "up"])
  })

  it("reads the catalogue of metrics.md", () => {
    expect(catalogue.length).toBeGreaterThan(10)
    expect(knownSeries).toContain("http_server_request_duration_seconds_bucket")
    expect(knownSeries).toContain("etd_queue_oldest_age_seconds")
    expect(knownSeries).toContain("etd_api_key_exposures_total")
  })
})

describe("metrics.md", () => {
  it("documents exactly the metrics the service exports (telemetry/Metrics.ts), under their Prometheus names", () => {
    expect(catalogue.map((metric) => metric.name).sort()).toEqual([...prometheusNames.values()].sort())
  })
})

describe("alerts.yml", () => {
  it.skipIf(!hasPromtool)(withPromtool("is valid for promtool check rules (lint included)"), () => {
    const run = promtool("check", "rules", "--lint=all", "--lint-fatal", path("alerts.yml"))
    expect(run.output).toContain("SUCCESS")
    expect(run.status).toBe(0)
  })

  it.skipIf(!hasPromtool)(withPromtool("passes its unit tests (promtool test rules alerts.test.yml)"), () => {
    const run = promtool("test", "rules", path("alerts.test.yml"))
    expect(run.output).toContain("SUCCESS")
    expect(run.status).toBe(0)
  })

  it.skipIf(!hasPromtool)(
    withPromtool("expects every alert to fire somewhere in the unit tests: without the rules, each one fails"),
    () => {
      // With no rules at all, each expectation of a firing alert fails and names its alert; an alert that
      // no test expects to fire would be missing from the failures.
      copyFileSync(path("alerts.test.yml"), join(scratch, "alerts.test.yml"))
      writeFileSync(join(scratch, "alerts.yml"), JSON.stringify({ groups: [] }))
      const run = promtool("test", "rules", join(scratch, "alerts.test.yml"))
      expect(run.status).not.toBe(0)
      for (const name of alertNames) expect(run.output, name).toContain(`alertname: ${name},`)
    }
  )

  it("gives every alert a severity, a summary, a description and a runbook that exists", () => {
    expect(alertNames.length).toBeGreaterThan(5)
    for (const rule of rules) {
      expect(rule.annotations.runbook_url, rule.alert).toBe(`observability/runbooks/${rule.alert}.md`)
      expect(existsSync(path(`runbooks/${rule.alert}.md`)), `runbook of ${rule.alert}`).toBe(true)
      expect(rule.annotations.summary.trim(), rule.alert).not.toBe("")
      expect(rule.annotations.description.trim(), rule.alert).not.toBe("")
    }
  })

  it("has no runbook without its alert", () => {
    const runbooks = readdirSync(path("runbooks")).filter((file) => file.endsWith(".md") && file !== "README.md")
    expect(runbooks.map((file) => file.replace(/\.md$/, "")).sort()).toEqual([...alertNames].sort())
  })

  it("uses only metric names of the catalogue", () => {
    for (const rule of rules) {
      const names = metricNames(rule.expr)
      expect(names.length, `${rule.alert} selects no metric`).toBeGreaterThan(0)
      for (const name of names) expect(knownSeries, `${rule.alert}: ${name}`).toContain(name)
    }
  })
})

describe("prometheus.yml", () => {
  it.skipIf(!hasPromtool)(withPromtool("is valid for promtool check config, with the rule files it loads"), () => {
    // The token file of the scrape job is the deployment's secret: check against a stand-in.
    const tokenFile = "/etc/prometheus/secrets/etd-metrics-token"
    const config = read("prometheus.yml")
    expect(config).toContain(`credentials_file: ${tokenFile}`)
    writeFileSync(join(scratch, "etd-metrics-token"), "stand-in\n")
    writeFileSync(join(scratch, "prometheus.yml"), config.replaceAll(tokenFile, join(scratch, "etd-metrics-token")))
    copyFileSync(path("alerts.yml"), join(scratch, "alerts.yml"))
    const run = promtool("check", "config", "--lint=all", "--lint-fatal", join(scratch, "prometheus.yml"))
    expect(run.output).toContain("SUCCESS: 1 rule files found")
    expect(run.status).toBe(0)
  })

  it("scrapes the job the alerts select and loads alerts.yml", () => {
    const Config = Schema.Struct({
      rule_files: Schema.Array(Schema.String),
      scrape_configs: Schema.Array(
        Schema.Struct({ job_name: Schema.String, metrics_path: Schema.optional(Schema.String) })
      )
    })
    const config = Schema.decodeUnknownSync(Config)(load(read("prometheus.yml")))
    expect(config.rule_files).toEqual(["alerts.yml"])
    expect(config.scrape_configs.map((job) => [job.job_name, job.metrics_path])).toContainEqual([
      "etd-service",
      "/metrics"
    ])
    expect(
      rules.filter((rule) => rule.expr.includes("job=")).every((rule) => rule.expr.includes("job=\"etd-service\""))
    ).toBe(true)
  })
})

// ---- The Grafana dashboard.
const Target = Schema.Struct({
  expr: Schema.String,
  refId: Schema.String,
  datasource: Schema.Struct({ type: Schema.String, uid: Schema.String })
})
const Panel = Schema.Struct({
  id: Schema.Number,
  type: Schema.String,
  title: Schema.String,
  gridPos: Schema.Struct({ h: Schema.Number, w: Schema.Number, x: Schema.Number, y: Schema.Number }),
  targets: Schema.optional(Schema.Array(Target))
})
const Dashboard = Schema.Struct({
  schemaVersion: Schema.Number,
  uid: Schema.String,
  panels: Schema.Array(Panel),
  templating: Schema.Struct({
    list: Schema.Array(Schema.Struct({
      name: Schema.String,
      type: Schema.String,
      query: Schema.optional(Schema.Unknown),
      definition: Schema.optional(Schema.String)
    }))
  }),
  annotations: Schema.Struct({ list: Schema.Array(Schema.Struct({ expr: Schema.optional(Schema.String) })) })
})

describe("grafana/etd-service.json", () => {
  const dashboard = Schema.decodeUnknownSync(Dashboard)(JSON.parse(read("grafana/etd-service.json")))
  const panels = dashboard.panels.filter((panel) => panel.type !== "row")

  it("is a dashboard of schema 39 whose data source is the DS_PROMETHEUS variable", () => {
    expect(dashboard.schemaVersion).toBe(39)
    expect(dashboard.templating.list).toContainEqual(
      expect.objectContaining({ name: "DS_PROMETHEUS", type: "datasource", query: "prometheus" })
    )
  })

  it("gives every panel a unique id and at least one query on ${DS_PROMETHEUS}", () => {
    const ids = dashboard.panels.map((panel) => panel.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(panels.length).toBeGreaterThan(10)
    for (const panel of panels) {
      expect(panel.targets?.length ?? 0, panel.title).toBeGreaterThan(0)
      for (const target of panel.targets ?? []) {
        expect(target.expr.trim(), panel.title).not.toBe("")
        expect(target.datasource, panel.title).toEqual({ type: "prometheus", uid: "${DS_PROMETHEUS}" })
      }
      const refIds = (panel.targets ?? []).map((target) => target.refId)
      expect(new Set(refIds).size, panel.title).toBe(refIds.length)
    }
  })

  it("lays the panels out on the 24-column grid without overlaps", () => {
    const cells = new Map<string, string>()
    for (const panel of dashboard.panels) {
      const { h, w, x, y } = panel.gridPos
      expect(x + w, panel.title).toBeLessThanOrEqual(24)
      for (let row = y; row < y + h; row++) {
        for (let column = x; column < x + w; column++) {
          const key = `${row}:${column}`
          expect(cells.get(key), `${panel.title} overlaps`).toBeUndefined()
          cells.set(key, panel.title)
        }
      }
    }
  })

  it("uses only metric names of the catalogue, and shows every one of them", () => {
    const queries = [
      ...panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ where: panel.title, expr: target.expr }))),
      ...dashboard.annotations.list.flatMap((annotation) =>
        annotation.expr === undefined ? [] : [{ where: "annotation", expr: annotation.expr }]
      ),
      // A variable's `label_values(metric, label)`: its metric.
      ...dashboard.templating.list.flatMap((variable) =>
        variable.definition === undefined
          ? []
          : [{ where: variable.name, expr: variable.definition.replace(/^label_values\((.*),\s*\w+\)$/, "$1") }]
      )
    ]
    const used = new Set<string>()
    for (const { where, expr } of queries) {
      const names = metricNames(expr)
      expect(names.length, `${where} selects no metric`).toBeGreaterThan(0)
      for (const name of names) {
        expect(knownSeries, `${where}: ${name}`).toContain(name)
        used.add(name)
      }
    }
    for (const metric of catalogue) {
      expect(seriesOf(metric).some((series) => used.has(series)), `${metric.name} is on no panel`).toBe(true)
    }
  })
})

// ---- The collector: its pipelines may use only the components it defines.
const Components = Schema.Record(Schema.String, Schema.Unknown)
const Collector = Schema.Struct({
  extensions: Components,
  receivers: Components,
  processors: Components,
  exporters: Components,
  service: Schema.Struct({
    extensions: Schema.Array(Schema.String),
    pipelines: Schema.Record(
      Schema.String,
      Schema.Struct({
        receivers: Schema.Array(Schema.String),
        processors: Schema.Array(Schema.String),
        exporters: Schema.Array(Schema.String)
      })
    )
  })
})
const Protocol = Schema.Struct({
  endpoint: Schema.String,
  auth: Schema.optional(Schema.Struct({ authenticator: Schema.String }))
})
const OtlpReceiver = Schema.Struct({ protocols: Schema.Struct({ grpc: Protocol, http: Protocol }) })

describe("otel-collector.yaml", () => {
  const collector = Schema.decodeUnknownSync(Collector)(load(read("otel-collector.yaml")))

  it("builds its traces and metrics pipelines from defined components only", () => {
    const pipelines = Object.entries(collector.service.pipelines)
    expect(pipelines.map(([name]) => name).sort()).toEqual(["metrics", "traces"])
    for (const [name, pipeline] of pipelines) {
      for (const receiver of pipeline.receivers) {
        expect(Object.keys(collector.receivers), `${name}: ${receiver}`).toContain(receiver)
      }
      for (const processor of pipeline.processors) {
        expect(Object.keys(collector.processors), `${name}: ${processor}`).toContain(processor)
      }
      for (const exporter of pipeline.exporters) {
        expect(Object.keys(collector.exporters), `${name}: ${exporter}`).toContain(exporter)
      }
      expect(pipeline.exporters.length, name).toBeGreaterThan(0)
      // memory_limiter refuses data before anything else spends memory on it; batch groups what is left.
      expect(pipeline.processors[0], name).toBe("memory_limiter")
      expect(pipeline.processors.at(-1), name).toBe("batch")
    }
    for (const extension of collector.service.extensions) expect(Object.keys(collector.extensions)).toContain(extension)
  })

  it("receives OTLP over gRPC (4317) and HTTP (4318), authenticated by an enabled extension", () => {
    const otlp = Schema.decodeUnknownSync(OtlpReceiver)(collector.receivers["otlp"])
    expect(otlp.protocols.grpc.endpoint).toMatch(/:4317$/)
    expect(otlp.protocols.http.endpoint).toMatch(/:4318$/)
    for (const protocol of [otlp.protocols.grpc, otlp.protocols.http]) {
      expect(protocol.auth).toBeDefined()
      expect(collector.service.extensions).toContain(protocol.auth!.authenticator)
    }
  })

  it("sends traces over OTLP and metrics to Prometheus", () => {
    const { metrics, traces } = collector.service.pipelines
    expect(traces!.exporters.every((exporter) => exporter.split("/")[0] === "otlp")).toBe(true)
    expect(
      metrics!.exporters.some((exporter) => ["prometheus", "prometheusremotewrite"].includes(exporter.split("/")[0]!))
    ).toBe(true)
  })
})
