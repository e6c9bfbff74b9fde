export { deriveTools, toolNameOf, type ToolDefinition, type ToolSpec } from "./Tools.ts"
export { requestFor, resultOf, type ApiAnswer, type ApiRequest, type Send, type ToolResult } from "./Dispatch.ts"
export { discoverPermissions, makeMcpServer, SERVER_INFO, type McpOptions } from "./Server.ts"
export { httpSend } from "./HttpSend.ts"
