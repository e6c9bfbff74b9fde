/**
 * The run contract end to end: the real `main.ts` as a child process (embedded Postgres in a temp data
 * dir, free ports), as `npm start` runs it. The contract suite uses a web handler; this proves the served
 * router answers the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { SmtpSink } from "./support/SmtpSink.ts"

const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = Net.createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as Net.AddressInfo).port
      s.close(() => resolve(port))
    })
  })

let server: ChildProcess
let output = ""
let base = ""
let dataDir = ""
// Mail goes to a local sink: the bundle's nodemailer (a chunk loaded on first use) sends for real.
const mail = ManagedRuntime.make(SmtpSink.layer)

beforeAll(async () => {
  dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-server-"))
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    SITEHEALTH_DATA_DIR: dataDir,
    SMTP_URL: (await mail.runPromise(Effect.gen(function*() {
      return yield* SmtpSink
    }))).url,
    SITEHEALTH_EMBEDDED_PG_PORT: String(await freePort())
  }
  delete env.DATABASE_URL // the demo seed only happens on the embedded database
  delete env.REDIS_URL
  server = spawn(process.execPath, [Path.join(ROOT, "packages/server/bin/server.js")], { cwd: ROOT, env })
  server.stdout!.on("data", (d) => (output += d))
  server.stderr!.on("data", (d) => (output += d))
  const started = Date.now()
  while (!output.includes("Listening on")) {
    if (Date.now() - started > 60_000 || server.exitCode !== null) throw new Error(`server did not start:\n${output}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}, 90_000)

afterAll(async () => {
  if (server.exitCode === null) {
    await new Promise<void>((resolve) => {
      server.once("exit", () => resolve())
      server.kill("SIGTERM")
    })
  }
  Fs.rmSync(dataDir, { recursive: true, force: true })
  await mail.dispose()
}, 30_000)

describe("npm start", () => {
  it("seeds the demo account, prints the token once and saves it with mode 0600", async () => {
    const file = Path.join(dataDir, "demo-token")
    const secret = Fs.readFileSync(file, "utf8").trim()
    expect(secret).toMatch(/^svc_[0-9A-Za-z]{36}$/)
    expect(Fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(output.split(secret).length - 1).toBe(1)
    expect(output).toContain("embedded postgres")
  })

  it("serves /healthz, /readyz and the API with the demo token", async () => {
    expect((await fetch(`${base}/healthz`)).status).toBe(200)
    const ready = await fetch(`${base}/readyz`)
    expect(ready.status).toBe(200)
    // The in-process worker counts from its start; the embedded database answers.
    expect(await ready.json()).toMatchObject({
      status: "ready",
      checks: { database: { status: "ok" }, worker: { status: "ok", source: "in-process" } }
    })
    const secret = Fs.readFileSync(Path.join(dataDir, "demo-token"), "utf8").trim()
    const headers = { authorization: `Bearer ${secret}` }
    const projects = await fetch(`${base}/api/v1/projects`, { headers })
    expect(projects.status).toBe(200)
    expect(projects.headers.get("x-ratelimit-limit")).toBe("60")
    const body: any = await projects.json()
    expect(body.data.projects).toHaveLength(3)
    const id = body.data.projects[0].id
    for (
      const path of [
        "health",
        "briefing",
        "signals",
        "analytics?period=12m",
        "revenue",
        "churn",
        "seo",
        "integrations",
        "expenses"
      ]
    ) {
      const r = await fetch(`${base}/api/v1/projects/${id}/${path}`, { headers })
      expect(r.status, path).toBe(200)
      expect(((await r.json()) as any).status).toBe("success")
    }
    const unknown = await fetch(`${base}/api/v1/nope`, { headers })
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as any).error.type).toBe("route_not_found")
    expect((await fetch(`${base}/api/v1/projects`)).status).toBe(401)
  })

  // It runs the bundle (bin/launch.js): the dashboard's files are found from it, and the MCP route's SDK,
  // a chunk of its own, loads on the first call.
  it("runs from its bundle: serves the dashboard's page and answers an MCP initialize", async () => {
    expect(output).not.toContain("running the TypeScript sources")
    const page = await fetch(`${base}/`, { headers: { accept: "text/html" } })
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    expect(await page.text()).toContain("<div id=\"root\">")
    const secret = Fs.readFileSync(Path.join(dataDir, "demo-token"), "utf8").trim()
    const mcp = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${secret}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream"
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "server-test", version: "1" } }
      })
    })
    expect(mcp.status).toBe(200)
    expect(await mcp.text()).toContain("serverInfo")
  })

  it("runs from its bundle: a sign-up's verification mail goes out over SMTP (nodemailer, a chunk loaded on first use)", async () => {
    const email = `bundle-${Date.now()}@example.com`
    const signUp = await fetch(`${base}/app/api/auth/signup`, {
      method: "POST",
      headers: { origin: base, "content-type": "application/json" },
      body: JSON.stringify({ email, password: "correct horse battery" })
    })
    expect(signUp.status, await signUp.clone().text()).toBe(202)
    const sent = await mail.runPromise(Effect.gen(function*() {
      return yield* (yield* SmtpSink).waitFor(email, /verify-email\?token=/)
    }))
    expect(sent.to).toEqual([email])
  })
})

// The same started server: `npm start` also prints a one-time login link to the demo account's dashboard; the
// link is followed over real HTTP (Node's Host header, the served router), the session then used on /app/api
// and refused on /api/v1.
describe("npm start: the demo dashboard link", () => {
  const linkOf = () => {
    const match = /(http:\/\/\S+\/app\/api\/auth\/magic\?token=\S+)/.exec(output)
    expect(match, output).not.toBeNull()
    return match![1]
  }

  it("prints a one-time login link that starts a dashboard session and redirects to /", async () => {
    const link = linkOf()
    const first = await fetch(link, { redirect: "manual" })
    expect(first.status).toBe(303)
    expect(first.headers.get("location")).toBe("/")
    const setCookie = first.headers.get("set-cookie") ?? ""
    // A browser-session cookie (no Max-Age: the demo did not ask to stay signed in), then the device cookie.
    expect(setCookie).toMatch(
      /^sitehealth_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax, sitehealth_device=[^;]+; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Strict$/
    )
    const cookie = setCookie.split(";")[0]

    const account = await fetch(`${base}/app/api/account`, { headers: { cookie } })
    expect(account.status).toBe(200)
    const body: any = await account.json()
    expect(body.data).toMatchObject({ email: "demo@sitehealth.local", entitlement: "trial" })
    const websites: any = await (await fetch(`${base}/app/api/websites`, { headers: { cookie } })).json()
    expect(websites.data.websites.length).toBe(3)

    // A state-changing request from this origin with the session's CSRF token works; the Host header is the origin.
    const session: any = await (await fetch(`${base}/app/api/auth/session`, { headers: { cookie } })).json()
    const created = await fetch(`${base}/app/api/tokens`, {
      method: "POST",
      headers: { cookie, origin: base, "x-csrf-token": session.data.csrfToken, "content-type": "application/json" },
      body: JSON.stringify({ name: "from the dashboard", websites: null, permissions: ["projects:read"] })
    })
    expect(created.status).toBe(201)
    const { secret } = ((await created.json()) as any).data
    expect((await fetch(`${base}/api/v1/projects`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(
      200
    )

    // The cookie is no key to /api/v1; the link works once.
    expect((await fetch(`${base}/api/v1/projects`, { headers: { cookie } })).status).toBe(401)
    expect((await fetch(link, { redirect: "manual" })).status).toBe(400)
  })
})
