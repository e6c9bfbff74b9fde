/**
 * The web dashboard's static build (packages/web/dist), served at `/`:
 * - `/assets/*` are content-hashed by the build: `Cache-Control: public, max-age=31536000, immutable`;
 * - `/` (GET or HEAD) is the app for every client that does not ask for JSON alone: a browser, and curl's
 *   default Accept (any type) or none at all, so a first `curl -sI http://127.0.0.1:8787/` finds the
 *   dashboard, not a 404. A client asking for JSON (`Accept: application/json`, no `text/html`) keeps the
 *   envelope's 404;
 * - every other GET or HEAD outside the APIs (`/api`, `/app/api`, `/mcp`) from a browser (`Accept: text/html`) is
 *   the single-page app: index.html with `no-cache` (revalidated each time, so a new build is picked up at once),
 *   routes resolved in the browser. Any other client (curl, an API client with a typo) keeps the envelope's
 *   404 `route_not_found`, as before the dashboard existed;
 * - a strict Content-Security-Policy on every page: no inline script, nothing from another origin.
 * The build is read into memory once, with a gzip copy of each text file, at the first request (a few
 * hundred KB): the build's own `<file>.gz` when it has one that gunzips to the file (the web build writes them
 * with zopfli, ~3 % smaller than zlib's level 9; packages/web/vite.config.ts), else (or if it is larger) zlib's
 * level 9 made here.
 * Without a build, the pages answer 503 saying how to make one (`npm start` builds it first).
 */
import { errorBody } from "@sitehealth/domain/Envelope"
import { clipInput } from "@sitehealth/domain/Errors"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Zlib from "node:zlib"
import { acceptsGzip } from "./AcceptEncoding.ts"

/** The nearest folder above this module holding a package.json: packages/server, from its sources or its bundle. */
const packageRoot = (from: string): string => {
  let dir = from
  while (!Fs.existsSync(Path.join(dir, "package.json")) && Path.dirname(dir) !== dir) dir = Path.dirname(dir)
  return dir
}

export const WEB_DIST = process.env.SITEHEALTH_WEB_DIST ??
  Path.resolve(packageRoot(Path.dirname(fileURLToPath(import.meta.url))), "../web/dist")

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'"
].join("; ")

const IMMUTABLE = "public, max-age=31536000, immutable"

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
  ".map": "application/json"
}
const COMPRESSIBLE = new Set([".html", ".js", ".css", ".json", ".svg", ".txt", ".map"])

interface StaticFile {
  readonly body: Uint8Array
  readonly gzip: Uint8Array | undefined
  readonly type: string
}

/**
 * The build's precompressed copy of a file (`<file>.gz`), if it has one and it is this file's: a `.gz` left by an
 * earlier build (index.html keeps its name) or a damaged one is ignored, and the file is compressed here instead.
 */
const precompressed = (path: string, body: Uint8Array): Uint8Array | undefined => {
  if (!Fs.existsSync(`${path}.gz`)) return undefined
  const gz = Fs.readFileSync(`${path}.gz`)
  try {
    return Buffer.from(body).equals(Zlib.gunzipSync(gz)) ? gz : undefined
  } catch {
    return undefined
  }
}

const smaller = (a: Uint8Array | undefined, b: Uint8Array) => (a !== undefined && a.length <= b.length ? a : b)

/**
 * Every file of the build by its URL path ("/index.html", "/assets/index-3f2a.js"); the `.gz` copies are not files of
 * their own.
 */
export const loadBuild = (dir: string): ReadonlyMap<string, StaticFile> => {
  const files = new Map<string, StaticFile>()
  if (!Fs.existsSync(Path.join(dir, "index.html"))) return files
  const walk = (sub: string) => {
    for (const entry of Fs.readdirSync(Path.join(dir, sub), { withFileTypes: true })) {
      const rel = Path.posix.join(sub, entry.name)
      if (entry.isDirectory()) walk(rel)
      else if (entry.isFile() && !entry.name.endsWith(".gz")) {
        const ext = Path.extname(entry.name).toLowerCase()
        const body = Fs.readFileSync(Path.join(dir, rel))
        files.set("/" + rel, {
          body,
          gzip: COMPRESSIBLE.has(ext) && body.length > 1024
            ? smaller(precompressed(Path.join(dir, rel), body), Zlib.gzipSync(body, { level: 9 }))
            : undefined,
          type: TYPES[ext] ?? "application/octet-stream"
        })
      }
    }
  }
  walk("")
  return files
}

/** Paths that belong to an API: never the app, always the envelope's 404 when nothing else matched. */
export const isApiPath = (path: string) =>
  path === "/api" || path.startsWith("/api/") || path === "/app/api" || path.startsWith("/app/api/") ||
  path === "/mcp" || path.startsWith("/mcp/")

const send = (
  file: StaticFile,
  request: HttpServerRequest.HttpServerRequest,
  cacheControl: string,
  extra: Record<string, string> = {}
) => {
  const gzip = file.gzip !== undefined && acceptsGzip(request.headers["accept-encoding"])
  return HttpServerResponse.uint8Array(gzip ? file.gzip! : file.body, {
    contentType: file.type,
    headers: {
      "cache-control": cacheControl,
      "x-content-type-options": "nosniff",
      ...(file.gzip !== undefined ? { vary: "Accept-Encoding" } : {}),
      ...(gzip ? { "content-encoding": "gzip" } : {}),
      ...extra
    }
  })
}

const pageHeaders = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY"
}

const notFound = (request: HttpServerRequest.HttpServerRequest) =>
  HttpServerResponse.jsonUnsafe(
    errorBody(404, `No route for ${clipInput(`${request.method} ${request.url.split("?")[0]}`)}`, "route_not_found"),
    { status: 404 }
  )

let cached: { readonly dir: string; readonly files: ReadonlyMap<string, StaticFile> } | undefined
/** The build, read once per directory (again while it is missing, so a build made after start is picked up). */
const buildIn = (dir: string) => {
  if (cached === undefined || cached.dir !== dir || cached.files.size === 0) cached = { dir, files: loadBuild(dir) }
  return cached.files
}

const pathOf = (request: HttpServerRequest.HttpServerRequest) => {
  try {
    return decodeURIComponent(new URL(request.url, "http://x").pathname)
  } catch {
    return undefined
  }
}

/** A browser's navigation: its Accept names HTML. */
const asksForHtml = (accept: string) => accept.includes("text/html")

/**
 * A client that asks for JSON and not for HTML (`Accept: application/json`, an API client's `…+json`): the
 * envelope's 404 at `/` stays its answer. Any other Accept (none, curl's any type, a browser's) gets the app.
 */
export const asksForJsonOnly = (accept: string | undefined): boolean => {
  const value = (accept ?? "").toLowerCase()
  return /\bjson\b/.test(value) && !asksForHtml(value)
}

/**
 * The single-page app's answer to a GET (or HEAD) that matched no route, or undefined (then the caller's 404): a
 * page of the app (index.html) for a browser navigation outside the APIs, or for any client at `/` that does not
 * ask for JSON alone; a top-level file of the build (favicon, robots.txt); or the 503 saying the dashboard is not
 * built.
 */
export const spaAnswer = (
  request: HttpServerRequest.HttpServerRequest,
  dir: string = WEB_DIST
): HttpServerResponse.HttpServerResponse | undefined => {
  if (request.method !== "GET" && request.method !== "HEAD") return undefined
  const path = pathOf(request)
  if (path === undefined || isApiPath(path)) return undefined
  const files = buildIn(dir)
  if (path.startsWith("/assets/")) {
    // A GET is the route's below; a HEAD reaches the catch-all first (it matches every method) and lands here.
    const asset = request.method === "HEAD" ? files.get(path) : undefined
    return asset === undefined ? undefined : send(asset, request, IMMUTABLE)
  }
  const file = path !== "/index.html" && path !== "/" ? files.get(path) : undefined
  // Its name has no hash: revalidated, not immutable.
  if (file !== undefined) return send(file, request, "no-cache")
  const accept = request.headers["accept"] ?? ""
  const page = path === "/" ? !asksForJsonOnly(accept) : asksForHtml(accept)
  if (!page) return undefined
  const index = files.get("/index.html")
  if (index === undefined) {
    return HttpServerResponse.text(
      "The dashboard is not built. Run `npm run build -w @sitehealth/web` (npm start does it when missing).\n",
      { status: 503, headers: { "cache-control": "no-store" } }
    )
  }
  return send(index, request, "no-cache", pageHeaders)
}

/**
 * `GET /` (the app, for any client but one asking for JSON alone) and `GET /assets/*` (hashed files, immutable);
 * the router answers their HEAD with these routes too. Every other page of the app is answered by the router's
 * catch-all through `spaAnswer` — a "GET /*" route here would take the catch-all's pattern (and its `unmatched`
 * in the request log and metrics).
 */
export const staticRoutes = (dir: string = WEB_DIST) =>
  HttpRouter.addAll([
    HttpRouter.route("GET", "/", (request) => Effect.sync(() => spaAnswer(request, dir) ?? notFound(request))),
    HttpRouter.route("GET", "/assets/*", (request) =>
      Effect.sync(() => {
        const path = pathOf(request)
        const asset = path === undefined ? undefined : buildIn(dir).get(path)
        return asset === undefined ? notFound(request) : send(asset, request, IMMUTABLE)
      }))
  ])
