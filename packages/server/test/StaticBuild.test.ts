/**
 * The dashboard build's gzip copies (packages/server/src/http/Static.ts, `loadBuild`): a `<file>.gz` the build
 * wrote is served when it is that file's and smaller than zlib's; a stale, damaged or larger one is not; the
 * `.gz` files are never files of their own.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Zlib from "node:zlib"
import { loadBuild } from "../src/http/Static.ts"

const withBuild = (files: Record<string, Uint8Array | string>, f: (dir: string) => void) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-static-"))
  try {
    for (const [name, content] of Object.entries(files)) {
      Fs.mkdirSync(Path.dirname(Path.join(dir, name)), { recursive: true })
      Fs.writeFileSync(Path.join(dir, name), content)
    }
    f(dir)
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}

// Compressible and over the 1 KB threshold.
const js = Array.from({ length: 400 }, (_, i) => `export const v${i} = ${i * 7919 % 1000};`).join("\n")
const html = `<!doctype html><html><body>${"<div id=root></div>".repeat(80)}</body></html>`

describe("loadBuild", () => {
  it("serves the build's own .gz of a file when it gunzips to the file and is no larger than zlib's", () => {
    // The file's gzip as zlib's level 9 makes it, but told apart from the server's own by its header's OS byte
    // (255, "unknown": still a valid gzip of the same length).
    const own = Zlib.gzipSync(js, { level: 9 })
    own[9] = 255
    withBuild({ "index.html": html, "assets/a.js": js, "assets/a.js.gz": own }, (dir) => {
      const files = loadBuild(dir)
      expect([...files.keys()].sort()).toEqual(["/assets/a.js", "/index.html"])
      const a = files.get("/assets/a.js")!
      expect(Buffer.from(a.gzip!).equals(own)).toBe(true)
      expect(Zlib.gunzipSync(a.gzip!).toString()).toBe(js)
    })
  })

  it("ignores a .gz that is not the file's (stale or damaged) or larger than zlib's, and compresses the file itself", () => {
    const stale = Zlib.gzipSync(`${js}\n// an older build`, { level: 9 })
    const larger = Zlib.gzipSync(js, { level: 0 })
    expect(larger.length).toBeGreaterThan(Zlib.gzipSync(js, { level: 9 }).length)
    withBuild({
      "index.html": html,
      "index.html.gz": stale,
      "assets/a.js": js,
      "assets/a.js.gz": larger,
      "assets/b.js": js,
      "assets/b.js.gz": "not gzip at all"
    }, (dir) => {
      const files = loadBuild(dir)
      expect([...files.keys()].sort()).toEqual(["/assets/a.js", "/assets/b.js", "/index.html"])
      for (const [path, body] of [["/index.html", html], ["/assets/a.js", js], ["/assets/b.js", js]] as const) {
        const gzip = files.get(path)!.gzip!
        expect(Zlib.gunzipSync(gzip).toString(), path).toBe(body)
        expect(gzip.length, path).toBe(Zlib.gzipSync(body, { level: 9 }).length)
      }
    })
  })
})
