#!/usr/bin/env node
// The `sitehealth-mcp` executable: runs the TypeScript sources (Node 22.18+ strips types natively).
await import(new URL("../src/main.ts", import.meta.url).href)
