/**
 * The dashboard's build: hashed files under dist/assets (served immutable), one index.html (no inline
 * script, so the server's Content-Security-Policy can forbid it). JSX by the bundler's automatic runtime.
 */
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vite"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../..")

export default defineConfig({
  base: "/",
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
      // @effect/atom-react marks its modules "use client" (for React Server Components); meaningless in a
      // client-only bundle.
      onwarn(warning, warn) {
        if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning)
      }
    }
  },
  server: { proxy: { "/app/api": "http://127.0.0.1:8787", "/api": "http://127.0.0.1:8787", "/mcp": "http://127.0.0.1:8787" } }
})
