/**
 * The dashboard build's gzip copies (packages/server/src/http/Static.ts, `loadBuild`): a `<file>.gz` the build
 * wrote is served when it is that file's and smaller than zlib's; a stale, damaged or larger one is not; the
 * `.gz` files are never files of their own. Who gets the app: see the second suite.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Zlib from "node:zlib"
import { loadBuild, spaAnswer, staticRoutes } from "../src/http/Static.ts"

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

const withBuildAsync = async (files: Record<string, string>, f: (dir: string) => Promise<void>) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-static-"))
  try {
    for (const [name, content] of Object.entries(files)) {
      Fs.mkdirSync(Path.dirname(Path.join(dir, name)), { recursive: true })
      Fs.writeFileSync(Path.join(dir, name), content)
    }
    await f(dir)
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

/**
 * Who gets the app (packages/server/src/http/Static.ts, `spaAnswer`), through a router laid out as App.ts's: the
 * static routes and the catch-all. `/` is the app for any client but one asking for JSON alone (curl's first
 * look at a fresh server finds the dashboard), by GET or HEAD; other pages are the app for a browser only.
 */
describe("who gets the app", () => {
  const app = (dir: string) =>
    HttpRouter.toWebHandler(
      Layer.mergeAll(
        staticRoutes(dir),
        HttpRouter.add("*", "*", (request) =>
          Effect.succeed(
            spaAnswer(request, dir) ?? HttpServerResponse.jsonUnsafe({ error: "route_not_found" }, { status: 404 })
          ))
      ).pipe(Layer.provide(HttpServer.layerServices)),
      { disableLogger: true }
    )
  const call = async (dir: string, method: string, path: string, accept?: string) => {
    const { dispose, handler } = app(dir)
    try {
      const response = await handler(
        new Request(`http://localhost${path}`, { method, headers: accept === undefined ? {} : { accept } })
      )
      return { status: response.status, type: response.headers.get("content-type"), body: await response.text() }
    } finally {
      await dispose()
    }
  }

  it("serves / to any client that does not ask for JSON alone, by GET and HEAD; JSON alone keeps the 404", () =>
    withBuildAsync({ "index.html": html, "assets/a.js": js }, async (dir) => {
      for (const accept of [undefined, "*/*", "text/html,application/xhtml+xml", "text/html, application/json"]) {
        const get = await call(dir, "GET", "/", accept)
        expect([get.status, get.type, get.body], `GET / Accept ${accept}`).toEqual([
          200,
          "text/html; charset=utf-8",
          html
        ])
        const head = await call(dir, "HEAD", "/", accept)
        expect([head.status, head.type, head.body], `HEAD / Accept ${accept}`).toEqual([
          200,
          "text/html; charset=utf-8",
          ""
        ])
      }
      for (const accept of ["application/json", "application/json, text/event-stream", "application/problem+json"]) {
        expect((await call(dir, "GET", "/", accept)).status, accept).toBe(404)
        expect((await call(dir, "HEAD", "/", accept)).status, accept).toBe(404)
      }
      // Other pages: a browser's navigation only; curl asking for a typo still gets the 404, not a page.
      expect((await call(dir, "GET", "/websites", "text/html")).status).toBe(200)
      expect((await call(dir, "HEAD", "/websites", "text/html")).status).toBe(200)
      expect((await call(dir, "GET", "/websites", "*/*")).status).toBe(404)
      expect((await call(dir, "GET", "/api/v1/nope")).status).toBe(404)
      expect((await call(dir, "HEAD", "/assets/a.js")).status).toBe(200)
    }))
})
