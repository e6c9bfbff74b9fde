/**
 * The CLI's variables read through Config (src/Settings.ts): an unusable SITEHEALTH_MAX_RETRY_AFTER is a
 * usage error naming it before any request, and the profile file follows XDG_CONFIG_HOME, else HOME.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { resolve } from "../src/Settings.ts"
import { buildIfStale, runCli } from "./support/TestServer.ts"

beforeAll(async () => {
  await buildIfStale()
}, 60_000)

const flags = { token: undefined, baseUrl: undefined, profile: undefined, insecureHttp: false }

describe("environment settings", () => {
  it.live("SITEHEALTH_MAX_RETRY_AFTER that is not a number of seconds: exit 2 naming it, no request", () =>
    Effect.gen(function*() {
      // Port 9 on loopback: a request would fail as unreachable (exit 3), not as a usage error.
      const run = yield* runCli(["projects", "list"], {
        SITEHEALTH_URL: "http://127.0.0.1:9",
        SITEHEALTH_TOKEN: "svc_x",
        SITEHEALTH_MAX_RETRY_AFTER: "soon"
      })
      expect(run.code).toBe(2)
      expect(run.stderr).toContain("SITEHEALTH_MAX_RETRY_AFTER must be a number of seconds (0 or more), got \"soon\"")
    }))

  it("reads the cap, the default, and where the profiles live", () => {
    expect(resolve(flags, { SITEHEALTH_MAX_RETRY_AFTER: "5", HOME: "/home/u" }).maxRetryAfterSeconds).toBe(5)
    expect(resolve(flags, { SITEHEALTH_MAX_RETRY_AFTER: " ", HOME: "/home/u" }).maxRetryAfterSeconds).toBe(60)
    expect(resolve(flags, { HOME: "/home/u" }).file).toBe(Path.join("/home/u", ".config", "sitehealth", "config.json"))
    expect(resolve(flags, { HOME: "/home/u", XDG_CONFIG_HOME: "/xdg" }).file).toBe(
      Path.join("/xdg", "sitehealth", "config.json")
    )
    // A relative XDG_CONFIG_HOME is ignored, as the XDG spec says.
    expect(resolve(flags, { HOME: "/home/u", XDG_CONFIG_HOME: "rel" }).file).toBe(
      Path.join("/home/u", ".config", "sitehealth", "config.json")
    )
  })
})
