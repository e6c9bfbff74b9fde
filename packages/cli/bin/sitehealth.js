#!/usr/bin/env node
// The `sitehealth` executable: the bundle (dist/sitehealth.mjs) when it is fresher than every source, else
// the TypeScript sources (bin/launch.js, shared with `sitehealth-mcp`).
import { launch } from "@sitehealth/cli/launch"

await launch(new URL("../", import.meta.url), "sitehealth")
