/**
 * Bundles the CLI into one file, dist/sitehealth.mjs, so `sitehealth --help` starts in well under 300 ms
 * (loading the TypeScript sources module by module takes 500–750 ms). `npm run build -w @sitehealth/cli`;
 * also run by `npm install` (prepare). How: scripts/bundle.ts, shared with the MCP server's bin.
 */
import { bundle } from "@sitehealth/cli/bundle"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

await bundle({ root: Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), ".."), name: "sitehealth" })
