/**
 * What the browser tests run against: the real sitehealth server (every layer of `npm start` but the
 * database: the in-memory repositories) on 127.0.0.1 and a free port, serving the web build, with its mail
 * going over SMTP to a local `smtp-server` sink the test reads links from.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { GOOGLE_CALLBACK_PAGE } from "@sitehealth/domain/DashboardConnections"
import { ROUTER_CONFIG } from "@sitehealth/server/App"
import { appLayer, MemoryRepos } from "@sitehealth/server/Layers"
import { AppConfig, type AppConfigShape, readConfig } from "@sitehealth/server/platform/Config"
import { freePort } from "@sitehealth/server/test/support/Ports"
import { runSyncWorker } from "@sitehealth/server/worker/SyncRunner"
import { type Context, Effect, Fiber, Layer, Redacted } from "effect"
import { HttpRouter } from "effect/http"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { SMTPServer } from "smtp-server"

export const WEB_ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../..")
export const CHROMIUM = "/usr/bin/chromium"
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]
export const ARTIFACTS = Path.join(WEB_ROOT, "test/artifacts")

/** Builds packages/web/dist from the current sources (the server serves what is there). */
export const buildWeb = () => {
  const vite = Path.resolve(WEB_ROOT, "../../node_modules/vite/bin/vite.js")
  // NODE_ENV=test (vitest's) would make vite bundle React's development build.
  const result = spawnSync(process.execPath, [vite, "build", "--logLevel", "warn"], {
    cwd: WEB_ROOT,
    encoding: "utf8",
    env: { ...process.env, NODE_ENV: "production" }
  })
  if (result.status !== 0) throw new Error(`vite build failed:\n${result.stdout}\n${result.stderr}`)
}

export interface Mail {
  readonly to: string
  readonly raw: string
}

/** A local SMTP server that keeps every message; `waitFor` resolves with the first one matching. */
export const startSmtpSink = async () => {
  const mails: Array<Mail> = []
  const waiters: Array<() => void> = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onData(stream, session, callback) {
      const chunks: Array<Buffer> = []
      stream.on("data", (c: Buffer) => chunks.push(c))
      stream.on("end", () => {
        mails.push({
          to: session.envelope.rcptTo.map((r) => r.address).join(","),
          raw: Buffer.concat(chunks).toString("utf8")
        })
        for (const w of waiters.splice(0)) w()
        callback()
      })
    }
  })
  const port = await freePort()
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const waitFor = async (predicate: (mail: Mail) => boolean, timeoutMs = 10_000): Promise<Mail> => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = mails.find(predicate)
      if (found !== undefined) return found
      if (Date.now() > deadline) throw new Error(`no mail matched within ${timeoutMs} ms; got ${mails.length}`)
      await new Promise<void>((resolve) => {
        waiters.push(resolve)
        setTimeout(resolve, 200)
      })
    }
  }
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    waitFor,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** The link in a mail's text (quoted-printable soft breaks and `=3D` undone). */
export const linkIn = (mail: Mail, path: string): string => {
  const text = mail.raw.replace(/=\r?\n/g, "").replace(/=3D/gi, "=")
  const match = new RegExp(`https?://[^\\s"<>]*${path.replace(/[/?]/g, "\\$&")}[^\\s"<>]*`).exec(text)
  if (match === null) throw new Error(`no ${path} link in the mail:\n${text}`)
  return match[0]
}

/** Google's OAuth client and endpoints, as the server is configured with them (here: the local fake's). */
export interface GoogleSettings {
  readonly clientId: string
  readonly clientSecret: string
  readonly authUrl: string
  readonly tokenUrl: string
  readonly apiBase: string
}

/**
 * `providers`: where the server reaches Stripe, Plausible and Google (the local fakes of
 * packages/fakes/src). The OAuth redirect is this server's own /oauth/google/callback page.
 */
export const startServer = async (
  smtpUrl: string,
  providers: { readonly stripe: string; readonly plausible: string; readonly google?: GoogleSettings },
  options: { readonly worker?: boolean; readonly billing?: AppConfigShape["billing"] } = {}
) => {
  const port = await freePort()
  const defaults = readConfig({ SMTP_URL: smtpUrl, SITEHEALTH_SECRET_KEY: Buffer.alloc(32, 9).toString("base64") })
  const config: AppConfigShape = {
    ...defaults,
    host: "127.0.0.1",
    port,
    redisUrl: null,
    billing: options.billing ?? null,
    connections: {
      ...defaults.connections,
      stripeApiBase: providers.stripe,
      plausibleApiBase: providers.plausible,
      ...(providers.google === undefined ? {} : {
        googleClientId: providers.google.clientId,
        googleClientSecret: Redacted.make(providers.google.clientSecret),
        googleAuthUrl: providers.google.authUrl,
        googleTokenUrl: providers.google.tokenUrl,
        gscApiBase: providers.google.apiBase,
        // What the server's default would be on this host and port (readConfig computed it for its own).
        googleRedirectUri: `http://127.0.0.1:${port}${GOOGLE_CALLBACK_PAGE}`
      })
    }
  }
  // One set of repositories for the server and, when asked, the worker's syncs (as `npm start` runs them in
  // process: a connection's first sync runs within SYNC_POLL_INTERVAL and recomposes the briefing when it lands).
  let context: Context.Context<never> | null = null
  const app = Effect.gen(function*() {
    const repos = yield* Layer.build(MemoryRepos)
    context = repos as Context.Context<never>
    if (options.worker === true) {
      yield* Effect.forkScoped(
        runSyncWorker.pipe(Effect.provideContext(repos), Effect.provide(AppConfig.layer(config))) as Effect.Effect<
          never
        >
      )
    }
    const server = HttpRouter.serve(appLayer(config, Layer.succeedContext(repos)), {
      disableLogger: true,
      routerConfig: ROUTER_CONFIG
    }).pipe(Layer.provide(NodeHttpServer.layer(() => Http.createServer(), { port, host: "127.0.0.1" })))
    return yield* Layer.launch(server as any)
  })
  const fiber = Effect.runFork(Effect.scoped(app) as Effect.Effect<never>)
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1000) }).then((r) => r.ok, () => false)
    if (ok) break
    await new Promise((r) => setTimeout(r, 50))
  }
  return {
    base,
    /** Runs an effect over the server's repositories (a test's setup: an account, its trial). */
    run: <A>(effect: Effect.Effect<A, unknown, any>): Promise<A> =>
      Effect.runPromise(Effect.provideContext(effect, context!) as Effect.Effect<A>),
    close: () => Effect.runPromise(Fiber.interrupt(fiber))
  }
}

export const ensureArtifacts = () => Fs.mkdirSync(ARTIFACTS, { recursive: true })
