/**
 * The early `initialize` answer (EarlyInitialize.ts) is the SDK's own: the same protocol versions, and over
 * generated initialize requests — well-formed, odd and malformed — an early answer, when one is given, is
 * exactly what the SDK server answers to that request (else the SDK answers it). Then the real bin over
 * stdio: one answer per initialize, whichever path answered it, and the session goes on.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import * as Sdk from "@modelcontextprotocol/sdk/types.js"
import { startServer, type TestServer } from "@sitehealth/cli/test/support/TestServer"
import fc from "fast-check"
import { spawn } from "node:child_process"
import { earlyAnswer, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "../src/EarlyInitialize.ts"
import { makeMcpServer } from "../src/Server.ts"
import { BIN } from "./support/Mcp.ts"

let srv: TestServer
beforeAll(async () => {
  srv = await startServer()
})
afterAll(async () => {
  await srv.close()
})

/**
 * What the SDK server (Server.ts, as every transport builds it) answers to this one message, as a line; null: nothing
 * within 2 s.
 */
const sdkAnswer = async (message: unknown): Promise<string | null> => {
  const server = makeMcpServer({ send: async () => ({ status: 500, body: null }) })
  const [client, serverSide] = InMemoryTransport.createLinkedPair()
  const answered = new Promise<string | null>((resolve) => {
    client.onmessage = (m) => resolve(JSON.stringify(m))
    setTimeout(() => resolve(null), 2_000)
  })
  await server.connect(serverSide)
  await client.start()
  await client.send(message as JSONRPCMessage)
  const text = await answered
  await server.close()
  return text
}

const anything = fc.jsonValue({ maxDepth: 2 })
const obj = fc.oneof(fc.constant({}), fc.dictionary(fc.string({ maxLength: 6 }), anything, { maxKeys: 2 }))
const capabilities = fc.oneof(
  fc.constant({}),
  fc.record({
    roots: fc.oneof(fc.constant({}), fc.record({ listChanged: fc.oneof(fc.boolean(), fc.constant("yes")) }), anything),
    sampling: fc.oneof(
      fc.constant({}),
      fc.record({ context: obj, tools: fc.oneof(obj, fc.constant(1)) }, { requiredKeys: [] })
    ),
    elicitation: fc.oneof(fc.constant({}), fc.record({ form: obj, url: obj }, { requiredKeys: [] }), fc.constant(true)),
    tasks: fc.oneof(fc.constant({}), fc.record({ list: obj }), fc.constant([])),
    experimental: fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(obj, fc.constant([]), fc.integer()), {
      maxKeys: 2
    }),
    extensions: fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(obj, fc.constant("x")), { maxKeys: 2 }),
    somethingNew: anything
  }, { requiredKeys: [] }),
  anything
)
const clientInfo = fc.oneof(
  fc.record({
    name: fc.oneof(fc.string({ maxLength: 8 }), fc.integer()),
    version: fc.oneof(fc.string({ maxLength: 8 }), fc.constant(null)),
    title: fc.string({ maxLength: 8 }),
    websiteUrl: fc.oneof(fc.constant("https://example.com"), fc.string({ maxLength: 8 })),
    description: fc.string({ maxLength: 8 }),
    icons: fc.array(fc.record({ src: fc.string({ maxLength: 8 }) }), { maxLength: 1 })
  }, { requiredKeys: ["name", "version"] }),
  fc.record({ name: fc.string({ maxLength: 8 }), version: fc.string({ maxLength: 8 }) }, { requiredKeys: [] }),
  anything
)
const odd = fc.record({
  jsonrpc: fc.oneof({ arbitrary: fc.constant("2.0"), weight: 9 }, { arbitrary: fc.constant("1.0"), weight: 1 }),
  id: fc.oneof(
    fc.integer(),
    fc.string({ maxLength: 6 }),
    fc.constant(2 ** 60),
    fc.double({ noNaN: true }),
    fc.constant(null)
  ),
  method: fc.oneof({ arbitrary: fc.constant("initialize"), weight: 9 }, {
    arbitrary: fc.constant("initialise"),
    weight: 1
  }),
  params: fc.oneof(
    {
      arbitrary: fc.record({
        protocolVersion: fc.oneof(
          fc.constantFrom(...Sdk.SUPPORTED_PROTOCOL_VERSIONS, "2099-01-01", ""),
          fc.string({ maxLength: 10 }),
          fc.integer()
        ),
        capabilities,
        clientInfo,
        _meta: fc.oneof(fc.constant({}), fc.record({ progressToken: fc.integer() }))
      }, { requiredKeys: ["protocolVersion", "capabilities", "clientInfo"] }),
      weight: 9
    },
    { arbitrary: anything, weight: 1 }
  ),
  extra: anything
}, { requiredKeys: ["jsonrpc", "id", "method", "params"] })
/** Requests of the shape clients send, with every optional part that may be answered early. */
const plainObject = fc.dictionary(fc.string({ maxLength: 4 }), fc.constant({}), { maxKeys: 2 })
const wellFormed = fc.record({
  jsonrpc: fc.constant("2.0"),
  id: fc.oneof(fc.integer(), fc.string({ maxLength: 6 })),
  method: fc.constant("initialize"),
  params: fc.record({
    protocolVersion: fc.oneof(fc.constantFrom(...Sdk.SUPPORTED_PROTOCOL_VERSIONS), fc.string({ maxLength: 10 })),
    capabilities: fc.record({
      roots: fc.oneof(fc.constant({}), fc.record({ listChanged: fc.boolean() })),
      sampling: fc.record({ context: fc.constant({}), tools: fc.constant({}) }, { requiredKeys: [] }),
      elicitation: fc.constant({}),
      tasks: fc.constant({}),
      experimental: plainObject,
      extensions: plainObject
    }, { requiredKeys: [] }),
    clientInfo: fc.record({
      name: fc.string({ maxLength: 8 }),
      version: fc.string({ maxLength: 8 }),
      title: fc.string({ maxLength: 8 }),
      websiteUrl: fc.string({ maxLength: 8 }),
      description: fc.string({ maxLength: 8 })
    }, { requiredKeys: ["name", "version"] })
  })
})
/** A well-formed request but for one part: its capabilities, its clientInfo or its protocol version. */
const oneOdd = fc.tuple(
  wellFormed,
  fc.oneof(
    capabilities.map((c) => ({ capabilities: c })),
    clientInfo.map((c) => ({ clientInfo: c })),
    fc.oneof(fc.integer(), fc.constant(null)).map((v) => ({ protocolVersion: v }))
  )
).map(([request, part]) => ({ ...request, params: { ...request.params, ...part } }))
const initialize = fc.oneof(wellFormed, oneOdd, odd)

describe("the early initialize answer", () => {
  it("negotiates from the SDK's own list of protocol versions", () => {
    expect(SUPPORTED_PROTOCOL_VERSIONS).toEqual(Sdk.SUPPORTED_PROTOCOL_VERSIONS)
    expect(LATEST_PROTOCOL_VERSION).toBe(Sdk.LATEST_PROTOCOL_VERSION)
  })

  it("is, whenever it is given, exactly the SDK server's answer (fast-check over initialize requests)", async () => {
    let early = 0
    await fc.assert(
      fc.asyncProperty(initialize, async (message) => {
        const answer = earlyAnswer(JSON.stringify(message))
        if (answer === null) return
        early++
        expect(await sdkAnswer(message)).toBe(answer.text)
      }),
      { numRuns: 300, seed: 19 }
    )
    // The property is about answers given: well-formed requests were among the generated ones.
    expect(early).toBeGreaterThan(100)
  }, 60_000)

  it("answers the requests real clients send; declines what it cannot vouch for", () => {
    const request = (params: unknown, id: unknown = 0) =>
      JSON.stringify({ jsonrpc: "2.0", id, method: "initialize", params })
    const plain = {
      protocolVersion: "2025-06-18",
      capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: {} },
      clientInfo: { name: "c", version: "1" }
    }
    expect(JSON.parse(earlyAnswer(request(plain))!.text).result.protocolVersion).toBe("2025-06-18")
    expect(JSON.parse(earlyAnswer(request({ ...plain, protocolVersion: "2099-01-01" }, "a"))!.text)).toMatchObject({
      id: "a",
      result: { protocolVersion: Sdk.LATEST_PROTOCOL_VERSION }
    })
    expect(earlyAnswer(`${request(plain)}\r`)).not.toBeNull()
    for (
      const declined of [
        request({ ...plain, _meta: { progressToken: 1 } }),
        request({ ...plain, clientInfo: { name: "c", version: "1", icons: [] } }),
        request({ ...plain, capabilities: { elicitation: { form: {} } } }),
        request(plain, 1.5),
        JSON.stringify({ jsonrpc: "2.0", id: 0, method: "tools/list" }),
        "{not json"
      ]
    ) expect(earlyAnswer(declined), declined).toBeNull()
  })
})

/** The bin's stdout lines, for these stdin lines, once `until` holds for what came (or 20 s passed). */
const rawSession = (input: ReadonlyArray<unknown>, until: (lines: ReadonlyArray<any>) => boolean) =>
  new Promise<ReadonlyArray<any>>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN], {
      env: { PATH: process.env.PATH ?? "", SITEHEALTH_TOKEN: "svc_nothing", SITEHEALTH_URL: srv.baseUrl },
      stdio: ["pipe", "pipe", "ignore"]
    })
    const lines: Array<any> = []
    let buffer = ""
    const timer = setTimeout(() => {
      child.kill()
      reject(new Error(`no complete answer in 20 s: ${JSON.stringify(lines).slice(0, 500)}`))
    }, 20_000)
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8")
      let end: number
      while ((end = buffer.indexOf("\n")) !== -1) {
        lines.push(JSON.parse(buffer.slice(0, end)))
        buffer = buffer.slice(end + 1)
      }
      if (until(lines)) {
        clearTimeout(timer)
        child.kill()
        resolve(lines)
      }
    })
    child.stdin.write(input.map((m) => `${JSON.stringify(m)}\n`).join(""))
  })

describe("the bin over stdio", () => {
  const initialized = { jsonrpc: "2.0", method: "notifications/initialized" }
  const prompts = { jsonrpc: "2.0", id: 1, method: "prompts/list" }
  const done = (lines: ReadonlyArray<any>) => lines.some((l) => l.id === 1)

  for (
    const [name, params] of [
      ["answered early", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "raw", version: "0" }
      }],
      ["answered by the SDK", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "raw", version: "0" },
        _meta: { progressToken: 7 }
      }]
    ] as const
  ) {
    it(`one answer to initialize (${name}), the SDK's, then the session goes on`, async () => {
      const request = { jsonrpc: "2.0", id: 0, method: "initialize", params }
      const lines = await rawSession([request, initialized, prompts], done)
      const answers = lines.filter((l) => l.id === 0)
      expect(answers.length).toBe(1)
      expect(JSON.stringify(answers[0])).toBe(await sdkAnswer(request))
      expect(lines.find((l) => l.id === 1).result.prompts.length).toBeGreaterThan(0)
    }, 30_000)
  }
})
