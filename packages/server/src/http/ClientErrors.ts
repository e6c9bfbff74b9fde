/**
 * Requests that Node's HTTP parser refuses before the app sees them — headers over the size limit, a
 * malformed request line, a body that never finishes arriving — are answered by Node itself with a bare
 * status line and no body. Here they get the API's error envelope like every other answer.
 */
import { errorBody } from "@sitehealth/domain/Envelope"
import type { Server } from "node:http"
import { STATUS_CODES } from "node:http"
import type { Duplex } from "node:stream"

interface Refusal {
  readonly status: number
  readonly message: string
  readonly type: string
}

/** Node's parser error codes with an answer of their own; any other parse error is a 400. */
const REFUSALS: Readonly<Record<string, Refusal>> = {
  HPE_HEADER_OVERFLOW: { status: 431, message: "Request headers are too large", type: "headers_too_large" },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, message: "Chunk extensions are too large", type: "payload_too_large" },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: "The request did not arrive in time", type: "request_timeout" }
}

const MALFORMED: Refusal = { status: 400, message: "The request is not valid HTTP", type: "malformed_request" }

/** The raw HTTP/1.1 response for a refusal: the envelope, closing the connection (its framing is lost). */
export const refusalBytes = (refusal: Refusal): string => {
  const body = JSON.stringify(errorBody(refusal.status, refusal.message, refusal.type))
  return [
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ""}`,
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(body)}`,
    "cache-control: no-store",
    "connection: close",
    "",
    body
  ].join("\r\n")
}

export const refusalFor = (code: string | undefined): Refusal =>
  (code === undefined ? undefined : REFUSALS[code]) ?? MALFORMED

/**
 * Answers the server's parser errors in the envelope. Nothing is written when the peer is gone, or when a
 * response on this connection has already started (bytes written then would corrupt it): the connection is
 * only closed, as Node does.
 */
export const answerClientErrors = (server: Server): void => {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    // Node keeps the connection's current response on the socket (what its own handler checks too).
    const current: unknown = Reflect.get(socket, "_httpMessage")
    const responding = typeof current === "object" && current !== null && "headersSent" in current &&
      current.headersSent === true
    if (error.code === "ECONNRESET" || !socket.writable || responding) {
      socket.destroy()
      return
    }
    socket.end(refusalBytes(refusalFor(error.code)), () => socket.destroy())
  })
}
