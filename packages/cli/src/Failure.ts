/**
 * Every way a command can fail, as one error carrying its exit code, so `main.ts` maps failures to exit
 * codes in one place. The codes are part of the CLI's contract (docs/cli.md):
 * 0 ok, 1 other failure, 2 usage or confirmation required, 3 network/server unreachable, 4 401,
 * 5 403, 6 404, 7 429 (after honouring Retry-After once), 8 402.
 */
import { errorBody, type ErrorEnvelope } from "@sitehealth/domain/Envelope"
import {
  Forbidden,
  httpStatusOf,
  NotFound,
  RateLimited,
  TrialExpired,
  Unauthorized,
  Unavailable
} from "@sitehealth/domain/Errors"
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
  readonly envelope: ErrorEnvelope
}> {}

/** A failure that did not come from the API (usage, network, local files): an envelope shaped like the API's. */
export const localFailure = (
  exitCode: ExitCode,
  type: string,
  message: string,
  extra?: Readonly<Record<string, unknown>>
) => new CliFailure({ message, exitCode, envelope: errorBody(type, message, type, extra) })

export const usage = (message: string) => localFailure(EXIT.usage, "usage", message)

/** The API errors that have an exit code of their own (docs/cli.md); any other is 1. */
const EXIT_FOR_ERROR = [
  [Unauthorized, EXIT.unauthorized],
  [TrialExpired, EXIT.paymentRequired],
  [Forbidden, EXIT.forbidden],
  [NotFound, EXIT.notFound],
  [RateLimited, EXIT.rateLimited],
  // The server unable to reach its database.
  [Unavailable, EXIT.unreachable]
] as const

/** Exit code for one of the API's errors, by its class. */
export const exitCodeForError = (error: unknown): ExitCode =>
  EXIT_FOR_ERROR.find(([ErrorClass]) => error instanceof ErrorClass)?.[1] ?? EXIT.failure

/**
 * Exit code for an answer the contract does not describe, by its status: a gateway answering for a server
 * it cannot reach (502, 504) is "unreachable"; otherwise the code of the API error answered with that
 * status (its class's `httpApiStatus`).
 */
export const exitCodeForStatus = (status: number): ExitCode => {
  if (status === 502 || status === 504) return EXIT.unreachable
  return EXIT_FOR_ERROR.find(([ErrorClass]) => httpStatusOf(ErrorClass) === status)?.[1] ?? EXIT.failure
}
