/**
 * `logging`: a triggered sync told as it goes. A client that set a logging level (or sent a progress token)
 * hears the run queued, running, then succeeded or failed, in order, as `notifications/message`; below its
 * level it hears nothing; a client that asked for neither gets the queued run at once, as before. The worker's
 * part is played here on the server's own queue, so each step happens when the test says.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { startServer, type TestServer } from "@sitehealth/cli/test/support/TestServer"
import { CredentialsCipher } from "@sitehealth/server/integrations/Crypto"
import { IntegrationsRepo } from "@sitehealth/server/integrations/IntegrationsRepo"
import { SyncQueue } from "@sitehealth/server/integrations/SyncQueue"
import { TEST_KEY } from "@sitehealth/server/test/support/SyncFakes"
import { Effect } from "effect"
import { apiClientSend } from "../src/ApiClientSend.ts"
import { makeMcpServer } from "../src/Server.ts"

let srv: TestServer
beforeAll(async () => {
  srv = await startServer()
})
afterAll(async () => {
  await srv.close()
})

/** A project whose Plausible is connected (no worker runs here: its syncs stay queued until the test moves them). */
const connected = async () => {
  const { projects, secret } = await srv.newAccount()
  const projectId = projects[0]!.id
  await srv.run(Effect.gen(function*() {
    const cipher = yield* Effect.provide(Effect.service(CredentialsCipher), CredentialsCipher.layer(TEST_KEY))
    return yield* (yield* IntegrationsRepo).connect({
      projectId,
      provider: "plausible",
      credentials: cipher.encrypt({ apiKey: "k", siteId: "site0.example" }),
      baseUrl: "https://plausible.example",
      syncIntervalMinutes: null,
      now: new Date()
    })
  }))
  return { projectId, secret }
}

const queue = <A>(f: (q: SyncQueue["Service"]) => Effect.Effect<A>) =>
  srv.run(Effect.flatMap(Effect.service(SyncQueue), f))

/** The worker's steps, on the run the call queued. */
const claim = (projectId: string) => queue((q) => q.claim(new Date(), 60_000, [projectId]))
const succeed = (run: any) =>
  queue((q) =>
    q.succeed({
      run,
      counts: { days: 30, pages: 12 },
      state: null,
      now: new Date(),
      nextSyncAt: new Date(Date.now() + 3_600_000),
      historyPending: false
    })
  )
const fail = (run: any) =>
  queue((q) => q.fail({ run, error: "Plausible answered 401", now: new Date(), retryAt: null, nextSyncAt: new Date() }))

const until = async (ready: () => boolean | Promise<boolean>, what: string) => {
  for (let i = 0; i < 400; i++) {
    if (await ready()) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`timed out waiting for ${what}`)
}

/** An in-memory MCP client whose server follows syncs every 25 ms for at most `boundMs`; the messages it hears. */
const client = async (secret: string, boundMs = 10_000) => {
  const server = makeMcpServer({ send: apiClientSend(srv.baseUrl, secret), follow: { intervalMs: 25, boundMs } })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const c = new Client({ name: "test", version: "0" })
  const heard: Array<any> = []
  c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    heard.push(n.params)
  })
  await c.connect(clientSide)
  return { c, heard }
}

const statuses = (heard: ReadonlyArray<any>) => heard.map((m) => m.data.status)

describe("sync_integration with logging", () => {
  it("declares the logging capability", async () => {
    const { secret } = await connected()
    const { c } = await client(secret)
    expect(c.getServerCapabilities()?.logging).toEqual({})
    await c.close()
  })

  it("level info: queued, running, succeeded with what it fetched, in order; the answer says how it ended", async () => {
    const { projectId, secret } = await connected()
    const { c, heard } = await client(secret)
    await c.setLoggingLevel("info")
    const call = c.callTool({ name: "sync_integration", arguments: { id: projectId, provider: "plausible" } })
    await until(() => heard.length >= 1, "queued")
    const run = await claim(projectId)
    expect(run).not.toBeNull()
    await until(() => heard.length >= 2, "running")
    expect(await succeed(run)).toBe(true)
    const result: any = await call
    expect(statuses(heard)).toEqual(["queued", "running", "succeeded"])
    expect(heard.every((m) => m.logger === "sync" && m.data.syncId === run!.id)).toBe(true)
    expect(heard.map((m) => m.level)).toEqual(["info", "info", "info"])
    expect(heard[2].data.counts).toEqual({ days: 30, pages: 12 })
    expect(heard[2].data.message).toBe(`plausible sync ${run!.id} succeeded: days 30, pages 12`)
    expect(result.isError).toBeUndefined()
    expect(result.structuredContent.sync.id).toBe(run!.id)
    expect(result.content.at(-1).text).toBe(`sync_integration: followed ${run!.id}: succeeded`)
    await c.close()
  })

  it("level error: only the failure is told, with its reason", async () => {
    const { projectId, secret } = await connected()
    const { c, heard } = await client(secret)
    await c.setLoggingLevel("error")
    const call = c.callTool({ name: "sync_integration", arguments: { id: projectId, provider: "plausible" } })
    let run: any = null
    await until(async () => (run = await claim(projectId)) !== null, "the queued run")
    await fail(run)
    const result: any = await call
    expect(heard).toHaveLength(1)
    expect(heard[0]).toMatchObject({
      level: "error",
      logger: "sync",
      data: { status: "failed", error: "Plausible answered 401", syncId: run.id }
    })
    expect(result.content.at(-1).text).toBe(`sync_integration: followed ${run.id}: failed`)
    await c.close()
  })

  it("past the bound: a notice that the sync continues in the background", async () => {
    const { projectId, secret } = await connected()
    const { c, heard } = await client(secret, 200)
    await c.setLoggingLevel("notice")
    const result: any = await c.callTool({
      name: "sync_integration",
      arguments: { id: projectId, provider: "plausible" }
    })
    expect(heard).toHaveLength(1)
    expect(heard[0].level).toBe("notice")
    expect(heard[0].data.message).toMatch(/still queued after 0 s; it continues in the background/)
    expect(result.content.at(-1).text).toMatch(/: queued$/)
    await c.close()
  })

  it("no level set and no progress token: the queued run at once, and nothing told", async () => {
    const { projectId, secret } = await connected()
    const { c, heard } = await client(secret)
    const result: any = await c.callTool({
      name: "sync_integration",
      arguments: { id: projectId, provider: "plausible" }
    })
    expect(result.structuredContent.sync.status).toBe("queued")
    expect(result.content).toHaveLength(2)
    expect(heard).toEqual([])
    await c.close()
  })

  it(
    "over /mcp (stateless HTTP): a call with a progress token is streamed, its messages and progress first",
    async () => {
      const { projectId, secret } = await connected()
      const c = new Client({ name: "test", version: "0" })
      const heard: Array<any> = []
      c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        heard.push(n.params)
      })
      await c.connect(
        new StreamableHTTPClientTransport(new URL("/mcp", srv.baseUrl), {
          requestInit: { headers: { authorization: `Bearer ${secret}` } }
        })
      )
      const progress: Array<any> = []
      const call = c.callTool(
        { name: "sync_integration", arguments: { id: projectId, provider: "plausible" } },
        undefined,
        { onprogress: (p) => progress.push(p), timeout: 60_000 }
      )
      let run: any = null
      await until(async () => {
        const [latest] = await queue((q) => q.latestRuns(projectId))
        return latest?.status === "queued"
      }, "the queued run")
      // The route's server reads every second: the run stays queued, then running, long enough to be seen.
      await new Promise((r) => setTimeout(r, 1_200))
      run = await claim(projectId)
      await new Promise((r) => setTimeout(r, 1_200))
      await succeed(run)
      const result: any = await call
      expect(statuses(heard)).toEqual(["queued", "running", "succeeded"])
      expect(progress.map((p) => p.progress)).toEqual([1, 2, 3])
      expect(progress.every((p) => p.total === 3)).toBe(true)
      expect(result.content.at(-1).text).toBe(`sync_integration: followed ${run.id}: succeeded`)
      await c.close()
    },
    30_000
  )
})
