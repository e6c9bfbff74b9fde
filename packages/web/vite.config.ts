/**
 * The dashboard's build: hashed files under dist/assets (served immutable), one index.html (no inline
 * script, so the server's Content-Security-Policy can forbid it). JSX by the bundler's automatic runtime.
 */
import { defineConfig } from "vite"

export default defineConfig({
  base: "/",
  build: {
    outDir: "dist",
    assetsDir: "assets",
    emptyOutDir: true,
    target: "es2022",
    // The module-preload polyfill is an inline script unless disabled; every browser we target has it.
    modulePreload: { polyfill: false },
    reportCompressedSize: true
  },
  server: { proxy: { "/app/api": "http://127.0.0.1:8787", "/api": "http://127.0.0.1:8787", "/mcp": "http://127.0.0.1:8787" } }
})
