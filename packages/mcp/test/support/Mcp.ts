/** Test helpers: an MCP client over InMemoryTransport or over the real stdio bin, and a plain REST call. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { TestServer } from "@sitehealth/cli/test/support/TestServer"
import { createAccount, createProject, mintToken } from "@sitehealth/server/accounts/Provisioning"
import { Effect } from "effect"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { apiClientSend } from "../../src/ApiClientSend.ts"
import { makeMcpServer, type McpOptions } from "../../src/Server.ts"

export const MCP_ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../..")
export const BIN = Path.join(MCP_ROOT, "bin/sitehealth-mcp.js")

export const inMemoryClient = async (
  baseUrl: string,
  token: string,
  readOnly = false,
  options: Omit<McpOptions, "send" | "readOnly"> = {}
) => {
  const server = makeMcpServer({ send: apiClientSend(baseUrl, token), readOnly, ...options })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: "test", version: "0" })
  await client.connect(clientSide)
  return client
}

export const stdioClient = async (env: Record<string, string>, args: ReadonlyArray<string> = []) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, ...args],
    env: { PATH: process.env.PATH ?? "", ...env },
    stderr: "pipe"
  })
  const client = new Client({ name: "test", version: "0" })
  await client.connect(transport)
  return client
}

/**
 * `connect`'s client, closed with the test's scope — also when an assertion fails first (no stdio child left behind).
 */
export const scopedClient = (connect: () => Promise<Client>) =>
  Effect.acquireRelease(Effect.promise(connect), (client) => Effect.promise(() => client.close()))

export interface Rest {
  readonly status: number
  readonly body: any
}

export const rest = async (
  baseUrl: string,
  token: string,
  method: string,
  url: string,
  body?: unknown
): Promise<Rest> => {
  const response = await fetch(new URL(url, baseUrl), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, body: await response.json() }
}

/** The envelope inside an MCP error result (its first text block). */
export const envelopeOf = (result: any): any => JSON.parse(result.content[0].text)

/** An account whose trial ended yesterday, with one project and an all-access token. */
export const endedTrialAccount = async (srv: TestServer) => {
  const account = await srv.run(createAccount({ name: "ended", trialDays: -1 }))
  const project = await srv.run(createProject({ accountId: account.id, name: "Old", domain: "old.example" }))
  const { secret } = await srv.run(mintToken({ accountId: account.id, name: "root" }))
  return { account, project, secret }
}

/**
 * Rate-limit windows are aligned to the UTC minute (docs/api.md §4): a test that spends a token's whole
 * budget and expects the next call to be refused must not straddle a minute boundary. Waits out the last
 * seconds of a minute.
 */
export const awayFromMinuteEnd = async (marginMs = 8_000) => {
  const msLeft = 60_000 - (Date.now() % 60_000)
  if (msLeft < marginMs) await new Promise((r) => setTimeout(r, msLeft + 100))
}
