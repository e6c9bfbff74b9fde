/**
 * `npm run admin -- <command> [--json]`: the operator CLI. It works on the database directly (the one
 * in DATABASE_URL, or the embedded cluster in SITEHEALTH_DATA_DIR, attached to when a running server
 * owns it), so it works whether or not the server is running.
 *
 * With `--json`, stdout carries exactly one JSON object: the command's result, or
 * `{"status":"error","error":{"message","type"}}`. Logs always go to stderr. Exit code 0 on success,
 * 2 on an invalid invocation (types "usage", "invalid_argument"), 1 on any other error ("not_found",
 * "database", "config", "internal"); never a stack trace.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { commandLineRunOptions, jsonRequested, presenter } from "@sitehealth/cli/CommandLine"
import { errorBody } from "@sitehealth/domain/Envelope"
import * as Cause from "effect/Cause"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { logSettings } from "../platform/Config.ts"
import { loggingLayer } from "../platform/Logging.ts"
import { admin } from "./Cli.ts"
import { AdminError, type AdminErrorType } from "./Commands.ts"

const VERSION = "0.0.0"

const args = process.argv.slice(2)

const json = jsonRequested(args)

if (json) {
  // Whatever a dependency might print must not break the one-object contract.
  console.log = console.error
  console.info = console.error
  console.debug = console.error
}

const commandHint = (path: ReadonlyArray<string>) => `npm run admin -- ${path.slice(1).concat("--help").join(" ")}`

interface Failure {
  readonly message: string
  readonly type: AdminErrorType
  /** Already shown (by the presenter) in text mode. */
  readonly shown: boolean
}

const messageOf = (u: unknown): string => {
  if (u instanceof Error && u.message !== "") return u.message
  if (typeof u === "object" && u !== null && "message" in u && typeof u.message === "string") return u.message
  return String(u)
}

const failureOf = (cause: Cause.Cause<unknown>): Failure => {
  const error = Cause.squash(cause)
  if (error instanceof AdminError) return { message: error.message, type: error.type, shown: false }
  if (CliError.isCliError(error)) {
    if (error._tag === "ShowHelp") {
      const path = error.commandPath.join(" ")
      const message = error.errors.length > 0
        ? error.errors.map((e) => e.message).join("; ")
        : `"${path}" needs a subcommand; run \`${commandHint(error.commandPath)}\``
      // The presenter has shown the parse errors; implicit help (a group without a subcommand) still needs one line.
      return { message, type: "usage", shown: error.errors.length > 0 }
    }
    return { message: error.message, type: "usage", shown: false }
  }
  return { message: messageOf(error), type: "internal", shown: false }
}

const report = (failure: Failure) =>
  Effect.sync(() => {
    if (json) {
      process.stdout.write(
        `${JSON.stringify(errorBody(null, failure.message, failure.type), null, 2)}\n`
      )
    } else if (!failure.shown) {
      process.stderr.write(`error: ${failure.message}\n`)
    }
    process.exitCode = failure.type === "usage" || failure.type === "invalid_argument" ? 2 : 1
  })

/** LOG_FORMAT / LOG_LEVEL as for the server; the logs go to stderr, so stderr being a terminal picks the default. */
const logging = Layer.unwrap(
  logSettings(process.stderr.isTTY === true).pipe(
    Effect.map(loggingLayer),
    Effect.mapError((e) => new AdminError({ message: `configuration: ${e.message}`, type: "config" }))
  )
)

const program = Command.runWith(admin, { version: VERSION })(args).pipe(
  Effect.provide(logging),
  Effect.catchCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : report(failureOf(cause))),
  Effect.provide(NodeServices.layer),
  Effect.provide(presenter({ json, helpCommand: commandHint })),
  Effect.provideService(Logger.LogToStderr, true)
)

NodeRuntime.runMain(program, commandLineRunOptions)
