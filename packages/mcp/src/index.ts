export { apiClientSend } from "./ApiClientSend.ts"
export { type ApiAnswer, type ApiRequest, requestFor, resultOf, type Send, type ToolResult } from "./Dispatch.ts"
export { CURRENT_TOKEN, discoverPermissions, makeHandlers } from "./Handlers.ts"
export { httpSend } from "./HttpSend.ts"
export { INSTRUCTIONS, makeMcpServer, type McpOptions, NO_ELICITATION, SERVER_INFO } from "./Server.ts"
export {
  deriveTools,
  parseReadOnly,
  parseToolsets,
  selectTools,
  type ToolDefinition,
  toolNameOf,
  toolsetsOf,
  type ToolSpec
} from "./Tools.ts"
