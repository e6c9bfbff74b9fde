/** The operator CLI (`npm run admin`) run end to end as a child process, as an operator runs it. */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../../..")
const MAIN = Path.join(ROOT, "packages/server/src/admin/main.ts")

export interface AdminRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** stdout parsed as JSON (what `--json` prints), undefined when it is not JSON; tests read it field by field. */
  readonly body: any
}

/**
 * Runs `admin <args>` from the repository root with exactly `env`; the child is killed if the effect is interrupted.
 */
export const runAdmin = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  Effect.callback<AdminRun>((resume) => {
    const child = spawn(process.execPath, [MAIN, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.once("error", (error) => resume(Effect.die(error)))
    child.once("close", (code) => {
      let body: any
      try {
        body = JSON.parse(stdout)
      } catch {
        body = undefined
      }
      resume(Effect.succeed({ code, stdout, stderr, body }))
    })
    return Effect.sync(() => void child.kill("SIGKILL"))
  })
