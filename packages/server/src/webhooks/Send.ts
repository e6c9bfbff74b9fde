/**
 * One attempt of a delivery: a POST of the event's body with its signed headers, through the SSRF guard
 * (Targets.ts), 15 s at most, a redirect never followed. Answers what the delivery log keeps: the status, the
 * time taken and the first 200 characters of the answer (or why there was none). Never fails.
 */
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import * as Https from "node:https"
import { guardedLookup, type Resolver, systemResolver, urlProblem } from "./Targets.ts"

export const SEND_TIMEOUT_MS = 15_000
export const EXCERPT_LENGTH = 200

export interface Attempt {
  /** True for a 2xx. */
  readonly ok: boolean
  readonly status: number | null
  readonly latencyMs: number
  readonly excerpt: string
}

export interface SendOptions {
  readonly allowPrivate: boolean
  readonly resolver?: Resolver
  readonly timeoutMs?: number
}

/**
 * The first EXCERPT_LENGTH characters, without NUL (PostgreSQL's text refuses it: one answer holding one would
 * make its round's record fail, and the round be sent again).
 */
const clip = (raw: string) => {
  const text = raw.replaceAll("\u0000", "")
  return text.length > EXCERPT_LENGTH ? `${text.slice(0, EXCERPT_LENGTH - 1)}…` : text
}

export const send = (
  url: string,
  headers: Record<string, string>,
  body: string,
  options: SendOptions
): Effect.Effect<Attempt> =>
  Effect.callback<Attempt>((resume, signal) => {
    const started = performance.now()
    const done = (attempt: Omit<Attempt, "latencyMs">) =>
      resume(Effect.succeed({ ...attempt, latencyMs: Math.round(performance.now() - started) }))
    const problem = urlProblem(url, options.allowPrivate)
    if (problem !== null) return done({ ok: false, status: null, excerpt: `refused: the URL ${problem}` })
    const target = new URL(url)
    const request = (target.protocol === "https:" ? Https : Http).request(target, {
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
        "user-agent": "sitehealth-webhooks/1"
      },
      lookup: guardedLookup(options.resolver ?? systemResolver, options.allowPrivate),
      timeout: options.timeoutMs ?? SEND_TIMEOUT_MS,
      signal
    }, (response) => {
      const status = response.statusCode ?? 0
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => {
        if (text.length < EXCERPT_LENGTH + 1) text += chunk
      })
      response.on("end", () => {
        if (status >= 300 && status < 400) {
          return done({
            ok: false,
            status,
            excerpt: clip(`redirect not followed (Location: ${response.headers.location ?? "none"})`)
          })
        }
        done({ ok: status >= 200 && status < 300, status, excerpt: clip(text) })
      })
      response.on("error", (error) => done({ ok: false, status, excerpt: clip(`answer cut: ${error.message}`) }))
    })
    request.on(
      "timeout",
      () => request.destroy(new Error(`no answer within ${options.timeoutMs ?? SEND_TIMEOUT_MS} ms`))
    )
    request.on("error", (error) => {
      if (!signal.aborted) done({ ok: false, status: null, excerpt: clip(error.message) })
    })
    request.end(body)
  })
