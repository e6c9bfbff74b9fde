/**
 * The dashboard's build: hashed files under dist/assets (served immutable), one index.html (no inline
 * script, so the server's Content-Security-Policy can forbid it). JSX by the bundler's automatic runtime.
 */
import { gzipAsync } from "@gfx/zopfli"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { defineConfig, type Plugin } from "vite"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../..")
const domainSources = Path.join(root, "packages/domain/src") + Path.sep

/**
 * The contract's prose is for its OpenAPI document (served by the server), not for the browser: in the
 * client build, `doc(endpoint, summary, description)` becomes `endpoint`, and `summary`/`description`
 * (and OpenApi `title`) annotations, and the error classes' descriptions, are dropped from the domain's modules. Nothing the client does at run
 * time reads them (it decodes with the schemas; the messages it shows are the server's). ~9 KB of text,
 * ~3 KB gzipped, of the first screen's JavaScript (docs/dashboard-web.md, Size).
 */
const stripContractProse = (): Plugin => ({
  name: "sitehealth:strip-contract-prose",
  apply: "build",
  transform(code, id) {
    if (!id.startsWith(domainSources) || !id.endsWith(".ts")) return null
    const source = ts.createSourceFile(id, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
    const edits: Array<{ start: number; end: number; text: string }> = []
    const calleeName = (call: ts.CallExpression) =>
      ts.isIdentifier(call.expression) ?
        call.expression.text
        : ts.isPropertyAccessExpression(call.expression) ?
        call.expression.name.text
        : ""
    const isProse = (e: ts.Expression) => ts.isStringLiteralLike(e) || ts.isTemplateExpression(e)
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node)) {
        const name = calleeName(node)
        // `op(endpoint, spec)` (ApiOperation.ts, used by the Api*.ts groups) annotates the endpoint with its `Operation` — permission, CLI and MCP
        // names, summary, OpenAPI prose — which the server, the CLI and the MCP server read, never the web
        // client: the client build keeps `endpoint` alone.
        if (name === "op" && ts.isIdentifier(node.expression) && node.arguments.length === 2) {
          const first = node.arguments[0]!
          edits.push({ start: node.getStart(), end: first.getStart(), text: "" })
          edits.push({ start: first.getEnd(), end: node.getEnd(), text: "" })
          visit(first)
          return
        }
        if (name === "doc" && node.arguments.length > 1) {
          const first = node.arguments[0]!
          edits.push({ start: first.getEnd(), end: node.arguments[node.arguments.length - 1]!.getEnd(), text: "" })
          visit(first)
          return
        }
        // The error classes: ApiError<E>()("Tag", { status, identifier, description, fields }).
        const errorClass = ts.isCallExpression(node.expression) && calleeName(node.expression) === "ApiError"
        if (name === "annotate" || name === "annotateMerge" || name === "annotations" || errorClass) {
          const dropped = name === "annotations" ? ["summary", "description", "title"] : ["summary", "description"]
          for (const arg of node.arguments) {
            if (!ts.isObjectLiteralExpression(arg)) continue
            for (const p of arg.properties) {
              if (
                ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && dropped.includes(p.name.text) &&
                isProse(p.initializer)
              ) {
                // With its comma, if one follows (a last property leaves a trailing comma: still valid).
                const comma = /^\s*,/.exec(code.slice(p.getEnd()))
                edits.push({ start: p.getStart(), end: p.getEnd() + (comma?.[0].length ?? 0), text: "" })
              }
            }
          }
        }
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
    if (edits.length === 0) return null
    let out = code
    for (const e of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end)
    return { code: out, map: null }
  }
})

/**
 * The contract's modules are declarations: every call outside a function body (`Schema.Struct(…)`,
 * `HttpApiGroup.make(…).add(…)`, `ApiError<E>()(…)`, `Envelope(…)`) builds a value and does nothing else. The
 * bundler cannot know that and keeps them all, used or not. In the client build each such call is wrapped as
 * `(/*#__PURE__*\/ call)`, so what the client never reaches is dropped. Scoped to packages/domain/src: a
 * global `treeshake.manualPureFunctions: ["HttpApi", …]` would also drop `HttpApi.reflect(…)` inside effect's
 * HttpApiClient (its result is unused; its callbacks build the client) — tried, and it broke the app.
 * The assumption this makes: no domain module relies on a top-level call's side effect (none does; keep it so).
 */
const pureContract = (): Plugin => ({
  name: "sitehealth:pure-contract",
  apply: "build",
  transform(code, id) {
    if (!id.startsWith(domainSources) || !id.endsWith(".ts")) return null
    const source = ts.createSourceFile(id, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
    const opens = new Map<number, Array<string>>()
    const closes = new Map<number, Array<string>>()
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) || ts.isClassStaticBlockDeclaration(node)) return
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        // Outer calls open first and close last (a chain's calls share their start).
        opens.set(node.getStart(), [...(opens.get(node.getStart()) ?? []), "(/*#__PURE__*/ "])
        closes.set(node.getEnd(), [")", ...(closes.get(node.getEnd()) ?? [])])
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
    if (opens.size === 0) return null
    let out = ""
    for (let i = 0; i <= code.length; i++) {
      out += (closes.get(i) ?? []).join("") + (opens.get(i) ?? []).join("")
      if (i < code.length) out += code[i]
    }
    return { code: out, map: null }
  }
})

/**
 * Each text file of the build gets a gzip copy beside it (`<file>.gz`), made with zopfli: a gzip stream like
 * any other (every browser reads it), ~3 % smaller than zlib's level 9, which the server used to make at its
 * start. The server sends it when it is the file's and the smaller one (packages/server/src/http/Static.ts);
 * the first screen's JavaScript is ~4.8 KB lighter on the wire for it (docs/dashboard-web.md, Size). Zopfli
 * is slow (a few seconds for the shell; 5 iterations keep nearly all of 15's gain for a third of the time),
 * so it runs once per build, not per request.
 */
const precompress = (): Plugin => ({
  name: "sitehealth:precompress",
  apply: "build",
  async writeBundle(options, bundle) {
    const dir = options.dir ?? Path.join(Path.dirname(fileURLToPath(import.meta.url)), "dist")
    for (const file of Object.values(bundle)) {
      if (!/\.(js|css|html|svg|json)$/.test(file.fileName)) continue
      const body = file.type === "chunk" ? file.code : file.source
      if ((typeof body === "string" ? Buffer.byteLength(body) : body.length) <= 1024) continue
      const gz = await gzipAsync(typeof body === "string" ? Buffer.from(body) : body, { numiterations: 5 })
      await Fs.promises.writeFile(Path.join(dir, `${file.fileName}.gz`), gz)
    }
  }
})

export default defineConfig({
  base: "/",
  plugins: [stripContractProse(), pureContract(), precompress()],
  resolve: {
    // @effect/atom-react 4.0.0-rc.117 (the newest) imports the atoms from `effect/unstable/reactivity/*`, where
    // they lived before effect 4.1 moved them to `effect/reactivity/*` (same modules). Same mapping in tsconfig.
    alias: [{ find: /^effect\/unstable\/reactivity\/(.*)$/, replacement: "effect/reactivity/$1" }]
  },
  // The checkout this build belongs to: the API / MCP page shows ready-to-paste commands that run its CLI
  // and MCP server with the Node that built it (Node 22, from node_modules).
  define: {
    __SITEHEALTH_NODE__: JSON.stringify(process.execPath),
    __SITEHEALTH_CLI_BIN__: JSON.stringify(Path.join(root, "packages/cli/bin/sitehealth.js")),
    __SITEHEALTH_MCP_BIN__: JSON.stringify(Path.join(root, "packages/mcp/bin/sitehealth-mcp.js"))
  },
  build: {
    outDir: "dist",
    assetsDir: "assets",
    emptyOutDir: true,
    target: "es2022",
    // The module-preload polyfill is an inline script unless disabled; every browser we target has it.
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
    rollupOptions: {
      // A property read is taken to have no side effect, so a top-level `make(…).layer` or `X.y` whose result
      // nothing uses is dropped with what it reaches (effect's HttpRouter middleware layer, BigDecimal, …):
      // −1.6 KB gzipped off the shell. The assumption: no module of the client relies on a getter's side effect
      // at its top level (none is known to; the browser tests cover every page).
      treeshake: { propertyReadSideEffects: false },
      // @effect/atom-react marks its modules "use client" (for React Server Components); meaningless in a
      // client-only bundle.
      onwarn(warning, warn) {
        if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning)
      }
    }
  },
  server: {
    proxy: { "/app/api": "http://127.0.0.1:8787", "/api": "http://127.0.0.1:8787", "/mcp": "http://127.0.0.1:8787" }
  }
})
