/** Set by vite.config.ts at build time: where this checkout's node, CLI and MCP server are. */
declare const __SITEHEALTH_NODE__: string
declare const __SITEHEALTH_CLI_BIN__: string
declare const __SITEHEALTH_MCP_BIN__: string
