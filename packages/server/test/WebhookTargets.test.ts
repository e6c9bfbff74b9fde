/**
 * Webhooks without the app: where a delivery may go (SSRF: every refused kind of address, by literal, by DNS answer
 * and by redirect), the retry schedule, and signatures checked with the `standardwebhooks` package itself.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"
import {
  FIRST_RETRY_MS,
  GIVE_UP_AFTER_MS,
  MAX_RETRY_DELAY_MS,
  nextStep,
  retryDelayMs,
  shouldDisable
} from "../src/webhooks/Retry.ts"
import { send } from "../src/webhooks/Send.ts"
import { newWebhookSecret, signedHeaders } from "../src/webhooks/Signing.ts"
import { isBlockedAddress, type Resolver, urlProblem } from "../src/webhooks/Targets.ts"

/** A local receiver counting what it gets; `answer` decides the reply. */
const receiver = (answer: (req: Http.IncomingMessage, res: Http.ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ url: string; hits: Array<string> }>((resolve) => {
        const hits: Array<string> = []
        const server = Http.createServer((req, res) => {
          hits.push(req.url ?? "")
          req.resume()
          req.on("end", () => answer(req, res))
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resolve(Object.assign({ url: `http://127.0.0.1:${port}`, hits }, { server }))
        })
      })
    ),
    (r) => Effect.promise(() => new Promise<void>((done) => (r as any).server.close(() => done())))
  )

describe("SSRF guard", () => {
  it("refuses loopback, private, shared, link-local and reserved addresses, IPv4 and IPv6", () => {
    for (
      const address of [
        "127.0.0.1",
        "127.10.0.1",
        "10.0.0.1",
        "10.255.255.255",
        "172.16.0.1",
        "172.31.255.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "fd12:3456::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "[::1]",
        "not-an-address"
      ]
    ) expect(isBlockedAddress(address), address).toBe(true)
    for (const address of ["93.184.216.34", "1.1.1.1", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8"]) {
      expect(isBlockedAddress(address), address).toBe(false)
    }
  })

  it("refuses a URL that is not https, carries credentials, or names a blocked address or a local name", () => {
    const refused = [
      "http://hooks.example.com/in",
      "ftp://hooks.example.com/in",
      "https://user:pass@hooks.example.com/in",
      "https://127.0.0.1/in",
      "https://10.1.2.3/in",
      "https://169.254.169.254/latest/meta-data",
      "https://[::1]/in",
      "https://[fe80::1]/in",
      "https://localhost/in",
      "https://intranet/in",
      "not a url"
    ]
    for (const url of refused) expect(urlProblem(url, false), url).not.toBeNull()
    expect(urlProblem("https://hooks.example.com/in", false)).toBeNull()
    expect(urlProblem("https://93.184.216.34:8443/in", false)).toBeNull()
    // SITEHEALTH_WEBHOOKS_ALLOW_PRIVATE=1: development and tests.
    expect(urlProblem("http://127.0.0.1:9999/in", true)).toBeNull()
    expect(urlProblem("ftp://127.0.0.1/in", true)).not.toBeNull()
  })

  it.effect("refuses a host name whose DNS answers include a blocked address, and sends nothing", () =>
    Effect.gen(function*() {
      const r = yield* receiver((_, res) => res.end("ok"))
      const port = new URL(r.url).port
      for (const answer of ["127.0.0.1", "10.0.0.5", "169.254.169.254", "::1"]) {
        // The name resolves to the receiver's own loopback address (or another blocked one): still refused.
        const resolver: Resolver = async () => [
          { address: "93.184.216.34", family: 4 },
          { address: answer, family: answer.includes(":") ? 6 : 4 }
        ]
        const attempt = yield* send(`https://hooks.example.test:${port}/in`, {}, "{}", {
          allowPrivate: false,
          resolver
        })
        expect(attempt, answer).toMatchObject({ ok: false, status: null })
        expect(attempt.excerpt, answer).toContain(`resolves to ${answer}`)
      }
      expect(r.hits).toEqual([])
    }))

  it.effect("never follows a redirect (to a private address or anywhere)", () =>
    Effect.gen(function*() {
      const target = yield* receiver((_, res) => res.end("reached"))
      const redirecting = yield* receiver((_, res) => {
        res.writeHead(302, { location: `${target.url}/internal` })
        res.end()
      })
      const attempt = yield* send(`${redirecting.url}/in`, {}, "{}", { allowPrivate: true })
      expect(attempt).toMatchObject({ ok: false, status: 302 })
      expect(attempt.excerpt).toContain("redirect not followed")
      expect(redirecting.hits).toEqual(["/in"])
      expect(target.hits).toEqual([])
    }))

  it.effect("sends to a loopback receiver only with private targets allowed", () =>
    Effect.gen(function*() {
      const r = yield* receiver((_, res) => res.end("thanks"))
      const refused = yield* send(`${r.url}/in`, {}, "{}", { allowPrivate: false })
      expect(refused.ok).toBe(false)
      expect(refused.excerpt).toContain("refused")
      const allowed = yield* send(`${r.url}/in`, {}, "{}", { allowPrivate: true })
      expect(allowed).toMatchObject({ ok: true, status: 200, excerpt: "thanks" })
      expect(r.hits).toEqual(["/in"])
    }))

  it.effect("keeps no NUL of an answer in its excerpt (PostgreSQL's text refuses one)", () =>
    Effect.gen(function*() {
      const r = yield* receiver((_, res) => res.writeHead(500).end("bad\u0000 answer"))
      expect(yield* send(`${r.url}/in`, {}, "{}", { allowPrivate: true })).toMatchObject({
        ok: false,
        status: 500,
        excerpt: "bad answer"
      })
    }))
})

describe("retry schedule", () => {
  it("backs off ×4 from 5 s with ±20 % jitter, capped at 12 h; the first two retries within two minutes", () => {
    expect(retryDelayMs(1, 0.5)).toBe(FIRST_RETRY_MS)
    expect(retryDelayMs(2, 0.5)).toBe(20_000)
    expect(retryDelayMs(3, 0.5)).toBe(80_000)
    expect(retryDelayMs(20, 0.5)).toBe(MAX_RETRY_DELAY_MS)
    expect(retryDelayMs(1, 0)).toBe(4_000)
    expect(retryDelayMs(1, 0.999999)).toBe(6_000)
    // The worst case of the jitter still puts both first retries inside two minutes of the first attempt.
    expect(retryDelayMs(1, 0.999999) + retryDelayMs(2, 0.999999)).toBeLessThan(120_000)
  })

  it("retries for 3 days after the first attempt, then gives up; disables an endpoint failing for 3 days", () => {
    const first = new Date("2026-11-20T12:00:00Z")
    let now = first
    let attempts = 1
    const times: Array<number> = []
    for (;;) {
      const step = nextStep(attempts, first, now, 0.5)
      if (step._tag === "giveUp") break
      times.push(step.at.getTime() - first.getTime())
      now = step.at
      attempts++
    }
    expect(times[1]).toBeLessThan(120_000)
    expect(times.at(-1)!).toBeLessThanOrEqual(GIVE_UP_AFTER_MS)
    expect(times.at(-1)! + MAX_RETRY_DELAY_MS).toBeGreaterThan(GIVE_UP_AFTER_MS)
    expect(attempts).toBeGreaterThan(10)
    expect(shouldDisable(first, new Date(first.getTime() + GIVE_UP_AFTER_MS - 1))).toBe(false)
    expect(shouldDisable(first, new Date(first.getTime() + GIVE_UP_AFTER_MS))).toBe(true)
    expect(shouldDisable(null, now)).toBe(false)
    // A delivery given up after failing throughout: the endpoint goes with it; one that succeeded meanwhile stays.
    expect(shouldDisable(first, now, first)).toBe(true)
    expect(shouldDisable(new Date(first.getTime() + 60_000), now, first)).toBe(false)
  })
})

describe("signatures", () => {
  it("match the Standard Webhooks specification's test vector", () => {
    const headers = signedHeaders(
      ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
      "msg_p5jXN8AQM9LWM0D4loKWxJek",
      1614265330,
      "{\"test\": 2432232314}"
    )
    expect(headers["webhook-signature"]).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
  })

  it("verify with the standardwebhooks package, with either secret during a rotation", () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()]
    expect(current).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const body = JSON.stringify({ type: "webhook.test", timestamp: "2026-11-20T12:00:00.000Z", data: {} })
    const ts = Math.floor(Date.now() / 1000)
    const headers = signedHeaders([current, previous], "msg_abc", ts, body)
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2)
    for (const secret of [current, previous]) {
      expect(new Webhook(secret).verify(body, headers)).toMatchObject({ type: "webhook.test" })
    }
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow()
    expect(() => new Webhook(current).verify(body.replace("test", "tesT"), headers)).toThrow()
  })
})
