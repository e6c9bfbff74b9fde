/**
 * Email destinations (docs/alerts.md, "Email"): `format: "email"` with `url: "mailto:…"` naming a member of the
 * website's account, with the rules every destination has (kinds, minimum money at stake — €50 by default —
 * minimum severity, cadence). A live event that passes the rules is mailed by the worker (one mail, through
 * SMTP_URL, here a local sink); one below them is not; a removed member is not mailed (the attempt says why);
 * "test" mails at once. On both stores.
 */
import { expect, layer } from "@effect/vitest"
import type { EventData } from "@sitehealth/domain/Events"
import { Effect, Layer, Redacted } from "effect"
import { AuthRepo, newUserId } from "../../src/dashboard/AuthRepo.ts"
import { AppConfig, readConfig } from "../../src/platform/Config.ts"
import { Mailer } from "../../src/platform/Mailer.ts"
import { noticeDisabled } from "../../src/webhooks/Disabled.ts"
import { emit } from "../../src/webhooks/Outbox.ts"
import { WebhooksRepo } from "../../src/webhooks/WebhooksRepo.ts"
import { deliverDue } from "../../src/worker/WebhookDelivery.ts"
import { expectError } from "../support/Expect.ts"
import { SmtpSink } from "../support/SmtpSink.ts"
import { TEST_KEY } from "../support/SyncFakes.ts"
import { h, TestApp } from "../support/TestApp.ts"

const SECRET_KEY = Redacted.make(Buffer.from(TEST_KEY).toString("base64"))

const App = Layer.unwrap(Effect.gen(function*() {
  const sink = yield* SmtpSink
  return TestApp.layer({ secretKey: SECRET_KEY, smtpUrl: Redacted.make(sink.url), webhooksAllowPrivate: true })
})).pipe(Layer.provideMerge(SmtpSink.layer))

let counter = 0

/** The worker's round for these endpoints, with the app's mail settings. */
const deliver = (webhookIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sink = yield* SmtpSink
    const config = {
      ...readConfig({ SITEHEALTH_SECRET_KEY: Redacted.value(SECRET_KEY) }),
      smtpUrl: Redacted.make(sink.url),
      webhooksAllowPrivate: true
    }
    return yield* h.run(
      deliverDue({ webhookIds, random: () => 0.5 }).pipe(
        Effect.provide(Mailer.layer),
        Effect.provideService(AppConfig, config)
      )
    )
  })

const movement = (projectId: string, amount: number): EventData<"revenue.movement"> => ({
  projectId: projectId as any,
  customer: "cus_mail",
  kind: amount >= 0 ? "expansion" : "churn",
  mrrChange: { amount, currency: "EUR" },
  day: "2026-03-02" as any
})

layer(App, { timeout: 60_000 })("Email destinations", (it) => {
  it.effect("a member's address with the rules: what passes them is mailed, what does not is not", () =>
    Effect.gen(function*() {
      const { account, projects, secret } = yield* h.newAccount()
      const projectId = projects[0].id
      const email = `alerts-${counter++}-${Date.now().toString(36)}@example.test`
      const member = yield* h.run(Effect.flatMap(AuthRepo, (repo) =>
        repo.createUser({
          id: newUserId(),
          accountId: account.id,
          email,
          passwordHash: null,
          emailVerifiedAt: new Date(),
          createdAt: new Date()
        })))
      const path = `/api/v1/projects/${projectId}/webhooks`
      const create = (body: Record<string, unknown>) =>
        h.raw("POST", path, {
          token: secret,
          body: { format: "email", events: ["revenue.movement"], confirm: true, ...body }
        })

      // Only a member of the account, and only mailto: for email (and never mailto: for the others).
      expectError(yield* create({ url: "mailto:stranger@example.test" }), 400, "not_a_member")
      expectError(yield* create({ url: "https://hooks.example.com/in" }), 400, "invalid_webhook_url")
      expectError(
        yield* h.raw("POST", path, {
          token: secret,
          body: { url: `mailto:${email}`, events: ["revenue.movement"], confirm: true }
        }),
        400,
        "invalid_webhook_url"
      )
      expectError(yield* create({ url: "mailto:a@b.test,c@d.test" }), 400)

      const created = yield* create({ url: `mailto:${email.toUpperCase()}` })
      expect(created.status, created.text).toBe(201)
      const webhook = created.json.data.webhook
      // Defaults: live, and only what costs €50 or more.
      expect(webhook).toMatchObject({ format: "email", url: `mailto:${email}`, minMoneyAtStake: 5000, cadence: "live" })

      const at = new Date(yield* h.now)
      const fanned = yield* h.run(Effect.flatMap(WebhooksRepo, (repo) =>
        Effect.all([
          emit(repo)("revenue.movement", projectId, movement(projectId, -12_000), at),
          emit(repo)("revenue.movement", projectId, movement(projectId, 1_000), at)
        ])))
      // The €10 expansion is below the destination's €50: never queued for it.
      expect(fanned.map((d) => d.length)).toEqual([1, 0])
      expect(yield* deliver([webhook.id])).toBe(1)
      const sink = yield* SmtpSink
      const mail = yield* sink.waitFor(email, /Churn/)
      expect(mail.text).toMatch(/MRR -\S{1,8}120 on 2026-03-02/)
      expect(mail.text).toContain(`/websites/${projectId}`)
      expect(sink.messages.filter((m) => m.to.includes(email))).toHaveLength(1)

      const log = yield* h.raw("GET", `${path}/${webhook.id}/deliveries`, { token: secret })
      expect(log.json.data.deliveries[0]).toMatchObject({ status: "succeeded", responseExcerpt: `mailed to ${email}` })

      // "Test" mails at once.
      const test = yield* h.raw("POST", `${path}/${webhook.id}/test`, { token: secret })
      expect(test.status, test.text).toBe(200)
      expect(test.json.data.delivery.status).toBe("succeeded")
      yield* sink.waitFor(email, /A test event from sitehealth/)

      // A member removed since is not mailed: the attempt fails and says why.
      yield* h.run(Effect.flatMap(AuthRepo, (repo) => repo.removeAccountLogins(account.id)))
      expect(member).not.toBeNull()
      yield* h.run(
        Effect.flatMap(
          WebhooksRepo,
          (repo) => emit(repo)("revenue.movement", projectId, movement(projectId, -9_000), at)
        )
      )
      const before = sink.messages.length
      expect(yield* deliver([webhook.id])).toBe(1)
      const again = yield* h.raw("GET", `${path}/${webhook.id}/deliveries`, { token: secret })
      const refused = again.json.data.deliveries.filter((d: any) => d.responseExcerpt?.includes("no longer a member"))
      expect(refused, again.text).toHaveLength(1)
      expect(refused[0].status).toBe("pending") // retried later; the endpoint is disabled after 3 days of it
      expect(sink.messages.length).toBe(before)
    }))

  it.effect("a destination disabled after 3 days of failures: its owners are mailed once, with the Alerts page", () =>
    Effect.gen(function*() {
      const { account, projects, secret } = yield* h.newAccount()
      const projectId = projects[0].id
      const owner = `owner-${counter++}-${Date.now().toString(36)}@example.test`
      const viewer = `viewer-${counter++}-${Date.now().toString(36)}@example.test`
      yield* h.run(Effect.gen(function*() {
        const repo = yield* AuthRepo
        for (const email of [owner, viewer]) {
          yield* repo.createUser({
            id: newUserId(),
            accountId: account.id,
            email,
            passwordHash: null,
            emailVerifiedAt: new Date(),
            createdAt: new Date()
          })
        }
        const v = yield* repo.findUserByEmail(viewer)
        yield* repo.setRole(v!.id, "viewer")
      }))
      // A receiver that refuses every connection, failing for 4 days already.
      const created = yield* h.raw("POST", `/api/v1/projects/${projectId}/webhooks`, {
        token: secret,
        body: { url: "http://127.0.0.1:9/hooks", events: ["revenue.movement"], confirm: true }
      })
      expect(created.status, created.text).toBe(201)
      const id: string = created.json.data.webhook.id
      const at = new Date(yield* h.now)
      const failingSince = new Date(at.getTime() - 4 * 86_400_000)
      yield* h.run(Effect.flatMap(WebhooksRepo, (repo) =>
        Effect.andThen(
          repo.update(projectId, id, { failingSince }),
          emit(repo)("revenue.movement", projectId, movement(projectId, -500), at)
        )))
      expect(yield* deliver([id])).toBe(1)
      const endpoint = yield* h.raw("GET", `/api/v1/projects/${projectId}/webhooks/${id}`, { token: secret })
      expect(endpoint.json.data).toMatchObject({ status: "disabled" })
      const sink = yield* SmtpSink
      const mail = yield* sink.waitFor(owner, /sitehealth disabled it/)
      expect(mail.text).toContain(`/websites/${projectId}/alerts`)
      expect(mail.text).toContain("127.0.0.1:9")
      // Once per failing streak, whoever records it again; never to a viewer.
      const config = { ...readConfig({}), smtpUrl: Redacted.make(sink.url) }
      const again = yield* h.run(
        Effect.gen(function*() {
          const repo = yield* WebhooksRepo
          const webhook = yield* repo.find(projectId, id)
          return yield* noticeDisabled(repo, "http://localhost")(webhook!, failingSince)
        }).pipe(Effect.provide(Mailer.layer), Effect.provideService(AppConfig, config))
      )
      expect(again).toBe(false)
      expect(sink.messages.filter((m) => m.to.includes(owner))).toHaveLength(1)
      expect(sink.messages.filter((m) => m.to.includes(viewer))).toHaveLength(0)
    }))
})
