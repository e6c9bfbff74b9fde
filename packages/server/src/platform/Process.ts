/**
 * What the two long-running processes, the server (main.ts) and the standalone worker (WorkerMain.ts), do
 * alike around their work: the settings, tracing and logging it runs under, how a start-up failure is
 * reported, and the exit code of a stop by signal.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { AppConfig, type AppConfigShape } from "./Config.ts"
import { loggingLayer } from "./Logging.ts"
import { startupFailureLines } from "./Settings.ts"
import { tracingLayer } from "./Tracing.ts"

/** Runs `work` in its own scope, with the config, tracing as `role` and the configured logger. */
export const withProcessServices =
  (config: AppConfigShape, role: "server" | "worker") => <A, E, R>(work: Effect.Effect<A, E, R>) =>
    work.pipe(
      Effect.scoped,
      Effect.provideService(AppConfig, config),
      // Outside the work's scope: spans still buffered are flushed after the servers and the pool have closed.
      // OTEL_EXPORTER_OTLP_ENDPOINT unset: tracing off altogether (platform/Tracing.ts).
      Effect.provide(tracingLayer(config.tracing, role)),
      // LOG_FORMAT / LOG_LEVEL (platform/Logging.ts); outermost, so that every layer's logs, the tracer's too, go
      // through it.
      Effect.provide(loggingLayer(config))
    )

/**
 * Runs a process's program. A failure is written before (or without) the configured logger, straight to
 * stderr, one line per problem prefixed with `label`, no stack trace; exit code 1. A stop by signal ends the
 * program interrupted: that is the normal way out, exit code 0 (runMain's default would be 130, which
 * orchestrators count as a failed container).
 */
export const runProcess = (label: string, program: Effect.Effect<unknown, unknown>): void =>
  NodeRuntime.runMain(
    program.pipe(
      Effect.tapCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.void
          : Effect.sync(() =>
            process.stderr.write(startupFailureLines(cause).map((line) => `${label}: ${line}\n`).join(""))
          )
      )
    ),
    {
      // The failure was reported above, in one line per problem.
      disableErrorReporting: true,
      teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)
    }
  )

/**
 * On the first SIGTERM or SIGINT, a timer that ends the process after `boundMs` however the stop goes: a stop
 * that hangs (a database that does not answer the release or the pool's close) must still end the process, or
 * an orchestrator waits for its SIGKILL and a plain `kill` looks like it did nothing. The stop itself is the
 * program's (runProcess interrupts it); this only bounds it.
 */
export const boundStop = (label: string, boundMs: number): void => {
  let stopping = false
  const onStopSignal = () => {
    if (stopping) return
    stopping = true
    setTimeout(() => {
      process.stderr.write(`${label}: did not stop within ${boundMs} ms; exiting anyway\n`)
      process.exit(1)
    }, boundMs).unref()
  }
  process.once("SIGTERM", onStopSignal)
  process.once("SIGINT", onStopSignal)
}
