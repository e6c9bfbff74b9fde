/**
 * Where a command's token and server come from, decided once per run:
 *   token:    --token  >  SITEHEALTH_TOKEN  >  the profile's stored login
 *   base URL: --base-url  >  SITEHEALTH_URL  >  the profile's stored URL  >  http://127.0.0.1:8787
 * and the one transport rule: a token never goes over plain http:// to a host other than this machine
 * unless --insecure-http says so. Every variable the CLI reads is read here, through Effect's Config.
 */
import { Config, ConfigProvider, Effect, Redacted } from "effect"
import { DEFAULT_MAX_RETRY_AFTER_SECONDS } from "./Client.ts"
import { EXIT, localFailure, usage } from "./Failure.ts"
import type { DisplayEnvironment } from "./Format.ts"
import { configFile, DEFAULT_PROFILE, type Profile, readProfiles } from "./Profiles.ts"

export const DEFAULT_BASE_URL = "http://127.0.0.1:8787"

export type TokenSource = "flag" | "env" | "profile"

export interface Flags {
  readonly token: string | undefined
  readonly baseUrl: string | undefined
  readonly profile: string | undefined
  readonly insecureHttp: boolean
}

export interface Resolved {
  readonly profileName: string
  readonly file: string
  readonly stored: Profile | undefined
  readonly baseUrl: string
  readonly baseUrlSource: "flag" | "env" | "profile" | "default"
  /** Redacted from the moment it is read: it prints as <redacted> wherever a Resolved ends up. */
  readonly token: Redacted.Redacted<string> | undefined
  readonly tokenSource: TokenSource | undefined
  readonly insecureHttp: boolean
  /** The longest 429 Retry-After (seconds) waited out once (SITEHEALTH_MAX_RETRY_AFTER). */
  readonly maxRetryAfterSeconds: number
}

const nonEmpty = (s: string | undefined): string | undefined => {
  const t = s?.trim()
  return t === undefined || t === "" ? undefined : t
}

const optionalText = (name: string) =>
  Config.option(Config.String(name)).pipe(Config.map((v) => nonEmpty(v._tag === "Some" ? v.value : undefined)))

/** Seconds ≥ 0; an unusable value is a usage error naming the variable (it used to mean the default). */
const maxRetryAfterSeconds = (raw: string | undefined): number => {
  if (raw === undefined) return DEFAULT_MAX_RETRY_AFTER_SECONDS
  const seconds = Number(raw)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds
  throw usage(`SITEHEALTH_MAX_RETRY_AFTER must be a number of seconds (0 or more), got "${raw}"`)
}

/** The environment's part of the settings, read with Effect's Config; the token Redacted from the start. */
const environment = Config.all({
  profile: optionalText("SITEHEALTH_PROFILE"),
  xdgConfigHome: optionalText("XDG_CONFIG_HOME"),
  home: optionalText("HOME"),
  maxRetryAfter: optionalText("SITEHEALTH_MAX_RETRY_AFTER"),
  baseUrl: optionalText("SITEHEALTH_URL"),
  token: Config.option(Config.Redacted("SITEHEALTH_TOKEN")).pipe(
    Config.map((v) => {
      const token = v._tag === "Some" ? nonEmpty(Redacted.value(v.value)) : undefined
      return token === undefined ? undefined : Redacted.make(token)
    })
  )
})

const optionalRaw = (name: string) =>
  Config.option(Config.String(name)).pipe(Config.map((v) => (v._tag === "Some" ? v.value : undefined)))

/**
 * NO_COLOR and TERM, read from the current ConfigProvider (the process environment). Effect's environment
 * provider reads an empty variable as unset, so `NO_COLOR=` leaves colour on — as no-color.org asks.
 */
export const displayEnvironment = (): DisplayEnvironment =>
  // Plain strings only: no lookup here can fail, so running it synchronously is safe.
  Effect.runSync(Config.all({ NO_COLOR: optionalRaw("NO_COLOR"), TERM: optionalRaw("TERM") }))

/**
 * `env`: the variables to read (tests); the current ConfigProvider — the process environment — when omitted.
 * Throws the usage error of a variable that has no usable value.
 */
export const resolve = (flags: Flags, env?: Record<string, string | undefined>): Resolved => {
  // Plain strings only: no lookup here can fail, so running it synchronously is safe.
  const fromEnv = Effect.runSync(env === undefined ? environment : environment.parse(ConfigProvider.fromEnvRecord(env)))
  const profileName = nonEmpty(flags.profile) ?? fromEnv.profile ?? DEFAULT_PROFILE
  const file = configFile(fromEnv)
  let stored: Profile | undefined
  try {
    stored = readProfiles(file).profiles[profileName]
  } catch (e) {
    throw localFailure(EXIT.failure, "config", (e as Error).message)
  }
  const flagUrl = nonEmpty(flags.baseUrl)
  const envUrl = fromEnv.baseUrl
  const [baseUrl, baseUrlSource] = flagUrl !== undefined
    ? [flagUrl, "flag" as const]
    : envUrl !== undefined
    ? [envUrl, "env" as const]
    : stored !== undefined
    ? [stored.baseUrl, "profile" as const]
    : [DEFAULT_BASE_URL, "default" as const]
  const flagToken = nonEmpty(flags.token)
  const [token, tokenSource] = flagToken !== undefined
    ? [Redacted.make(flagToken), "flag" as const]
    : fromEnv.token !== undefined
    ? [fromEnv.token, "env" as const]
    : stored !== undefined
    ? [Redacted.make(stored.token), "profile" as const]
    : [undefined, undefined]
  return {
    profileName,
    file,
    stored,
    baseUrl: normaliseBaseUrl(baseUrl),
    baseUrlSource,
    token,
    tokenSource,
    insecureHttp: flags.insecureHttp,
    maxRetryAfterSeconds: maxRetryAfterSeconds(fromEnv.maxRetryAfter)
  }
}

/** Checks the URL's shape and drops a trailing slash; an unusable URL is a usage error. */
export const normaliseBaseUrl = (raw: string): string => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw usage(`invalid base URL "${raw}": expected e.g. ${DEFAULT_BASE_URL}`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw usage(`invalid base URL "${raw}": only http:// and https:// are supported`)
  }
  if (url.search !== "" || url.hash !== "") throw usage(`invalid base URL "${raw}": no query or fragment`)
  return url.toString().replace(/\/+$/, "")
}

/** This machine: localhost, 127.0.0.0/8, ::1. */
export const isLoopback = (hostname: string): boolean => {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase()
  return host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host)
}

/** Refuses to send a token in clear text across a network, before any request is made. */
export const assertSafeTransport = (baseUrl: string, insecureHttp: boolean): void => {
  const url = new URL(baseUrl)
  if (url.protocol === "http:" && !isLoopback(url.hostname) && !insecureHttp) {
    throw usage(
      `refusing to send a token over plain http:// to ${url.host}: use https://, or pass --insecure-http if you ` +
        `accept that anyone on the network can read it`
    )
  }
}

export const describeTokenSource = (resolved: Resolved): string => {
  switch (resolved.tokenSource) {
    case "flag":
      return "--token flag"
    case "env":
      return "SITEHEALTH_TOKEN environment variable"
    case "profile":
      return `stored login, profile "${resolved.profileName}" (${resolved.file})`
    default:
      return "none"
  }
}

/** `svc_` + the last 4 characters: enough to recognise a token, never enough to use it. */
export const maskSecret = (secret: string): string => {
  const prefix = secret.startsWith("svc_") ? "svc_" : ""
  return `${prefix}…${secret.slice(-4)}`
}
