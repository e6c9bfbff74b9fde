#!/usr/bin/env node
// The `sitehealth-mcp` executable: the bundle (dist/sitehealth-mcp.mjs) when it is fresher than every
// source, else the TypeScript sources (@sitehealth/cli's bin/launch.js, shared with `sitehealth`).
import { launch } from "@sitehealth/cli/launch"

await launch(new URL("../", import.meta.url), "sitehealth-mcp")
