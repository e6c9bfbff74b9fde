/**
 * The dashboard's mail: nodemailer over SMTP_URL. Without SMTP_URL nothing is sent and the message, link
 * included, is written to the server log instead (for a laptop or a first try; README says so).
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { AppConfig } from "./Config.ts"

const reasonOf = (error: unknown): string => {
  const inner = (error as { cause?: unknown })?.cause ?? error
  const message = inner instanceof Error ? inner.message : String(inner)
  return message.replace(/\/\/[^@\s]*@/g, "//<redacted>@").slice(0, 300)
}

export interface Mail {
  readonly to: string
  readonly subject: string
  readonly text: string
  /** An HTML alternative of `text` (the morning briefing). */
  readonly html?: string
  /** Extra headers (List-Unsubscribe, List-Unsubscribe-Post). */
  readonly headers?: Readonly<Record<string, string>>
}

export interface MailerShape {
  /** Sends; a failure is logged (its reason, not the message) and not raised: the request already answered. */
  readonly send: (mail: Mail) => Effect.Effect<void>
}

export class Mailer extends Context.Service<Mailer, MailerShape>()("sitehealth/platform/Mailer") {
  static readonly layer = Layer.effect(
    Mailer,
    Effect.gen(function*() {
      const config = yield* AppConfig
      if (config.smtpUrl === null) {
        return Mailer.of({
          send: Effect.fn("Mailer.send")(function*(mail) {
            yield* Effect.logInfo(`mail (SMTP_URL unset, not sent) to ${mail.to}: ${mail.subject}\n${mail.text}`)
          })
        })
      }
      // Loaded only where mail is configured: nodemailer is a few MB of a server's memory that sends none.
      const { createTransport } = yield* Effect.promise(() => import("nodemailer"))
      const transport = createTransport(Redacted.value(config.smtpUrl))
      yield* Effect.addFinalizer(() => Effect.sync(() => transport.close()))
      return Mailer.of({
        send: Effect.fn("Mailer.send")(function*(mail) {
          return yield* Effect.tryPromise(() => transport.sendMail({ from: config.mailFrom, ...mail })).pipe(
            Effect.asVoid,
            // The transport's own words (connection refused, 535 authentication failed…): never the URL or the body.
            Effect.catchCause((cause) =>
              Effect.logError(
                `mail to ${mail.to} could not be sent (${mail.subject}): ${reasonOf(Cause.squash(cause))}`
              )
            )
          )
        })
      })
    })
  )
}
