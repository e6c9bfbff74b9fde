#!/usr/bin/env node
// The `sitehealth-mcp` executable. It runs the bundle (dist/sitehealth-mcp.mjs, built by `npm install`)
// unless a source file of the MCP server or the contract is newer than it, then the TypeScript sources
// themselves (Node 22.18+ strips types natively; several times slower to start), so a stale bundle is
// never what answers.
import { existsSync, readdirSync, statSync } from "node:fs"
import * as Module from "node:module"

// V8's code cache on disk (Node 22.1+): the second start skips compiling the bundle (~100 ms of ~300).
Module.enableCompileCache?.()

const bundle = new URL("../dist/sitehealth-mcp.mjs", import.meta.url)
const sources = [new URL("../src/", import.meta.url), new URL("../../domain/src/", import.meta.url)]

const newestSource = () => {
  let newest = 0
  for (const dir of sources) {
    if (!existsSync(dir)) continue
    for (const name of readdirSync(dir, { recursive: true })) {
      if (String(name).endsWith(".ts")) newest = Math.max(newest, statSync(new URL(String(name), dir)).mtimeMs)
    }
  }
  return newest
}

const useBundle = existsSync(bundle) && statSync(bundle).mtimeMs >= newestSource()
await import(useBundle ? bundle.href : new URL("../src/main.ts", import.meta.url).href)
