/** `npm run bench` options: parsed strictly, so a mistyped flag stops the run instead of being ignored. */
import { parseArgs } from "node:util"
import { DEFAULT_EVENTS, DEFAULT_TOKENS } from "./seed.ts"

/** Run order. Writes (expenses) and the analytics cold probes (which bump data_version) come last. */
export const SCENARIOS = [
  "health",
  "rate",
  "projects",
  "analytics-today",
  "analytics-yesterday",
  "analytics-7d",
  "analytics-30d",
  "analytics-3m",
  "analytics-12m",
  "analytics-all",
  "revenue",
  "churn",
  "seo",
  "briefing",
  "signals",
  "expenses"
] as const
export type ScenarioName = (typeof SCENARIOS)[number]

/** Names that stand for several scenarios in --only. */
const GROUPS: Record<string, ReadonlyArray<ScenarioName>> = {
  analytics: [
    "analytics-today",
    "analytics-yesterday",
    "analytics-7d",
    "analytics-30d",
    "analytics-3m",
    "analytics-12m",
    "analytics-all"
  ],
  reads: [
    "projects",
    "analytics-today",
    "analytics-yesterday",
    "analytics-7d",
    "analytics-30d",
    "analytics-3m",
    "analytics-12m",
    "analytics-all",
    "revenue",
    "churn",
    "seo",
    "briefing",
    "signals"
  ],
  ours: [
    "projects",
    "analytics-today",
    "analytics-yesterday",
    "analytics-7d",
    "analytics-30d",
    "analytics-3m",
    "analytics-12m",
    "analytics-all",
    "revenue",
    "churn",
    "seo",
    "briefing",
    "signals",
    "expenses"
  ],
  peers: ["health", "rate"]
}

export interface BenchOptions {
  readonly events: number
  readonly tokens: number
  readonly duration: number
  readonly warmup: number
  readonly connections: number
  readonly rounds: number
  /** Sequential cache-missing requests per analytics / revenue scenario. */
  readonly cold: number
  readonly rate: number
  readonly only: ReadonlyArray<ScenarioName>
  readonly quick: boolean
  readonly cpuProf: boolean
  readonly reseed: boolean
  /** Another checkout whose packages/server/src/main.ts is "ours" (a before/after comparison); null: this one. */
  readonly serverRoot: string | null
  /**
   * Another checkout run as a second copy of our server ("before"), alternating with "ours" in the same health
   * rounds and measured in the fixed-rate scenario: a before/after comparison in one run, so load from
   * elsewhere on the machine falls on both alike. null: no such server.
   */
  readonly before: string | null
  /** Accept-Encoding of every request ("" sends none): by default what node's fetch (the CLI) sends. */
  readonly acceptEncoding: string
}

/** What node's fetch sends over http: (the CLI's client), and so what the bench's requests say by default. */
export const DEFAULT_ACCEPT_ENCODING = "gzip, deflate"

export const USAGE = `npm run bench -- [options]

  --events N        raw traffic events of the analytics project (default ${DEFAULT_EVENTS}; seeded once into .bench/pg-N)
  --tokens K        tokens rotated across requests (default ${DEFAULT_TOKENS})
  --duration S      measured seconds per scenario and server (default 10)
  --warmup S        warm-up seconds before each measurement (default 2)
  --connections C   concurrent connections (default 50)
  --rounds R        alternating rounds of the health comparison (default 3)
  --rate R          requests per second of the fixed-rate scenario (default 1000)
  --cold N          sequential cache-missing requests per analytics/revenue scenario (default 20)
  --only a,b        scenarios: ${SCENARIOS.join(", ")}; groups: ${Object.keys(GROUPS).join(", ")}
  --quick           smoke run: --events 100000 --duration 3 --rounds 1 --cold 5 (each overridable)
  --cpu-prof        profile our server (node --cpu-prof) and print its top 20 self-time functions
  --reseed          throw the seeded database away and seed again
  --server-root D   run "ours" from another checkout D (e.g. a git worktree of an older commit) for a
                    before/after comparison on the same database and peers
  --before D        also run our server from checkout D as "before", alternating with "ours" in every health
                    round and in the fixed-rate scenario (a before/after comparison within one run)
  --accept-encoding V  the requests' Accept-Encoding (default "${DEFAULT_ACCEPT_ENCODING}", as node's fetch
                    sends it; "" for none: stored answers then go out uncompressed)
  --help`

const positiveInt = (name: string, raw: string | undefined, fallback: number): number => {
  if (raw === undefined) return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got "${raw}"`)
  return n
}

const nonNegativeInt = (name: string, raw: string | undefined, fallback: number): number => {
  if (raw === undefined) return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer, got "${raw}"`)
  return n
}

export const parseOptions = (argv: ReadonlyArray<string>): BenchOptions | "help" => {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      events: { type: "string" },
      tokens: { type: "string" },
      duration: { type: "string" },
      warmup: { type: "string" },
      connections: { type: "string" },
      rounds: { type: "string" },
      rate: { type: "string" },
      cold: { type: "string" },
      only: { type: "string" },
      quick: { type: "boolean", default: false },
      "cpu-prof": { type: "boolean", default: false },
      reseed: { type: "boolean", default: false },
      "server-root": { type: "string" },
      before: { type: "string" },
      "accept-encoding": { type: "string" },
      help: { type: "boolean", default: false }
    }
  })
  if (values.help) return "help"
  const quick = values.quick
  let only: Array<ScenarioName> = [...SCENARIOS]
  if (values.only !== undefined) {
    const wanted = new Set<ScenarioName>()
    for (const name of values.only.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
      const group = GROUPS[name] ??
        ((SCENARIOS as ReadonlyArray<string>).includes(name) ? [name as ScenarioName] : null)
      if (group === null) {
        throw new Error(
          `--only: unknown scenario "${name}"; known: ${SCENARIOS.join(", ")}, ${Object.keys(GROUPS).join(", ")}`
        )
      }
      for (const s of group) wanted.add(s)
    }
    if (wanted.size === 0) throw new Error("--only names no scenario")
    only = SCENARIOS.filter((s) => wanted.has(s))
  }
  return {
    events: positiveInt("events", values.events, quick ? 100_000 : DEFAULT_EVENTS),
    tokens: positiveInt("tokens", values.tokens, DEFAULT_TOKENS),
    duration: positiveInt("duration", values.duration, quick ? 3 : 10),
    warmup: nonNegativeInt("warmup", values.warmup, 2),
    connections: positiveInt("connections", values.connections, 50),
    rounds: positiveInt("rounds", values.rounds, quick ? 1 : 3),
    rate: positiveInt("rate", values.rate, 1000),
    cold: nonNegativeInt("cold", values.cold, quick ? 5 : 20),
    only,
    quick,
    cpuProf: values["cpu-prof"],
    reseed: values.reseed,
    serverRoot: values["server-root"] ?? null,
    before: values.before ?? null,
    acceptEncoding: values["accept-encoding"] ?? DEFAULT_ACCEPT_ENCODING
  }
}
