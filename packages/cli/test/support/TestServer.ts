/**
 * A real sitehealth server for the CLI tests: the app's real layers over the in-memory repositories,
 * served by node:http on 127.0.0.1 and a free port, with every request recorded (method, path, body)
 * so tests can count what the CLI sent. The CLI itself runs as a child process (`runCli`).
 */
import { SiteHealthApi } from "@sitehealth/domain/Api"
import { Authentication } from "@sitehealth/domain/Authentication"
import type { Permission } from "@sitehealth/domain/Permissions"
import { createAccount, createProject, mintToken } from "@sitehealth/server/accounts/Provisioning"
import { ROUTER_CONFIG } from "@sitehealth/server/App"
import { appLayer, MemoryRepos } from "@sitehealth/server/Layers"
import { type AppConfigShape, readConfig } from "@sitehealth/server/platform/Config"
import { Clock, Effect, Layer, Scope } from "effect"
import { FetchHttpClient, HttpClientRequest, HttpRouter, HttpServer } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll } from "vitest"

export const CLI_ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../..")
/** The executable users run: the bundle when it is fresh, else the sources. */
export const ENTRY = Path.join(CLI_ROOT, "bin/sitehealth.js")

export interface Recorded {
  readonly method: string
  readonly path: string
  readonly body: string
  readonly headers: Http.IncomingHttpHeaders
}

export type LostAnswer =
  & { readonly when?: (request: Recorded) => boolean }
  & (
    | { readonly kind: "reset" }
    | {
      readonly kind: "replaced"
      readonly status: number
      readonly headers: Record<string, string>
      readonly body: unknown
    }
  )

export const startServer = async (overrides: Partial<AppConfigShape> = {}) => {
  const config: AppConfigShape = { ...readConfig({}), redisUrl: null, ...overrides }
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(MemoryRepos, scope) as Effect.Effect<any>)
  const app = appLayer(config, Layer.succeedContext(context)).pipe(Layer.provide(HttpServer.layerServices))
  const { dispose, handler } = HttpRouter.toWebHandler(app as any, { disableLogger: true, routerConfig: ROUTER_CONFIG })
  /** `effect` on the server's repositories, on the real clock the server runs on. */
  const provide = <A>(effect: Effect.Effect<A, any, any>): Effect.Effect<A> =>
    effect.pipe(
      Effect.provideContext(context),
      Effect.provideService(Clock.Clock, Clock.Clock.defaultValue())
    ) as Effect.Effect<A>
  const run = <A>(effect: Effect.Effect<A, any, any>): Promise<A> => Effect.runPromise(provide(effect))

  const requests: Array<Recorded> = []
  /** Answers to give instead of the app's, in order (to test retries); each is used once. */
  const faults: Array<{ readonly status: number; readonly headers: Record<string, string>; readonly body: unknown }> =
    []
  /**
   * Answers lost AFTER the app handled the request (its effect is done): the connection is reset, or a
   * proxy's answer replaces the app's. Each is used once, by the first request its `when` accepts.
   */
  const lost: Array<LostAnswer> = []
  const server = Http.createServer(async (req, res) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks).toString("utf8")
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    requests.push({ method: req.method ?? "GET", path: url.pathname + url.search, body, headers: req.headers })
    const fault = faults.shift()
    if (fault !== undefined) {
      res.writeHead(fault.status, { "content-type": "application/json", ...fault.headers })
      res.end(JSON.stringify(fault.body))
      return
    }
    const headers = new Headers()
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v)
    const response = await handler(
      new Request(url, {
        method: req.method ?? "GET",
        headers,
        ...(body === "" || req.method === "GET" ? {} : { body })
      })
    )
    const lostIndex = lost.findIndex((l) => l.when === undefined || l.when(requests.at(-1)!))
    if (lostIndex >= 0) {
      const [answer] = lost.splice(lostIndex, 1)
      if (answer!.kind === "reset") {
        req.socket.destroy()
        return
      }
      res.writeHead(answer!.status, { "content-type": "application/json", ...answer!.headers })
      res.end(JSON.stringify(answer!.body))
      return
    }
    // Every Set-Cookie (a log-in sets the session and the device cookie): an object of the entries keeps the last.
    const cookies = response.headers.getSetCookie()
    res.writeHead(response.status, {
      ...Object.fromEntries(response.headers.entries()),
      ...(cookies.length > 0 ? { "set-cookie": cookies } : {})
    })
    res.end(Buffer.from(await response.arrayBuffer()))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as Net.AddressInfo).port

  /** A fresh account with projects and an all-access token. */
  const newAccount = async (projects = 1) => {
    const account = await run(createAccount({ name: "CLI test account", trialDays: 14 }))
    const created = []
    for (let i = 0; i < projects; i++) {
      created.push(await run(createProject({ accountId: account.id, name: `Site ${i}`, domain: `site${i}.example` })))
    }
    const { secret, token } = await run(mintToken({ accountId: account.id, name: "root" }))
    return { account, projects: created, token, secret }
  }

  const mint = (
    accountId: string,
    options: { projects?: ReadonlyArray<string> | null; permissions?: ReadonlyArray<Permission> } = {}
  ) => run(mintToken({ accountId, ...options }))

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    requests,
    faults,
    lost,
    provide,
    run,
    newAccount,
    mint,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await dispose()
      await Effect.runPromise(Scope.close(scope, { _tag: "Success", value: undefined } as any))
    }
  }
}

export type TestServer = Awaited<ReturnType<typeof startServer>>

/** What a test file gets from `serverForFile`. */
export interface FileServer {
  readonly server: TestServer
  readonly account: Awaited<ReturnType<TestServer["newAccount"]>>
  /** An empty XDG_CONFIG_HOME for the CLI's stored logins. */
  readonly xdg: string
}

/**
 * A test file's set-up: the CLI built if stale, one server (with `overrides`), an account with `projects`
 * projects, and an empty config directory, handed to `ready` before the file's tests; the server closed and
 * the directory removed after them.
 */
export const serverForFile = (
  options: { readonly projects: number; readonly tmpPrefix: string; readonly overrides?: Partial<AppConfigShape> },
  ready: (file: FileServer) => void
) => {
  let server: TestServer | undefined
  let xdg = ""
  beforeAll(async () => {
    await buildIfStale()
    server = await startServer(options.overrides)
    const account = await server.newAccount(options.projects)
    xdg = Fs.mkdtempSync(Path.join(Os.tmpdir(), options.tmpPrefix))
    ready({ server, account, xdg })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    if (xdg !== "") Fs.rmSync(xdg, { recursive: true, force: true })
  })
}

/**
 * The contract's typed client for `baseUrl`, sending `token` as the bearer: responses decoded by the contract's
 * schemas.
 */
export const apiClient = (baseUrl: string, token: string) =>
  HttpApiClient.make(SiteHealthApi, { baseUrl }).pipe(
    Effect.provide(
      HttpApiMiddleware.layerClient(Authentication, ({ next, request }) =>
        next(HttpClientRequest.bearerToken(request, token)))
    ),
    Effect.provide(FetchHttpClient.layer)
  )

export interface CliRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs the CLI with a clean environment: no stored login unless the test's XDG_CONFIG_HOME has one. The
 * process is killed if the effect is interrupted (a test timing out, or ending first).
 */
export const runCli = (
  args: ReadonlyArray<string>,
  env: Record<string, string | undefined> = {},
  stdin?: string
): Effect.Effect<CliRun> =>
  Effect.callback<CliRun>((resume) => {
    const base: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", SITEHEALTH_MAX_RETRY_AFTER: "2" }
    delete base.SITEHEALTH_TOKEN
    delete base.SITEHEALTH_URL
    delete base.SITEHEALTH_PROFILE
    const merged: NodeJS.ProcessEnv = { ...base }
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) delete merged[k]
      else merged[k] = v
    }
    const child = spawn(process.execPath, [ENTRY, ...args], {
      cwd: CLI_ROOT,
      env: merged,
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("error", (error) => resume(Effect.die(error)))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    child.stdin.end(stdin ?? "")
    return Effect.sync(() => void child.kill("SIGKILL"))
  })

/**
 * Rebuilds dist/sitehealth.mjs when a source is newer, so the tests run the bundle users get (and fast)
 * rather than falling back to the sources.
 */
export const buildIfStale = async () => {
  const bundle = Path.join(CLI_ROOT, "dist/sitehealth.mjs")
  const newest = [Path.join(CLI_ROOT, "src"), Path.join(CLI_ROOT, "../domain/src")]
    .flatMap((dir) => Fs.readdirSync(dir, { recursive: true }).map((name) => Path.join(dir, String(name))))
    .filter((file) => file.endsWith(".ts"))
    .reduce((max, file) => Math.max(max, Fs.statSync(file).mtimeMs), 0)
  if (Fs.existsSync(bundle) && Fs.statSync(bundle).mtimeMs >= newest) return
  execFileSync(process.execPath, [Path.join(CLI_ROOT, "scripts/build.ts")], { cwd: CLI_ROOT, stdio: "ignore" })
}
