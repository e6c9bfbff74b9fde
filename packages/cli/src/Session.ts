/**
 * What every command shares: the global flags (accepted anywhere on the line), the resolved server and
 * token, the typed client, and printing (`--json`: the API's data exactly; else readable text).
 */
import { Effect, Option, Redacted, Schema } from "effect"
import { Flag, GlobalFlag } from "effect/cli"
import { type Api, ApiClient, retryPolicy } from "./Client.ts"
import { CliFailure, EXIT, localFailure, usage } from "./Failure.ts"
import { colorEnabled, makeStyle, type Style } from "./Format.ts"
import { assertSafeTransport, displayEnvironment, resolve, type Resolved } from "./Settings.ts"

/** A global flag with a value: absent unless given. */
const optionalText = <const Id extends string>(name: Id, description: string) =>
  GlobalFlag.Setting(name)({ flag: Flag.String(name).pipe(Flag.withDescription(description), Flag.optional) })
/** A global switch: off unless given. */
const switchFlag = <const Id extends string>(name: Id, description: string) =>
  GlobalFlag.Setting(name)({
    flag: Flag.Boolean(name).pipe(Flag.withDescription(description), Flag.withDefault(false))
  })

export const Json = switchFlag("json", "Print the API's data as JSON on stdout (errors: the error envelope)")
export const TokenFlag = optionalText("token", "API token (svc_…); overrides SITEHEALTH_TOKEN and the stored login")
export const BaseUrlFlag = optionalText(
  "base-url",
  "Server URL; overrides SITEHEALTH_URL and the profile (default http://127.0.0.1:8787)"
)
export const ProfileFlag = optionalText("profile", "Stored login to use (default \"default\", or SITEHEALTH_PROFILE)")
export const InsecureHttpFlag = switchFlag(
  "insecure-http",
  "Allow sending the token over plain http:// to a host other than this machine"
)

export const GLOBAL_FLAGS = [Json, TokenFlag, BaseUrlFlag, ProfileFlag, InsecureHttpFlag] as const

/** The run's settings from the flags, environment and stored profile. */
export const settings = Effect.gen(function*() {
  const token = yield* TokenFlag
  const baseUrl = yield* BaseUrlFlag
  const profile = yield* ProfileFlag
  const insecureHttp = yield* InsecureHttpFlag
  return yield* Effect.try({
    try: () =>
      resolve({
        token: Option.getOrUndefined(token),
        baseUrl: Option.getOrUndefined(baseUrl),
        profile: Option.getOrUndefined(profile),
        insecureHttp
      }),
    catch: (e) => (e instanceof CliFailure ? e : localFailure(EXIT.failure, "config", String(e)))
  })
})

/** A server and token ready to use: the token present and safe to send there. */
export const connection = (resolved: Resolved) =>
  Effect.try({
    try: () => {
      if (resolved.token === undefined) {
        throw localFailure(
          EXIT.unauthorized,
          "not_logged_in",
          `no token: run \`sitehealth auth login\`${
            resolved.profileName === "default" ? "" : ` --profile ${resolved.profileName}`
          }, set SITEHEALTH_TOKEN or pass --token`
        )
      }
      assertSafeTransport(resolved.baseUrl, resolved.insecureHttp)
      return {
        baseUrl: resolved.baseUrl,
        token: Redacted.value(resolved.token),
        retry: retryPolicy(resolved.maxRetryAfterSeconds)
      }
    },
    catch: (e) => (e instanceof CliFailure ? e : localFailure(EXIT.failure, "internal", String(e)))
  })

/**
 * Runs `use` with a client for this run's server and token. `call` wraps each request so any failure
 * becomes a `CliFailure` with its exit code.
 */
export const withApi = <A, R>(
  use: (
    api: Api,
    call: <B, E, R2>(request: Effect.Effect<B, E, R2>) => Effect.Effect<B, CliFailure, R2>,
    resolved: Resolved
  ) => Effect.Effect<A, CliFailure, R>
) =>
  Effect.gen(function*() {
    const resolved = yield* settings
    const target = yield* connection(resolved)
    return yield* Effect.flatMap(ApiClient, ({ api, call }) => use(api, call, resolved)).pipe(
      Effect.provide(ApiClient.layer(target))
    )
  })

let color: boolean | undefined
/** Colour decided once per run, on first use. */
export const style = (): Style => makeStyle(color ??= colorEnabled(displayEnvironment(), process.stdout.isTTY === true))

export const writeOut = (text: string) =>
  Effect.sync(() => void process.stdout.write(text.endsWith("\n") ? text : `${text}\n`))
export const writeErr = (text: string) =>
  Effect.sync(() => void process.stderr.write(text.endsWith("\n") ? text : `${text}\n`))

export const printJson = (value: unknown) => writeOut(JSON.stringify(value, null, 2))

/** `--json`: the data as JSON; else the text rendering. */
export const emit = <A>(data: A, render: (style: Style, data: A) => string) =>
  Effect.flatMap(Json, (json: boolean) => (json ? printJson(data) : writeOut(render(style(), data))))

/**
 * Checks flag values against one of the contract's schemas before any request, so an invalid value is a
 * usage error (exit 2) naming what is allowed, exactly as the API would judge it.
 */
export const validate = <S extends Schema.Decoder<unknown>>(schema: S, input: unknown, what: string) =>
  Schema.decodeUnknownEffect(schema)(input, { errors: "all", onExcessProperty: "error" }).pipe(
    Effect.mapError((error) => {
      const message = (error as { message?: string }).message ?? String(error)
      return usage(`invalid ${what}: ${message.replace(/\n\s*at \[([^\n]*)\]/g, " (at $1)").replace(/\n\s*/g, "; ")}`)
    })
  ) as Effect.Effect<S["Type"], CliFailure, never>
