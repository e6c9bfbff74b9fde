#!/usr/bin/env node
// The `sitehealth` executable. It runs the bundle (dist/sitehealth.mjs, built by `npm install`; starts
// in ~120 ms) unless a source file of the CLI or the contract is newer than it, then the TypeScript
// sources themselves (Node 22.18+ runs them; ~600 ms), so a stale bundle is never what answers.
import { existsSync, readdirSync, statSync } from "node:fs"

const bundle = new URL("../dist/sitehealth.mjs", import.meta.url)
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
