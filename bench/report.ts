/** The bench's output: rows, throughput ratios, targets (met / not met), as markdown and as JSON. */
import * as Os from "node:os"
import type { Measurement } from "./load.ts"

/** "before": our server from another checkout (`--before`), for a before/after comparison in one run. */
export type ServerName = "ours" | "before" | "fastify" | "bare"

export interface Row {
  readonly scenario: string
  readonly server: ServerName
  readonly endpoint: string
  readonly requestsPerSecond: number | null
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  readonly errors: number
  /** Peak VmRSS of the server process during the scenario, MB; the database is another process. */
  readonly peakRssMb: number | null
  /**
   * CPU per request in the (median) measured run, µs: the server process, and every PostgreSQL process on the
   * machine. Unlike req/s these hardly move when something else loads the machine: the cost of the work itself.
   */
  readonly cpuServerUs: number | null
  readonly cpuPostgresUs: number | null
  readonly note: string
  /** Every round (health), or the one run. */
  readonly runs: ReadonlyArray<Measurement>
}

export interface Target {
  readonly target: string
  readonly measured: string
  /** null: the scenario it needs was not run. */
  readonly met: boolean | null
}

export interface Ratios {
  readonly oursOverFastify: number | null
  readonly oursOverBare: number | null
  /** With --before: this checkout over the other one, in the same run. */
  readonly oursOverBefore: number | null
}

export const TARGETS = {
  healthVsFastify: 1.0,
  p99AtRateMs: 25,
  rssMb: 200,
  analytics12mP50Ms: 50,
  /** Every read as cheap as health (issue 18): per request, warm, under load. */
  readServerUs: 250,
  readPostgresUs: 100
} as const

/** The read scenarios the per-request CPU target covers. */
const READS = ["projects", "analytics-", "revenue", "churn", "seo", "briefing", "signals"]

export const mb = (bytes: number | null): number | null => (bytes === null ? null : Math.round(bytes / 1024 / 1024))

const round2 = (n: number) => Math.round(n * 100) / 100

export const ratiosOf = (rows: ReadonlyArray<Row>): Ratios => {
  const rps = (server: ServerName) =>
    rows.find((r) => r.scenario === "health" && r.server === server)?.requestsPerSecond ?? null
  const ours = rps("ours")
  const ratio = (peer: number | null) => (ours === null || peer === null || peer === 0 ? null : round2(ours / peer))
  return {
    oursOverFastify: ratio(rps("fastify")),
    oursOverBare: ratio(rps("bare")),
    oursOverBefore: ratio(rps("before"))
  }
}

export const targetsOf = (rows: ReadonlyArray<Row>, ratios: Ratios, rate: number): ReadonlyArray<Target> => {
  const ours = rows.filter((r) => r.server === "ours")
  const rateRow = ours.find((r) => r.scenario === "rate")
  const analytics = ours.find((r) => r.scenario === "analytics-12m")
  const rss = ours.map((r) => r.peakRssMb).filter((x): x is number => x !== null)
  const peakRss = rss.length === 0 ? null : Math.max(...rss)
  return [
    {
      target: `health throughput ≥ ${TARGETS.healthVsFastify.toFixed(1)}× fastify`,
      measured: ratios.oursOverFastify === null ? "not run" : `${ratios.oursOverFastify}×`,
      met: ratios.oursOverFastify === null ? null : ratios.oursOverFastify >= TARGETS.healthVsFastify
    },
    {
      target: `health p99 < ${TARGETS.p99AtRateMs} ms at ${rate.toLocaleString("en-US")} req/s`,
      measured: rateRow === undefined ? "not run" : `${rateRow.p99} ms (at ${rateRow.requestsPerSecond} req/s)`,
      met: rateRow === undefined ? null : rateRow.p99 < TARGETS.p99AtRateMs
    },
    {
      target: `server RSS < ${TARGETS.rssMb} MB`,
      measured: peakRss === null ? "not measured" : `${peakRss} MB peak`,
      met: peakRss === null ? null : peakRss < TARGETS.rssMb
    },
    (() => {
      const reads = ours.filter((r) =>
        r.requestsPerSecond !== null &&
        READS.some((n) => r.scenario === n || (n.endsWith("-") && r.scenario.startsWith(n)))
      )
      const over = reads.filter((r) =>
        r.cpuServerUs === null || r.cpuServerUs > TARGETS.readServerUs || r.cpuPostgresUs === null ||
        r.cpuPostgresUs > TARGETS.readPostgresUs
      )
      return {
        target:
          `every read ≤ ${TARGETS.readServerUs} µs server CPU and ≤ ${TARGETS.readPostgresUs} µs PostgreSQL CPU per ` +
          `request`,
        measured: reads.length === 0 ? "not run" : over.length === 0
          ? `all ${reads.length} reads within`
          : `over: ${over.map((r) => `${r.scenario} ${show(r.cpuServerUs)}/${show(r.cpuPostgresUs)} µs`).join(", ")}`,
        met: reads.length === 0 ? null : over.length === 0
      }
    })(),
    {
      target: `analytics 12m p50 < ${TARGETS.analytics12mP50Ms} ms`,
      measured: analytics === undefined ? "not run" : `${analytics.p50} ms`,
      met: analytics === undefined ? null : analytics.p50 < TARGETS.analytics12mP50Ms
    }
  ]
}

export const machineInfo = () => {
  const cpus = Os.cpus()
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? "unknown",
    memoryGb: Math.round(Os.totalmem() / 1024 ** 3),
    node: process.version,
    platform: `${Os.platform()} ${Os.release()}`,
    // The machine may be shared: a load average near the core count at the start makes every figure suspect.
    loadAverageAtStart: Os.loadavg().map((l) => Math.round(l * 100) / 100)
  }
}

/** With --before: each measure of "ours" over the same measure of "before", per scenario (after/before). */
const beforeAfter = (rows: ReadonlyArray<Row>): Array<string> => {
  const pairs = rows.filter((r) => r.server === "ours").flatMap((after) => {
    const before = rows.find((r) => r.server === "before" && r.scenario === after.scenario)
    return before === undefined ? [] : [[after, before] as const]
  })
  if (pairs.length === 0) return []
  const pct = (
    a: number | null,
    b: number | null
  ) => (a === null || b === null || b === 0 ? "–" : `${a > b ? "+" : ""}${(((a - b) / b) * 100).toFixed(1)} %`)
  // Every round's CPU, not only the median round's: the per-request cost is what the comparison is about.
  const cpu = (r: Row) => {
    const xs = r.runs.map((m) => m.cpuUsPerRequest?.server).filter((x): x is number => typeof x === "number").sort((
      a,
      b
    ) => a - b)
    return xs.length === 0 ? null : xs[Math.floor((xs.length - 1) / 2)]
  }
  return [
    "| scenario | req/s before → after | p99 ms before → after | CPU µs/req (median round) before → after | peak RSS " +
    "MB before → after |",
    "|---|---|---|---|---|",
    ...pairs.map(([a, b]) =>
      `| ${a.scenario} | ${show(b.requestsPerSecond)} → ${show(a.requestsPerSecond)} (${
        pct(a.requestsPerSecond, b.requestsPerSecond)
      }) | ${b.p99} → ${a.p99} (${pct(a.p99, b.p99)}) | ${show(cpu(b))} → ${show(cpu(a))} (${pct(cpu(a), cpu(b))}) | ${
        show(b.peakRssMb)
      } → ${show(a.peakRssMb)} |`
    )
  ]
}

const show = (v: number | null) => (v === null ? "–" : String(v))
const mark = (met: boolean | null) => (met === null ? "–" : met ? "met" : "NOT met")

export const markdown = (input: {
  readonly rows: ReadonlyArray<Row>
  readonly ratios: Ratios
  readonly targets: ReadonlyArray<Target>
  readonly machine: ReturnType<typeof machineInfo>
  readonly header: string
}): string => {
  const m = input.machine
  const lines = [
    input.header,
    `Machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGb} GB, ${m.platform}, Node ${m.node}, load average ${
      m.loadAverageAtStart.join(" ")
    } at start`,
    ...(m.loadAverageAtStart[0] > m.cpus / 2
      ? [
        `WARNING: load average ${
          m.loadAverageAtStart[0]
        } on ${m.cpus} cores at the start: something else is using the CPU, the figures are not reliable.`
      ]
      : []),
    "",
    "| scenario | server | endpoint | req/s | p50 ms | p99 ms | non-2xx | errors | peak RSS MB | CPU µs/req server | " +
    "CPU µs/req postgres | note |",
    "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ...input.rows.map((r) =>
      `| ${r.scenario} | ${r.server} | ${r.endpoint} | ${
        show(r.requestsPerSecond)
      } | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} | ${show(r.peakRssMb)} | ${show(r.cpuServerUs)} | ${
        show(r.cpuPostgresUs)
      } | ${r.note} |`
    )
  ]
  if (input.ratios.oursOverFastify !== null || input.ratios.oursOverBare !== null) {
    lines.push(
      "",
      `Health throughput: ours/fastify ${show(input.ratios.oursOverFastify)}×, ours/bare ${
        show(input.ratios.oursOverBare)
      }×`
    )
  }
  const compared = beforeAfter(input.rows)
  if (compared.length > 0) lines.push("", "Before (--before) and after (this checkout), same run:", "", ...compared)
  lines.push(
    "",
    "| target | measured | |",
    "|---|---|---|",
    ...input.targets.map((t) => `| ${t.target} | ${t.measured} | ${mark(t.met)} |`)
  )
  return lines.join("\n")
}
