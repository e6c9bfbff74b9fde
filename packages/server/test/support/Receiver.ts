/** A local webhook receiver for the tests: keeps what it gets, answers with the status the test sets. */
import { Effect } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

export interface Received {
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: string
}

export interface Receiver {
  readonly url: string
  readonly received: Array<Received>
  /** The status answered from now on (200 at first). */
  status: number
}

/** Listening on 127.0.0.1 for the scope's life. */
export const receiver = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<Receiver & { server: Http.Server }>((resolve) => {
      const state = { url: "", received: [] as Array<Received>, status: 200, server: null as any }
      state.server = Http.createServer((req, res) => {
        let body = ""
        req.setEncoding("utf8")
        req.on("data", (chunk: string) => (body += chunk))
        req.on("end", () => {
          state.received.push({ path: req.url ?? "", headers: req.headers as Record<string, string>, body })
          res.writeHead(state.status, { "content-type": "text/plain" })
          res.end(state.status < 300 ? "ok" : "receiver says no")
        })
      })
      state.server.listen(0, "127.0.0.1", () => {
        state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}`
        resolve(state)
      })
    })
  ),
  (r) => Effect.promise(() => new Promise<void>((done) => r.server.close(() => done())))
)
