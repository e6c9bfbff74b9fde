/** What an MCP server is made with (Server.ts), apart from the server so that the handlers can name it. */
import type { Send } from "./Dispatch.ts"
import type { RetryPolicy } from "./Retry.ts"
import type { FollowPolicy } from "./SyncProgress.ts"

export interface McpOptions {
  readonly send: Send
  /** Only read tools (`--read-only`, `?read_only=true`, `X-MCP-Readonly`). */
  readonly readOnly?: boolean
  /**
   * Only these toolsets (the contract's groups); null or omitted: all (`--toolsets`, `?toolsets=`, `X-MCP-Toolsets`).
   */
  readonly toolsets?: ReadonlyArray<string> | null
  /** Retries of a tool call's POST, with one Idempotency-Key for all its attempts (Retry.ts). */
  readonly retry?: RetryPolicy
  /** How long and how often a followed `sync_integration` reads its run (SyncProgress.ts). */
  readonly follow?: FollowPolicy
}
