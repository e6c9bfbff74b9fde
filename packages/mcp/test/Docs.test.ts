/**
 * docs/mcp.md says what the server does: its tool table is `deriveTools()` row for row (name, toolset,
 * endpoint, permission, the four annotations), its toolsets are the contract's groups, and the commands of
 * its set-up snippets name files and scripts that exist in the checkout.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { deriveTools, toolsetsOf } from "../src/Tools.ts"
import { MCP_ROOT } from "./support/Mcp.ts"

const REPO = Path.resolve(MCP_ROOT, "../..")
const doc = Fs.readFileSync(Path.join(REPO, "docs/mcp.md"), "utf8")

/** The rows of the tool table: `| \`name\` | toolset | METHOD /path | \`permission\` | hints… |`. */
const rows = doc.split("\n")
  .filter((line) => /^\| `[a-z_]+` \| /.test(line))
  .map((line) => line.split("|").slice(1, -1).map((cell) => cell.trim().replace(/`/g, "")))

describe("docs/mcp.md", () => {
  it("has one table row per tool, as deriveTools() answers it, annotations included", () => {
    const tools = deriveTools()
    expect(rows.map((r) => r[0])).toEqual(tools.map((t) => t.definition.name))
    for (const tool of tools) {
      const row = rows.find((r) => r[0] === tool.definition.name)!
      const a = tool.definition.annotations!
      expect(row.slice(1, 8), tool.definition.name).toEqual([
        tool.group,
        `${tool.method} ${tool.path.replace(/^\/api\/v1/, "").replace(/:(\w+)/g, "{$1}")}`,
        tool.permission,
        String(a.readOnlyHint),
        String(a.destructiveHint),
        String(a.idempotentHint),
        String(a.openWorldHint)
      ])
    }
  })

  it("names the toolsets there are", () => {
    const line = doc.split("\n").find((l) => l.startsWith("   The toolsets are "))!
    expect([...line.matchAll(/`([a-z]+)`/g)].map((m) => m[1]).filter((n) => n !== "all")).toEqual([...toolsetsOf()])
  })

  it("its set-up snippets name the checkout's bin, its Node and the root `mcp` script", () => {
    const root = JSON.parse(Fs.readFileSync(Path.join(REPO, "package.json"), "utf8"))
    expect(doc).toContain("/path/to/sitehealth/packages/mcp/bin/sitehealth-mcp.js")
    expect(Fs.existsSync(Path.join(MCP_ROOT, "bin/sitehealth-mcp.js"))).toBe(true)
    expect(doc).toContain("/path/to/sitehealth/node_modules/.bin/node")
    expect(root.devDependencies.node).toBeDefined()
    expect(root.scripts.mcp).toBe("node packages/mcp/bin/sitehealth-mcp.js")
    // Never a name npx would fetch from the registry (sitehealth-mcp is not published: anyone could take it).
    expect(doc).not.toMatch(/"command": "npx"/)
  })
})
