/**
 * What the stdio bundle loads before it answers `initialize`: the entry and the chunks it imports statically
 * hold our light front only (main.ts, EarlyInitialize.ts, Identity.ts, StdioInput.ts) — not the MCP SDK, no
 * Effect, no contract or domain module, no Ajv, none of the handlers, the settings or the tool table, which
 * come in chunks loaded after it (the speed itself is measured by `npm run bench:mcp`, not here). The bundle built
 * here, in a
 * temporary folder, then serves a real server through the SDK client: the lazy chunks load and Ajv's absence
 * costs nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { bundle, loadedAtStart } from "@sitehealth/cli/bundle"
import { startServer, type TestServer } from "@sitehealth/cli/test/support/TestServer"
import type { Metafile } from "esbuild"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { MCP_BUNDLE } from "../scripts/build.ts"

let srv: TestServer
let outdir: string
let metafile: Metafile
beforeAll(async () => {
  srv = await startServer()
  outdir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-mcp-bundle-"))
  metafile = await bundle({ ...MCP_BUNDLE, outdir })
}, 120_000)
afterAll(async () => {
  await srv.close()
  Fs.rmSync(outdir, { recursive: true, force: true })
})

const inputsOf = (meta: Metafile, outputs: ReadonlyArray<string>) =>
  outputs.flatMap((o) => Object.keys(meta.outputs[o]!.inputs))

describe("the stdio bundle", () => {
  it("loads only the SDK and the light front before initialize; Effect, the contract, Ajv and the handlers later", () => {
    const entry = Object.keys(metafile.outputs).find((o) => o.endsWith("/sitehealth-mcp.mjs"))!
    const atStart = loadedAtStart(metafile, entry)
    const inputs = inputsOf(metafile, atStart)
    const ours = inputs.filter((i) => !i.includes("node_modules/") && !i.startsWith("left-out:")).map((i) =>
      Path.basename(i)
    ).sort()
    expect(ours).toEqual(["EarlyInitialize.ts", "Identity.ts", "StdioInput.ts", "main.ts"])
    // Not even the MCP SDK, nor Effect, the domain or Ajv: initialize is answered before they load
    // (EarlyInitialize.ts).
    expect(inputs.filter((i) => i.includes("node_modules/") || i.includes("packages/domain/"))).toEqual([])
    // They are in the chunks loaded later.
    const later = inputsOf(metafile, Object.keys(metafile.outputs).filter((o) => !atStart.includes(o)))
    expect(later.some((i) => i.includes("node_modules/@modelcontextprotocol/sdk/"))).toBe(true)
    expect(later.some((i) => i.includes("node_modules/effect/"))).toBe(true)
    // Ajv is left out of every chunk, not only moved to a later one.
    expect(Object.keys(metafile.inputs).filter((i) => /node_modules\/ajv(-formats)?\//.test(i))).toEqual([])
  })

  it("serves: initialize, tools/list (the lazy chunks), a tool call, through the SDK client", async () => {
    const { projects, secret } = await srv.newAccount()
    const client = new Client({ name: "bundle", version: "0" })
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [Path.join(outdir, "sitehealth-mcp.mjs")],
        env: { PATH: process.env.PATH ?? "", SITEHEALTH_TOKEN: secret, SITEHEALTH_URL: srv.baseUrl },
        stderr: "pipe"
      })
    )
    try {
      expect(client.getServerVersion()?.name).toBe("sitehealth")
      expect((await client.listTools()).tools.length).toBe(29) // 28 derived (8 of webhooks, 4 of annotations) + what_changed
      const health: any = await client.callTool({ name: "get_health", arguments: { id: projects[0]!.id } })
      expect(health.isError).not.toBe(true)
      expect(health.structuredContent.projectId).toBe(projects[0]!.id)
    } finally {
      await client.close()
    }
  })
})
