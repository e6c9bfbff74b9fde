/**
 * Names shared by the tools and the modules that must not load the contract to start: the stdio server
 * answers `initialize` before the contract (Api.ts) and the tool table are loaded (they load on the first
 * `tools/list` or call), so what it needs earlier lives here.
 */

/** `getHealth` → `get_health`. */
export const toolNameOf = (endpointName: string): string => endpointName.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/**
 * MCP-only argument of create_token (and create_webhook, update_webhook), taken off the call before it becomes
 * the endpoint's request: the minted secret reaches the model's context only when asked for.
 */
export const REVEAL_SECRET = "reveal_secret"

/** The endpoints whose answer may carry a secret shown once: a minted token, a webhook's signing secret. */
export const SECRET_ENDPOINTS: ReadonlyArray<string> = ["createToken", "createWebhook", "updateWebhook"]

/** The MCP-only arguments a tool takes beyond its endpoint's (each a boolean), by endpoint name. */
export const mcpOnlyArguments = (endpointName: string): ReadonlyArray<string> =>
  SECRET_ENDPOINTS.includes(endpointName) ? [REVEAL_SECRET] : []
