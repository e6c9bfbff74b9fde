/**
 * `sitehealth …`: parses the command line, runs the command, prints, and exits with the documented code
 * (docs/cli.md): 0 ok, 1 other failure, 2 usage or confirmation required, 3 network/server unreachable,
 * 4 401, 5 403, 6 404, 7 429, 8 402. Errors go to stderr; with --json the error envelope goes to stdout.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { errorBody } from "@sitehealth/domain/Envelope"
import { Cause, Effect } from "effect"
import { CliError, Command } from "effect/cli"
import { sitehealth, VERSION } from "./Cli.ts"
import { commandLineRunOptions, jsonRequested, presenter } from "./CommandLine.ts"
import { CliFailure, EXIT, type ExitCode } from "./Failure.ts"

const args = process.argv.slice(2)

const json = jsonRequested(args)

interface Outcome {
  readonly exitCode: ExitCode
  readonly envelope: CliFailure["envelope"]
  readonly message: string
  /** Already shown by the presenter (parse errors in text mode). */
  readonly shown: boolean
}

const outcomeOf = (cause: Cause.Cause<unknown>): Outcome => {
  const error = Cause.squash(cause)
  if (error instanceof CliFailure) {
    return { exitCode: error.exitCode, envelope: error.envelope, message: error.message, shown: false }
  }
  if (CliError.isCliError(error)) {
    const message = error._tag === "ShowHelp"
      ? error.errors.length > 0
        ? error.errors.map((e) => e.message).join("; ")
        : `"${error.commandPath.join(" ")}" needs a subcommand; run \`${error.commandPath.concat("--help").join(" ")}\``
      : error.message
    const shown = error._tag === "ShowHelp" ? error.errors.length > 0 : false
    return { exitCode: EXIT.usage, envelope: errorBody("usage", message, "usage"), message, shown }
  }
  const message = error instanceof Error ? error.message : String(error)
  return { exitCode: EXIT.failure, envelope: errorBody("internal", message, "internal"), message, shown: false }
}

const report = (outcome: Outcome) =>
  Effect.sync(() => {
    if (json) process.stdout.write(`${JSON.stringify(outcome.envelope, null, 2)}\n`)
    if (!outcome.shown) process.stderr.write(`sitehealth: ${outcome.message}\n`)
    process.exitCode = outcome.exitCode
  })

const program = Command.runWith(sitehealth, { version: VERSION })(args).pipe(
  Effect.catchCause((cause) => (Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : report(outcomeOf(cause)))),
  Effect.provide(NodeServices.layer),
  Effect.provide(presenter({ json, helpCommand: (path) => path.concat("--help").join(" ") }))
)

NodeRuntime.runMain(program, commandLineRunOptions)
