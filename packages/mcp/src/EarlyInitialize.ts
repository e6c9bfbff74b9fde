/**
 * The stdio server's `initialize` answered before the MCP SDK is loaded. A client spawns the server and
 * waits for this answer; loading the SDK (its zod protocol schemas) alone takes about twice a bare Node start,
 * so main.ts answers first and loads it after (docs/mcp.md, "Latency"). The answer is data — the server's
 * name, capabilities, instructions (Identity.ts) and the negotiated protocol version — and is the SDK's
 * own to the letter:
 * - only a request that is plainly well-formed is answered early (`earlyAnswer`): every field one the SDK's
 *   schemas accept, nothing they would strip or might refuse; anything else goes to the SDK, which answers it;
 * - the version is negotiated by the SDK's rule (the client's if supported, else the latest), from the SDK's
 *   list, kept equal to it by test/EarlyInitialize.test.ts, which also checks, over generated requests, that
 *   an early answer is always what the SDK answers;
 * - the request still goes to the SDK server (which records the client's capabilities and version, as for any
 *   initialize), and its answer to that id, the same one, is not written a second time (`withoutEcho`).
 */
import { PassThrough, type Readable, Writable } from "node:stream"
import { CAPABILITIES, INSTRUCTIONS, SERVER_INFO } from "./Identity.ts"

/** The SDK's SUPPORTED_PROTOCOL_VERSIONS (@modelcontextprotocol/sdk/types.js), newest first. */
export const SUPPORTED_PROTOCOL_VERSIONS: ReadonlyArray<string> = [
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07"
]
export const LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0]!

type Json = { [key: string]: unknown }

const isPlainObject = (u: unknown): u is Json =>
  typeof u === "object" && u !== null && !Array.isArray(u) && Object.getPrototypeOf(u) === Object.prototype
const onlyKeys = (o: Json, allowed: ReadonlyArray<string>) => Object.keys(o).every((k) => allowed.includes(k))
const objectOfObjects = (u: unknown) => isPlainObject(u) && Object.values(u).every(isPlainObject)
const isEmptyObject = (u: unknown) => isPlainObject(u) && Object.keys(u).length === 0

/** Each capability a client may declare, as plainly as the SDK's ClientCapabilitiesSchema accepts it. */
const CAPABILITY_CHECKS: Record<string, (value: unknown) => boolean> = {
  experimental: objectOfObjects,
  extensions: objectOfObjects,
  sampling: (v) => isPlainObject(v) && onlyKeys(v, ["context", "tools"]) && Object.values(v).every(isPlainObject),
  roots: (v) =>
    isPlainObject(v) && onlyKeys(v, ["listChanged"]) &&
    (v.listChanged === undefined || typeof v.listChanged === "boolean"),
  // Their schemas transform or pass through what they are given: only the empty declaration is answered early.
  elicitation: isEmptyObject,
  tasks: isEmptyObject
}

const plainCapabilities = (u: unknown) =>
  isPlainObject(u) && Object.entries(u).every(([key, value]) => CAPABILITY_CHECKS[key]?.(value) === true)

const plainClientInfo = (u: unknown) =>
  isPlainObject(u) && typeof u.name === "string" && typeof u.version === "string" &&
  onlyKeys(u, ["name", "title", "version", "websiteUrl", "description"]) && Object.values(u).every((v) =>
    typeof v === "string"
  )

/** The SDK's answer to this line when it is a plainly well-formed `initialize` request, else null (the SDK answers). */
export const earlyAnswer = (line: string): Answered | null => {
  let message: unknown
  try {
    message = JSON.parse(line.replace(/\r$/, ""))
  } catch {
    return null
  }
  if (!isPlainObject(message) || !onlyKeys(message, ["jsonrpc", "id", "method", "params"])) return null
  const { id, params } = message
  if (message.jsonrpc !== "2.0" || message.method !== "initialize") return null
  if (!(typeof id === "string" || Number.isSafeInteger(id))) return null
  if (!isPlainObject(params) || !onlyKeys(params, ["protocolVersion", "capabilities", "clientInfo"])) return null
  if (
    typeof params.protocolVersion !== "string" || !plainCapabilities(params.capabilities) ||
    !plainClientInfo(params.clientInfo)
  ) return null
  const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(params.protocolVersion)
    ? params.protocolVersion
    : LATEST_PROTOCOL_VERSION
  // The SDK's Server._oninitialize result, in its Protocol's response shape (field order included).
  const result = { protocolVersion, capabilities: CAPABILITIES, serverInfo: SERVER_INFO, instructions: INSTRUCTIONS }
  return { id: id as string | number, text: JSON.stringify({ result, jsonrpc: "2.0", id }) }
}

/** An initialize answered early: its id, and the answer's text (one line, without the newline). */
export interface Answered {
  readonly id: string | number
  readonly text: string
}

/**
 * Reads `input` (whole lines: StdioInput.ts) at once: its first line, when `earlyAnswer` answers it, is
 * answered on `stdout` there and then. Everything, that line included, is passed on in `lines`, buffered
 * until the SDK's transport reads it; `answered` says what was answered early (null: nothing). `firstLine`
 * settles once the first line has been handled, or the input has ended.
 */
export const answerInitializeEarly = (input: Readable, stdout: Writable) => {
  const lines = new PassThrough()
  let answered: Answered | null = null
  let first = true
  let handled: () => void = () => {}
  const firstLine = new Promise<void>((resolve) => (handled = resolve))
  input.once("end", () => handled())
  input.on("data", (chunk: Buffer) => {
    if (first) {
      first = false
      const text = chunk.toString("utf8")
      // Only a whole line: the SDK reads nothing without its newline (stdin ended mid-line).
      const end = text.indexOf("\n")
      answered = end === -1 ? null : earlyAnswer(text.slice(0, end))
      if (answered !== null) stdout.write(`${answered.text}\n`)
      handled()
    }
    lines.write(chunk)
  })
  input.on("end", () => lines.end())
  return { lines, answered: (): Answered | null => answered, firstLine }
}

/**
 * `stdout` for the SDK's transport, less its answer to the initialize answered early (the first response
 * with that id): the client gets one answer. Should the SDK's ever differ from the early one, stderr says so.
 */
export const withoutEcho = (stdout: Writable, answered: () => Answered | null) => {
  let echoed = false
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      const early = echoed ? null : answered()
      if (early !== null) {
        const text = chunk.toString("utf8").trimEnd()
        let message: Json | null = null
        try {
          const parsed: unknown = JSON.parse(text)
          message = isPlainObject(parsed) ? parsed : null
        } catch {
          message = null
        }
        if (message !== null && message.id === early.id && ("result" in message || "error" in message)) {
          echoed = true
          if (text !== early.text) {
            process.stderr.write(
              `sitehealth-mcp: the SDK's initialize answer differs from the early one: ${text.slice(0, 300)}\n`
            )
          }
          return done()
        }
      }
      stdout.write(chunk, () => done())
    }
  })
}
