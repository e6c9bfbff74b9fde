/**
 * The MCP Inspector's CLI (`@modelcontextprotocol/inspector` 2.12.0, `mcp-inspector --cli`) against both
 * transports: the stdio bin and `POST /mcp` on a real server. `--strict` with `--method tools/list` is the
 * Inspector's tool-schema portability lint (exit 6 on an error; warnings on stderr, exit 0): here any finding,
 * warning or error, fails. Then resources/list, prompts/list and one tools/call, each checked by its output.
 * The Inspector is a separate client (its own SDK, 2.x), so this is not the server testing itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { startServer, type TestServer } from "@sitehealth/cli/test/support/TestServer"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import { BIN } from "./support/Mcp.ts"

const INSPECTOR = Path.join(
  Path.dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/inspector/package.json")),
  "clients/launcher/build/index.js"
)

let srv: TestServer
let catalogDir: string
beforeAll(async () => {
  srv = await startServer({ rateLimit: 1_000_000 })
  // The Inspector keeps a catalog of servers (default ~/.mcp-inspector/mcp.json): a temporary one here.
  catalogDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mcp-inspector-"))
})
afterAll(async () => {
  await srv.close()
  Fs.rmSync(catalogDir, { recursive: true, force: true })
})

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const inspector = (args: ReadonlyArray<string>): Promise<Run> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [INSPECTOR, "--cli", ...args],
      {
        env: { PATH: process.env.PATH ?? "", HOME: catalogDir, MCP_CATALOG_PATH: Path.join(catalogDir, "mcp.json") },
        timeout: 60_000
      },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
  })

/** The Inspector's arguments that reach the server over one transport, for a token. */
const transports = {
  stdio: (
    token: string
  ) => ["-e", `SITEHEALTH_TOKEN=${token}`, "-e", `SITEHEALTH_URL=${srv.baseUrl}`, "--", process.execPath, BIN],
  http: (
    token: string
  ) => ["--transport", "http", "--server-url", `${srv.baseUrl}/mcp`, "--header", `Authorization: Bearer ${token}`]
}

/** The lint's findings on stderr: a `Warning: tool "…"` or `Error: tool "…"` block each. */
const findings = (stderr: string) => stderr.split("\n").filter((line) => /^(Warning|Error): tool /.test(line))

describe("the MCP Inspector CLI (2.12.0) against both transports", () => {
  for (const [name, target] of Object.entries(transports)) {
    it(`${name}: tools/list --strict finds no schema problem; resources, prompts and a tool call answer`, async () => {
      const { projects, secret } = await srv.newAccount()
      const on = (args: ReadonlyArray<string>) => inspector([...args, ...target(secret)])

      const listed = await on(["--strict", "--method", "tools/list"])
      expect(findings(listed.stderr), listed.stderr).toEqual([])
      expect(listed.stderr).not.toMatch(/portability|errors?, \d+ warnings?/)
      expect(listed.code, listed.stderr).toBe(0)
      expect(JSON.parse(listed.stdout).tools.length).toBe(29)

      const resources = await on(["--method", "resources/list"])
      expect(resources.code, resources.stderr).toBe(0)
      expect(JSON.parse(resources.stdout).resources.map((r: any) => r.uri)).toContain(
        `sitehealth://projects/${projects[0]!.id}/health`
      )

      const prompts = await on(["--method", "prompts/list"])
      expect(prompts.code, prompts.stderr).toBe(0)
      expect(JSON.parse(prompts.stdout).prompts.length).toBeGreaterThan(0)

      const called = await on([
        "--method",
        "tools/call",
        "--tool-name",
        "get_health",
        "--tool-arg",
        `id=${projects[0]!.id}`
      ])
      expect(called.code, called.stderr).toBe(0)
      const result = JSON.parse(called.stdout)
      expect(result.isError).not.toBe(true)
      expect(result.structuredContent.projectId).toBe(projects[0]!.id)

      // A refused call is an isError result, which the Inspector reports with its own exit code (not 0).
      const refused = await on(["--method", "tools/call", "--tool-name", "get_health", "--tool-arg", "id=.."])
      expect(refused.code).not.toBe(0)
      expect(JSON.parse(refused.stdout).isError).toBe(true)
    }, 120_000)
  }
})
