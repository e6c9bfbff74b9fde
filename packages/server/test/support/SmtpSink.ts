/**
 * A local SMTP server for tests (smtp-server): accepts every message on 127.0.0.1 and keeps it, so a test
 * reads the link the dashboard mailed. Bodies are decoded from quoted-printable or base64.
 */
import { Context, Effect, Layer } from "effect"
import { SMTPServer } from "smtp-server"

export interface SinkMessage {
  readonly to: ReadonlyArray<string>
  readonly raw: string
  /** The decoded body text. */
  readonly text: string
}

export interface SmtpSinkShape {
  readonly url: string
  readonly messages: ReadonlyArray<SinkMessage>
  /** The first message to `to` whose text matches, waiting up to 5 s (real time). */
  readonly waitFor: (to: string, pattern: RegExp) => Effect.Effect<SinkMessage>
}

const decodeBody = (raw: string): string => {
  const [head = "", ...rest] = raw.split(/\r?\n\r?\n/)
  const body = rest.join("\n\n")
  if (/content-transfer-encoding:\s*quoted-printable/i.test(head)) {
    return body.replace(/=\r?\n/g, "").replace(
      /=([0-9A-F]{2})/gi,
      (_, hex: string) => String.fromCharCode(parseInt(hex, 16))
    )
  }
  if (/content-transfer-encoding:\s*base64/i.test(head)) {
    return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8")
  }
  return body
}

export class SmtpSink extends Context.Service<SmtpSink, SmtpSinkShape>()("test/SmtpSink") {
  static readonly layer = Layer.effect(
    SmtpSink,
    Effect.gen(function*() {
      const messages: Array<SinkMessage> = []
      const server = new SMTPServer({
        authOptional: true,
        disabledCommands: ["STARTTLS", "AUTH"],
        logger: false,
        onData(stream, session, callback) {
          const chunks: Array<Buffer> = []
          stream.on("data", (chunk: Buffer) => chunks.push(chunk))
          stream.on("end", () => {
            const raw = Buffer.concat(chunks).toString("utf8")
            messages.push({ to: session.envelope.rcptTo.map((r) => r.address), raw, text: decodeBody(raw) })
            callback()
          })
        }
      })
      const port = yield* Effect.promise(() =>
        new Promise<number>((resolve) =>
          server.listen(0, "127.0.0.1", () => resolve((server.server.address() as { port: number }).port))
        )
      )
      yield* Effect.addFinalizer(() =>
        Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
      )
      return SmtpSink.of({
        url: `smtp://127.0.0.1:${port}`,
        messages,
        waitFor: (to, pattern) =>
          Effect.promise(async () => {
            for (let i = 0; i < 100; i++) {
              const found = messages.find((m) => m.to.includes(to) && pattern.test(m.text))
              if (found) return found
              await new Promise((resolve) => setTimeout(resolve, 50))
            }
            throw new Error(`no mail to ${to} matching ${pattern} (got ${messages.length} messages)`)
          })
      })
    })
  )
}
