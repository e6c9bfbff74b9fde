/**
 * The operator CLI's integrations commands (wired in admin/Cli.ts): `integrations connect` checks the
 * credentials with the connector's one cheap call, stores them encrypted and queues a first full sync;
 * `integrations disconnect`; `integrations list` (never a secret). Connecting stays out of the API: it is
 * dashboard-only there (403).
 */
import { type Provider, PROVIDERS } from "@sitehealth/domain/Integrations"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Fs from "node:fs"
import { presentRun } from "../api/Integrations.ts"
import { type Credentials, resolveBaseUrl } from "../integrations/Connector.ts"
import { CredentialsCipher, SecretKeyError } from "../integrations/Crypto.ts"
import { IntegrationsRepo } from "../integrations/IntegrationsRepo.ts"
import { makeProviderHttp, type ProviderError } from "../integrations/ProviderHttp.ts"
import { connectorFor } from "../integrations/Registry.ts"
import { SyncQueue } from "../integrations/SyncQueue.ts"
import { AppConfig } from "../platform/Config.ts"
import type { SettingsError } from "../platform/Settings.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import type { IntegrationRecord } from "../store/Records.ts"
import { type AdminCommand, AdminError } from "./Commands.ts"

const invalid = (message: string) => new AdminError({ message, type: "invalid_argument" })

const parseProvider = (raw: string) =>
  Effect.suspend(() => {
    const provider = raw.trim()
    if (!(PROVIDERS as ReadonlyArray<string>).includes(provider)) {
      return Effect.fail(invalid(`--provider must be one of ${PROVIDERS.join(", ")}; got "${raw}"`))
    }
    const connector = connectorFor(provider)
    if (connector === undefined) return Effect.fail(invalid(`this server has no connector for ${provider} yet`))
    return Effect.succeed({ provider: provider as Provider, connector })
  })

/** The credentials file: one JSON object whose values are strings, with every field the connector needs. */
export const readCredentialsFile = (path: string | undefined, required: ReadonlyArray<string>) =>
  Effect.suspend((): Effect.Effect<Credentials, AdminError> => {
    const hint = required.length === 0 ? "" : ` with ${required.map((f) => `"${f}"`).join(", ")}`
    if (path === undefined) {
      return required.length === 0
        ? Effect.succeed({})
        : Effect.fail(invalid(`--credentials-file is required: a JSON object${hint}`))
    }
    let text: string
    try {
      text = Fs.readFileSync(path, "utf8")
    } catch (e) {
      return Effect.fail(
        invalid(`cannot read --credentials-file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`)
      )
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      // The parser's message may quote the file's content (a secret): say only where the problem is.
      return Effect.fail(invalid(`--credentials-file ${path} is not valid JSON; it must be one JSON object${hint}`))
    }
    if (json === null || typeof json !== "object" || Array.isArray(json)) {
      return Effect.fail(invalid(`--credentials-file ${path} must hold one JSON object${hint}`))
    }
    const entries = Object.entries(json as Record<string, unknown>)
    const notString = entries.filter(([, v]) => typeof v !== "string").map(([k]) => k)
    if (notString.length > 0) {
      return Effect.fail(invalid(`in ${path}, these fields must be strings: ${notString.join(", ")}`))
    }
    const missing = required.filter((f) =>
      typeof (json as Record<string, unknown>)[f] !== "string" || (json as Record<string, string>)[f].trim() === ""
    )
    if (missing.length > 0) {
      return Effect.fail(
        invalid(`${path} lacks ${missing.map((f) => `"${f}"`).join(", ")} (needed: ${required.join(", ")})`)
      )
    }
    return Effect.succeed(Object.fromEntries(entries) as Credentials)
  })

const parseBaseUrl = (raw: string | undefined) =>
  Effect.suspend(() => {
    if (raw === undefined) return Effect.succeed(null)
    try {
      const u = new URL(raw.trim())
      if (u.protocol === "http:" || u.protocol === "https:") return Effect.succeed(u.toString().replace(/\/+$/, ""))
    } catch {
      // falls through
    }
    return Effect.fail(invalid(`--base-url must be an http(s) URL, got "${raw}"`))
  })

/** What a failed validation means for the operator (never echoing the credentials). */
export const explainRejection = (provider: string, e: ProviderError): string => {
  const said = ` (${e.message})`
  switch (e.kind) {
    case "unauthorized":
      return `${provider}: the key was rejected — it is wrong, revoked or expired${said}`
    case "forbidden":
      return `${provider}: the key works but lacks a permission this sync needs${said}`
    case "not_found":
      return `${provider}: the account, site or property was not found — check its id in the credentials file${said}`
    case "invalid_request":
      return `${provider}: the request was refused as invalid — check the credentials file's fields${said}`
    case "malformed":
      return `${provider}: the answer was not what the API gives — is --base-url the provider's API?${said}`
    default:
      return `${provider}: could not check the credentials (${e.kind}), nothing was stored; try again${said}`
  }
}

const integrationJson = (i: IntegrationRecord) => ({
  projectId: i.projectId,
  provider: i.provider,
  status: i.status,
  connectedAt: i.connectedAt.toISOString(),
  lastSuccessAt: i.lastSyncedAt?.toISOString() ?? null,
  lastError: i.lastError,
  baseUrl: i.baseUrl ?? null,
  syncIntervalMinutes: i.syncIntervalMinutes ?? null,
  // The schedule (Schedule.ts): null = not scheduled yet (its first slot after connectedAt).
  nextSyncAt: i.nextSyncAt?.toISOString() ?? null,
  consecutiveFailures: i.failures ?? 0
})

const cipherLayer = Layer.provide(CredentialsCipher.fromConfig, AppConfig.layerFromEnv)

export const integrationsConnect = (input: {
  readonly projectId: string
  readonly provider: string
  readonly credentialsFile: string | undefined
  readonly baseUrl: string | undefined
  readonly intervalMinutes: number | undefined
}): AdminCommand =>
  Effect.gen(function*() {
    const { connector, provider } = yield* parseProvider(input.provider)
    const credentials = yield* readCredentialsFile(input.credentialsFile, connector.credentialFields)
    const baseUrl = yield* parseBaseUrl(input.baseUrl)
    const interval = input.intervalMinutes
    if (interval !== undefined && (!Number.isInteger(interval) || interval < 1 || interval > 10_080)) {
      return yield* Effect.fail(invalid(`--interval-minutes must be a whole number from 1 to 10080, got ${interval}`))
    }
    return Effect.gen(function*() {
      const project = yield* (yield* ProjectsRepo).find(input.projectId)
      if (project === null) {
        return yield* Effect.fail(
          new AdminError({ message: `No project with id ${input.projectId}`, type: "not_found" })
        )
      }
      const cipher = yield* Effect.provide(Effect.service(CredentialsCipher), cipherLayer).pipe(
        Effect.mapError((e: SecretKeyError | SettingsError) => new AdminError({ message: e.message, type: "config" }))
      )
      // Short waits: the operator is watching; one retry covers a blip.
      const http = makeProviderHttp({ timeoutMs: 15_000, maxAttempts: 2, maxWaitMs: 5_000 })
      const resolvedBaseUrl = yield* Effect.mapError(
        resolveBaseUrl(connector, baseUrl),
        (message) => new AdminError({ message, type: "config" })
      )
      yield* connector.validate({ baseUrl: resolvedBaseUrl, credentials, http }).pipe(
        Effect.mapError((e) => new AdminError({ message: explainRejection(provider, e), type: "credentials" }))
      )
      const now = new Date(yield* Clock.currentTimeMillis)
      const integration = yield* (yield* IntegrationsRepo).connect({
        projectId: project.id,
        provider,
        credentials: Object.keys(credentials).length === 0 && connector.credentialFields.length === 0
          ? null
          : cipher.encrypt(credentials),
        baseUrl,
        syncIntervalMinutes: interval ?? null,
        now
      })
      const { sync } = yield* (yield* SyncQueue).request({
        projectId: project.id,
        provider,
        mode: "full",
        requestedBy: "admin",
        now
      })
      return {
        json: { integration: integrationJson(integration), sync: presentRun(sync) },
        text: `Connected ${provider} to ${project.name} (${project.id}); credentials checked and stored encrypted.\n` +
          `A full sync is queued (${sync.id}); a running server or \`npm run worker\` takes it.`
      }
    })
  })

export const integrationsDisconnect = (
  input: { readonly projectId: string; readonly provider: string }
): AdminCommand =>
  Effect.gen(function*() {
    const provider = input.provider.trim()
    if (!(PROVIDERS as ReadonlyArray<string>).includes(provider)) {
      return yield* Effect.fail(invalid(`--provider must be one of ${PROVIDERS.join(", ")}; got "${input.provider}"`))
    }
    return Effect.gen(function*() {
      const gone = yield* (yield* IntegrationsRepo).disconnect(input.projectId, provider)
      if (!gone) {
        return yield* Effect.fail(
          new AdminError({ message: `${provider} is not connected to project ${input.projectId}`, type: "not_found" })
        )
      }
      return {
        json: { disconnected: true, projectId: input.projectId, provider },
        text: `Disconnected ${provider} from ${input.projectId}: credentials deleted, queued syncs dropped; the data ` +
          `already synced stays.`
      }
    })
  })

export const integrationsList = (input: { readonly projectId: string | undefined }): AdminCommand =>
  Effect.succeed(Effect.gen(function*() {
    const rows = yield* (yield* IntegrationsRepo).all(input.projectId ?? null)
    const lines = rows.map((i) =>
      `  ${i.projectId}  ${i.provider.padEnd(22)} ${i.status.padEnd(10)} last success ${
        i.lastSyncedAt?.toISOString() ?? "never"
      }` +
      (i.lastError === null ? "" : `  error: ${i.lastError}`)
    )
    return {
      json: { integrations: rows.map(integrationJson) },
      text: rows.length === 0 ? "No integrations connected." : `Integrations:\n${lines.join("\n")}`
    }
  }))
