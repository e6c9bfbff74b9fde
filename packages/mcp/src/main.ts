/**
 * `sitehealth-mcp`: the MCP server over stdio. stdout carries only the protocol; everything else goes to
 * stderr. Settings: platform/Settings.ts (SITEHEALTH_TOKEN, SITEHEALTH_URL, --read-only, --toolsets).
 *
 * What a client's spawn waits for is the answer to `initialize`, so this module imports no more than Node's
 * streams: it reads stdin at once (less JSON-RPC batches: StdioInput.ts), answers a well-formed `initialize`
 * there and then (EarlyInitialize.ts), and only then loads the MCP SDK and the server (StdioServe.ts), which
 * reads every line, that one included, and whose own answer to it is not written twice. The bundle keeps
 * StdioServe and all it imports in chunks of their own (test/Bundle.test.ts; `npm run bench:mcp`).
 */
import { answerInitializeEarly, withoutEcho } from "./EarlyInitialize.ts"
import { withoutBatches } from "./StdioInput.ts"

const { lines, answered, firstLine } = answerInitializeEarly(
  withoutBatches(process.stdin, process.stdout),
  process.stdout
)
// Loading the server is synchronous work that would hold stdin unread: it starts once the first line has
// been handled (or stdin has ended) — at once on a terminal, where no client is waiting to initialize.
if (process.stdin.isTTY !== true) await firstLine
const { serveStdio } = await import("./StdioServe.ts")
await serveStdio(lines, withoutEcho(process.stdout, answered), process.stdin)
