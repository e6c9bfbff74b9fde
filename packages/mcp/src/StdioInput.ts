/**
 * stdin for the stdio transport, less JSON-RPC batches. A line that is a JSON array is a batch: protocol
 * 2025-06-18 removed them, and the SDK's stdio transport never read them (it drops the line with no answer,
 * so the client waits for ever). Such a line is answered here with -32600 (invalid request, id null) and not
 * passed on; every other line goes through unchanged.
 */
import type { Readable, Writable } from "node:stream"
import { Transform } from "node:stream"
import { StringDecoder } from "node:string_decoder"

export const BATCH_REFUSED = JSON.stringify({
  jsonrpc: "2.0",
  id: null,
  error: {
    code: -32600,
    message: "Invalid Request: JSON-RPC batches are not supported over stdio; send one message per line"
  }
})

export const withoutBatches = (stdin: Readable, stdout: Writable): Readable => {
  const decoder = new StringDecoder("utf8")
  let pending = ""
  const lines = (text: string, last: boolean): string => {
    pending += text
    let passed = ""
    let index: number
    while ((index = pending.indexOf("\n")) !== -1 || (last && pending !== "")) {
      const end = index === -1 ? pending.length : index + 1
      const line = pending.slice(0, end)
      pending = pending.slice(end)
      if (/^\s*\[/.test(line)) stdout.write(`${BATCH_REFUSED}\n`)
      else passed += line
    }
    return passed
  }
  return stdin.pipe(
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        done(null, lines(decoder.write(chunk), false))
      },
      flush(done) {
        done(null, lines(decoder.end(), true))
      }
    })
  )
}
