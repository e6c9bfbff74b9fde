/** Without SMTP_URL the dashboard's mail is written to the log (link included), as the README says. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import * as Net from "node:net"
import { AppConfig, readConfig } from "../src/platform/Config.ts"
import { Mailer } from "../src/platform/Mailer.ts"

describe("Mailer", () => {
  it.effect("SMTP_URL unset: the message goes to the log, not to a server", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const capture = Logger.make(({ message }) => void lines.push(JSON.stringify(message)))
      yield* Effect.gen(function*() {
        const mailer = yield* Mailer
        yield* mailer.send({
          to: "owner@example.test",
          subject: "Verify",
          text: "http://localhost/verify-email?token=abc.def"
        })
      }).pipe(
        Effect.provide(Mailer.layer),
        Effect.provide(AppConfig.layer(readConfig({}))),
        Effect.provide(Logger.layer([capture]))
      )
      expect(lines.join("\n")).toContain("owner@example.test")
      expect(lines.join("\n")).toContain("verify-email?token=abc.def")
      expect(lines.join("\n")).toContain("SMTP_URL unset")
    }))

  it.effect("an unreachable SMTP server: the failure is logged without the URL's password, and not raised", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const capture = Logger.make(({ message }) => void lines.push(JSON.stringify(message)))
      const port = yield* Effect.promise(() =>
        new Promise<number>((resolve) => {
          const s = Net.createServer().listen(0, "127.0.0.1", () => {
            const p = (s.address() as Net.AddressInfo).port
            s.close(() => resolve(p))
          })
        })
      )
      yield* Effect.gen(function*() {
        const mailer = yield* Mailer
        yield* mailer.send({ to: "owner@example.test", subject: "Verify", text: "secret-link" })
      }).pipe(
        Effect.provide(Mailer.layer),
        Effect.provide(AppConfig.layer(readConfig({ SMTP_URL: `smtp://user:hunter2@127.0.0.1:${port}` }))),
        Effect.provide(Logger.layer([capture]))
      )
      const log = lines.join("\n")
      expect(log).toContain("could not be sent")
      expect(log).not.toContain("hunter2")
      expect(log).not.toContain("secret-link")
    }))
})
