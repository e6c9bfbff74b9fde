/**
 * What the two command lines (`sitehealth`, the API client, and `npm run admin`, the operator CLI) do alike
 * around their commands: decide `--json` before parsing, present help and parse errors, and exit with the code
 * the command left in `process.exitCode`. The operator CLI (server admin/main.ts) imports it from this package.
 */
import { Effect, Exit, Runtime } from "effect"
import { CliOutput } from "effect/cli"

/** `--json` before any `--`, decided up front so that even argument errors answer in JSON. */
export const jsonRequested = (args: ReadonlyArray<string>): boolean => {
  const end = args.indexOf("--")
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === "--json" || a === "--json=true")
}

/**
 * Help and version go to stdout when asked for; parse errors (and help shown because of one) to stderr, and
 * nowhere with `--json`, whose one error object the entry point writes itself.
 */
export const presenter = (options: {
  readonly json: boolean
  /** The command a user runs for help on `commandPath`. */
  readonly helpCommand: (commandPath: ReadonlyArray<string>) => string
}) =>
  CliOutput.layerPresenter({
    present: (event) =>
      Effect.gen(function*() {
        const formatter = yield* CliOutput.Formatter
        switch (event._tag) {
          case "Help":
            if (event.reason === "Requested") process.stdout.write(`${formatter.formatHelpDoc(event.helpDoc)}\n`)
            else if (!options.json) process.stderr.write(`${formatter.formatHelpDoc(event.helpDoc)}\n`)
            return
          case "InvalidInvocation":
            if (!options.json) {
              process.stderr.write(`${formatter.formatErrors(event.errors)}\n\nUsage: ${event.helpDoc.usage}\n`)
              process.stderr.write(`Run \`${options.helpCommand(event.commandPath)}\` for details.\n`)
            }
            return
          case "Version":
            process.stdout.write(`${formatter.formatVersion(event.name, event.version)}\n`)
            return
        }
      })
  })

/**
 * `NodeRuntime.runMain` options for a command line's program: exit with `process.exitCode` as the program set
 * it; only a defect or an interruption reaches Effect's own teardown. The program reports its own failures, so
 * Effect reports none.
 */
export const commandLineRunOptions: { readonly disableErrorReporting: true; readonly teardown: Runtime.Teardown } = {
  disableErrorReporting: true,
  teardown: (exit, onExit) =>
    Exit.isSuccess(exit) ? onExit(Number(process.exitCode ?? 0)) : Runtime.defaultTeardown(exit, onExit)
}
