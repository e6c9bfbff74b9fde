/**
 * Every way a command can fail, as one error carrying its exit code, so `main.ts` maps failures to exit
 * codes in one place. The codes are part of the CLI's contract (docs/cli.md):
 * 0 ok, 1 other failure, 2 usage or confirmation required, 3 network/server unreachable, 4 401,
 * 5 403, 6 404, 7 429 (after honouring Retry-After once), 8 402.
 */
import { Data } from "effect"

export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  unreachable: 3,
  unauthorized: 4,
  forbidden: 5,
  notFound: 6,
  rateLimited: 7,
  paymentRequired: 8
} as const
export type ExitCode = (typeof EXIT)[keyof typeof EXIT]

export class CliFailure extends Data.TaggedError("CliFailure")<{
  readonly message: string
  readonly exitCode: ExitCode
  /** What `--json` prints on stdout: the API's error envelope, or one shaped like it. */
  readonly envelope: { readonly status: "error"; readonly error: Record<string, unknown> }
}> {}

/** A failure that did not come from the API (usage, network, local files): an envelope shaped like the API's. */
export const localFailure = (exitCode: ExitCode, type: string, message: string) =>
  new CliFailure({ message, exitCode, envelope: { status: "error", error: { code: type, message, type } } })

export const usage = (message: string) => localFailure(EXIT.usage, "usage", message)

/** Exit code for an API error status. */
export const exitCodeForStatus = (status: number): ExitCode => {
  switch (status) {
    case 401:
      return EXIT.unauthorized
    case 402:
      return EXIT.paymentRequired
    case 403:
      return EXIT.forbidden
    case 404:
      return EXIT.notFound
    case 429:
      return EXIT.rateLimited
    // A gateway answering for a server it cannot reach, or the server unable to reach its database.
    case 502:
    case 503:
    case 504:
      return EXIT.unreachable
    default:
      return EXIT.failure
  }
}
