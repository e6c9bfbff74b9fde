/**
 * The CLI's webhook rules flags (docs/alerts.md, Rules): `webhooks create --min-money --min-severity --cadence`
 * and `webhooks update` with the same flags (`none` clears a minimum), answered with the contract's Webhook; a
 * `--min-money` that is no integer is refused before anything is sent (never cleared by accident).
 */
import { describe, expect, it } from "@effect/vitest"
import { WebhookCreated, WebhookUpdated } from "@sitehealth/domain/Webhooks"
import { Effect, Schema } from "effect"
import { runCli, serverForFile, type TestServer } from "./support/TestServer.ts"

let server: TestServer
let secret = ""
let projectId = ""
let xdg = ""

const env = () => ({ SITEHEALTH_URL: server.baseUrl, SITEHEALTH_TOKEN: secret, XDG_CONFIG_HOME: xdg })

serverForFile({ projects: 1, tmpPrefix: "sitehealth-cli-rules-" }, (file) => {
  server = file.server
  secret = file.account.secret
  projectId = file.account.projects[0]!.id
  xdg = file.xdg
})

describe("webhooks rules over the CLI", () => {
  it.live("create with rules; update them; none clears; a bad amount is refused", () =>
    Effect.gen(function*() {
      const created = yield* runCli([
        "webhooks",
        "create",
        projectId,
        "--url",
        "https://hooks.example.com/cli",
        "--events",
        "revenue.movement,signal.opened",
        "--min-money",
        "5000",
        "--min-severity",
        "warning",
        "--cadence",
        "weekly",
        "--yes",
        "--json"
      ], env())
      expect(created.code, created.stderr).toBe(0)
      const { webhook } = Schema.decodeUnknownSync(WebhookCreated)(JSON.parse(created.stdout))
      expect(webhook).toMatchObject({ minMoneyAtStake: 5000, minSeverity: "warning", cadence: "weekly" })

      const updated = yield* runCli([
        "webhooks",
        "update",
        projectId,
        webhook.id,
        "--min-money",
        "none",
        "--cadence",
        "live",
        "--json"
      ], env())
      expect(updated.code, updated.stderr).toBe(0)
      expect(Schema.decodeUnknownSync(WebhookUpdated)(JSON.parse(updated.stdout)).webhook).toMatchObject({
        minMoneyAtStake: null,
        minSeverity: "warning",
        cadence: "live"
      })

      const bad = yield* runCli(["webhooks", "update", projectId, webhook.id, "--min-money", "fifty"], env())
      expect(bad.code).not.toBe(0)
      expect(bad.stderr).toContain("minMoneyAtStake")
      const text = yield* runCli(["webhooks", "get", projectId, webhook.id], env())
      expect(text.stdout).toMatch(/min severity\s+warning/)
      expect(text.stdout).toMatch(/cadence\s+live/)
    }))
})
