/**
 * Bundles the stdio MCP server, dist/sitehealth-mcp.mjs, so a client's spawn reaches `initialize` in a
 * fraction of the time loading the TypeScript sources module by module takes. `npm run build -w
 * @sitehealth/mcp`; also run by `npm install` (prepare). How: @sitehealth/cli's scripts/bundle.ts, shared with
 * the CLI. The handlers, Effect, the contract and the tool table are imported dynamically (Server.ts,
 * main.ts): chunks of their own, loaded after `initialize` has been answered (test/Bundle.test.ts). Ajv is
 * left out: the SDK builds it only for elicitation, which this server never requests (Server.ts, NO_ELICITATION).
 */
import { bundle, type BundleOptions } from "@sitehealth/cli/bundle"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

export const MCP_BUNDLE: BundleOptions = {
  root: Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), ".."),
  name: "sitehealth-mcp",
  splitting: true,
  leaveOut: ["ajv", "ajv-formats"]
}

if (import.meta.main) await bundle(MCP_BUNDLE)
