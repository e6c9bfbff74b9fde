/**
 * Requests Node's HTTP parser refuses never reach the app: without the clientError hook Node answers them
 * with a bare status line. Sent here as raw bytes over a socket, the way a broken client would.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createServer, type Server } from "node:http"
import * as Net from "node:net"
import { answerClientErrors } from "../src/http/ClientErrors.ts"

let server: Server
let port = 0
let served = 0

beforeAll(async () => {
  server = createServer((_request, response) => {
    served++
    response.end("ok")
  })
  answerClientErrors(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.address() as Net.AddressInfo).port
})

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

/** Sends raw bytes and reads until the server closes the connection. */
const sendRaw = (bytes: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = Net.connect(port, "127.0.0.1", () => socket.write(bytes))
    let received = ""
    socket.setEncoding("latin1")
    socket.on("data", (chunk: string) => (received += chunk))
    socket.on("error", reject)
    socket.on("close", () => resolve(received))
  })

const parse = (raw: string) => {
  const [head = "", body = ""] = raw.split("\r\n\r\n")
  const [statusLine = "", ...headerLines] = head.split("\r\n")
  const headers = Object.fromEntries(
    headerLines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()])
  )
  return { statusLine, headers, body }
}

describe("Node's parser refusals are answered in the envelope", () => {
  it("431 for headers over the limit", async () => {
    const before = served
    const raw = await sendRaw(`GET /api/v1/projects HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`)
    const { body, headers, statusLine } = parse(raw)
    expect(statusLine).toBe("HTTP/1.1 431 Request Header Fields Too Large")
    expect(headers["content-type"]).toBe("application/json")
    expect(Number(headers["content-length"])).toBe(Buffer.byteLength(body))
    expect(body).toBe(
      "{\"status\":\"error\",\"error\":{\"code\":431,\"message\":\"Request headers are too " +
        "large\",\"type\":\"headers_too_large\"}}"
    )
    expect(served).toBe(before)
  })

  it("400 for a malformed request line", async () => {
    const raw = await sendRaw("NOT A REQUEST LINE\r\n\r\n")
    const { body, statusLine } = parse(raw)
    expect(statusLine).toBe("HTTP/1.1 400 Bad Request")
    expect(JSON.parse(body)).toEqual({
      status: "error",
      error: { code: 400, message: "The request is not valid HTTP", type: "malformed_request" }
    })
  })

  it("a well-formed request still reaches the app", async () => {
    const raw = await sendRaw("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    expect(parse(raw).statusLine).toBe("HTTP/1.1 200 OK")
    expect(parse(raw).body).toBe("ok")
  })
})
