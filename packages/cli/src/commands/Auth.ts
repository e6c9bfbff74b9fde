/**
 * auth login | status | logout. The token is read from stdin when it is piped, else from a prompt that
 * does not echo — never from the command line, where it would land in shell history. A login is checked
 * against the API before it is stored: 401 stores nothing; 403 (a token without projects:read) and 402
 * (trial ended) still prove the token is real, so it is stored.
 */
import type { TokenMetadata } from "@sitehealth/domain/Tokens"
import { Effect, Redacted } from "effect"
import { Command, Prompt } from "effect/cli"
import { ApiClient, retryPolicy } from "../Client.ts"
import { CliFailure, EXIT, localFailure } from "../Failure.ts"
import { fields } from "../Format.ts"
import { removeProfile, saveProfile } from "../Profiles.ts"
import { connection, Json, printJson, settings, style, writeErr, writeOut } from "../Session.ts"
import { assertSafeTransport, describeTokenSource, maskSecret, type Resolved } from "../Settings.ts"

const readStdin = () =>
  Effect.promise(async () => {
    const chunks: Array<Buffer> = []
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks).toString("utf8")
  })

const readToken = Effect.gen(function*() {
  if (process.stdin.isTTY !== true) return (yield* readStdin()).trim().split(/\s+/)[0] ?? ""
  const secret = yield* Prompt.run(Prompt.Hidden({ message: "API token (svc_…)" })).pipe(
    Effect.mapError(() => localFailure(EXIT.failure, "cancelled", "cancelled: nothing was stored"))
  )
  return Redacted.value(secret).trim()
})

/**
 * Asks the API about the token: its own metadata from `GET /tokens/current` (any valid token may read its
 * own, whatever its permissions) and the projects it sees (needs projects:read).
 */
const inspect = (resolved: Resolved, token: string) =>
  Effect.gen(function*() {
    const { api, call } = yield* ApiClient
    const probe = <A>(request: Effect.Effect<A, unknown, never>) =>
      call(request).pipe(
        Effect.map((a): A | null => a),
        // A 403/402 still authenticates the token; only 401 (and transport errors) say it is unusable.
        Effect.catchIf(
          (f: CliFailure) => f.exitCode === EXIT.forbidden || f.exitCode === EXIT.paymentRequired,
          () => Effect.succeed(null)
        )
      )
    const projects = yield* probe(api.projects.listProjects({ query: { limit: 100 } }))
    const own: TokenMetadata | null = yield* probe(api.tokens.getCurrentToken())
    return {
      profile: resolved.profileName,
      baseUrl: resolved.baseUrl,
      baseUrlSource: resolved.baseUrlSource,
      tokenSource: resolved.tokenSource ?? null,
      secret: maskSecret(token),
      token: own,
      projects: projects === null ? null : projects.projects.map((p) => ({ id: p.id, name: p.name, domain: p.domain }))
    }
  }).pipe(
    Effect.provide(
      ApiClient.layer({ baseUrl: resolved.baseUrl, token, retry: retryPolicy(resolved.maxRetryAfterSeconds) })
    )
  )

type Status = Effect.Success<ReturnType<typeof inspect>>

const renderStatus = (status: Status, resolved: Resolved) => {
  const s = style()
  return fields(s, [
    ["server", `${status.baseUrl} (${status.baseUrlSource})`],
    ["token", `${status.secret} from the ${describeTokenSource(resolved)}`],
    ["account", status.token?.accountId ?? "unknown"],
    ["token id", status.token?.id ?? "unknown"],
    ["name", status.token?.name ?? "—"],
    ["permissions", status.token?.permissions.join(", ") ?? "unknown"],
    [
      "scope",
      status.token === null
        ? "unknown"
        : status.token.projects === null
        ? "every project"
        : status.token.projects.join(", ")
    ],
    ["expires", status.token === null ? "unknown" : status.token.expiresAt ?? "never"],
    [
      "projects",
      status.projects === null
        ? "unknown (needs projects:read)"
        : status.projects.map((p) => `${p.id} ${p.name}`).join("\n" + " ".repeat(13)) || "(none)"
    ]
  ])
}

const login = Command.make("login", {}, () =>
  Effect.gen(function*() {
    const json: boolean = yield* Json
    const resolved = yield* settings
    yield* Effect.try({
      try: () => assertSafeTransport(resolved.baseUrl, resolved.insecureHttp),
      catch: (e) => e as CliFailure
    })
    if (process.stdin.isTTY === true) {
      yield* writeErr(`Logging in to ${resolved.baseUrl} (profile "${resolved.profileName}")`)
    }
    const token = yield* readToken
    if (token === "") {
      return yield* localFailure(EXIT.usage, "usage", "no token given (pipe it on stdin or type it at the prompt)")
    }
    const status = yield* inspect({ ...resolved, tokenSource: "profile" }, token)
    yield* Effect.try({
      try: () => saveProfile(resolved.file, resolved.profileName, { baseUrl: resolved.baseUrl, token }),
      catch: (e) =>
        localFailure(EXIT.failure, "config", `cannot store the login in ${resolved.file}: ${(e as Error).message}`)
    })
    if (json) {
      yield* printJson({ ...status, file: resolved.file })
    } else {yield* writeOut(
        `Logged in to ${resolved.baseUrl} as ${status.secret}${
          status.token ? ` (${status.token.id}, ${status.token.name})` : ""
        }; stored in ${resolved.file} (profile "${resolved.profileName}")`
      )}
  })).pipe(
    Command.withDescription(
      "Store a token for this server (read from stdin or a hidden prompt, checked against the API)"
    ),
    Command.withExamples([
      { command: "sitehealth auth login", description: "Type the token at a hidden prompt" },
      {
        command: "cat .sitehealth/demo-token | sitehealth auth login --base-url http://127.0.0.1:8787",
        description: "From a file"
      },
      {
        command: "sitehealth auth login --profile prod --base-url https://api.example.com",
        description: "A second account"
      }
    ])
  )

const status = Command.make("status", {}, () =>
  Effect.gen(function*() {
    const json: boolean = yield* Json
    const resolved = yield* settings
    const target = yield* connection(resolved)
    const result = yield* inspect(resolved, target.token)
    yield* json ? printJson(result) : writeOut(renderStatus(result, resolved))
  })).pipe(
    Command.withDescription(
      "Show the server, where the token comes from (secret masked), its permissions and projects"
    ),
    Command.withExamples([{ command: "sitehealth auth status", description: "Who am I?" }])
  )

const logout = Command.make("logout", {}, () =>
  Effect.gen(function*() {
    const json: boolean = yield* Json
    const resolved = yield* settings
    const removed = yield* Effect.try({
      try: () => removeProfile(resolved.file, resolved.profileName),
      catch: (e) => localFailure(EXIT.failure, "config", (e as Error).message)
    })
    const message = removed
      ? `Logged out of profile "${resolved.profileName}"`
      : `Profile "${resolved.profileName}" was not logged in`
    yield* json ? printJson({ profile: resolved.profileName, removed }) : writeOut(message)
  })).pipe(
    Command.withDescription(
      "Forget the stored token of a profile (the token itself stays valid: revoke it with `tokens revoke`)"
    ),
    Command.withExamples([{ command: "sitehealth auth logout --profile prod", description: "Forget the prod login" }])
  )

export const authCommand = Command.make("auth").pipe(
  Command.withDescription("Log in, show the current login, log out"),
  Command.withSubcommands([login, status, logout])
)
