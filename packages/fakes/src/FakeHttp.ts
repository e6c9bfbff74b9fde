/** What the local fake provider servers share: reading a request body, answering JSON, closing at once. */
import * as Effect from "effect/Effect"
import type { IncomingMessage, Server, ServerResponse } from "node:http"

export const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

/** A JSON answer; a string body is sent as is (to serve malformed JSON on purpose). */
export const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json; charset=UTF-8", ...headers })
  res.end(typeof body === "string" ? body : JSON.stringify(body))
}

/** A fake server for the life of the enclosing scope (a test, or a shared layer): started, then stopped. */
export const scopedFake = <F extends { readonly stop: () => Promise<void> }>(start: () => Promise<F>) =>
  Effect.acquireRelease(Effect.promise(start), (fake) => Effect.promise(() => fake.stop()))

/**
 * Closes a local server now: the keep-alive connections its clients (fetch) hold open are cut instead of
 * waited for until they idle out.
 */
export const closeNow = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve())
    server.closeAllConnections()
  })
