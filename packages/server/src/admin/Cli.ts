/**
 * The operator CLI's command tree (effect/cli): `accounts`, `projects` and `tokens` groups. Each
 * handler opens the database (migrated; the embedded cluster when there is no DATABASE_URL), runs one
 * command from Commands.ts, closes the database and prints the command's output exactly once.
 */
import { PERMISSIONS } from "@sitehealth/domain/Permissions"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as GlobalFlag from "effect/cli/GlobalFlag"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as SqlClient from "effect/sql/SqlClient"
import { AppConfig, loadAppConfig } from "../platform/Config.ts"
import {
  accountsCreate,
  accountsList,
  accountsSubscription,
  accountsTrial,
  type AdminCommand,
  AdminError,
  type Output,
  projectsCreate,
  projectsDelete,
  type Repos,
  tokensMint,
  tokensRevoke
} from "./Commands.ts"
import { fxList, fxSet } from "./Fx.ts"
import { integrationsConnect, integrationsDisconnect, integrationsList } from "./Integrations.ts"
import { secretKeyRotate } from "./KeyRotation.ts"

/** `--json`, accepted anywhere on the command line. */
export const Json = GlobalFlag.Setting("json")({
  flag: Flag.Boolean("json").pipe(
    Flag.withDescription("Print exactly one JSON object on stdout (logs go to stderr)"),
    Flag.withDefault(false)
  )
})

/** The error's message, with its causes' (a SqlError's "Failed to connect" says little alone). */
const errorMessage = (e: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = e
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    const raw = typeof current === "object" && "message" in current
      ? String((current as { message: unknown }).message)
      : String(current)
    const message = raw.replace(/^Error: /, "").replace(/[:\s]+$/, "")
    if (message !== "" && !parts.some((p) => p.includes(message))) parts.push(message)
    current = typeof current === "object" && "cause" in current ? current.cause : undefined
  }
  return parts.length === 0 ? String(e) : parts.join(": ")
}

/** Where the database is, without credentials. */
const describeUrl = (url: string, kind: "embedded" | "external") => {
  try {
    const u = new URL(url)
    return `${kind === "embedded" ? "the embedded database" : "DATABASE_URL"} at ${u.host}${u.pathname}`
  } catch {
    return kind === "embedded" ? "the embedded database" : "DATABASE_URL"
  }
}

const describeDbError = (what: string) => (e: unknown) =>
  new AdminError({ message: `${what}: ${errorMessage(e)}`, type: "database" })

/**
 * Runs `use` against the migrated database, then releases it (stopping an embedded cluster we
 * started; a cluster owned by a running server is attached to and left running).
 */
export const withDatabase = <A, E>(use: Effect.Effect<A, E, Repos>) =>
  Effect.scoped(
    Effect.gen(function*() {
      const config = yield* Effect.mapError(
        loadAppConfig(process.stderr.isTTY === true),
        (e) => new AdminError({ message: `configuration: ${e.message}`, type: "config" })
      )
      // Loaded here, not at start-up: --help and argument errors answer without loading the SQL stack and the app.
      const { pgLayer, resolveDatabaseUrl } = yield* Effect.promise(() => import("../platform/Database.ts"))
      const { runMigrations } = yield* Effect.promise(() => import("../Migrations.ts"))
      const { SqlRepos } = yield* Effect.promise(() => import("../Layers.ts"))
      const database = yield* resolveDatabaseUrl.pipe(
        Effect.provideService(AppConfig, config),
        Effect.catchDefect((e) => Effect.fail(describeDbError("cannot open the database")(e)))
      )
      const where = describeUrl(database.url, database.kind)
      const context = yield* Layer.build(SqlRepos.pipe(Layer.provideMerge(pgLayer(database.url)))).pipe(
        Effect.mapError(describeDbError(`cannot connect to ${where}`))
      )
      const sql = Context.get(context, SqlClient.SqlClient)
      yield* sql`SELECT 1`.pipe(Effect.mapError(describeDbError(`cannot connect to ${where}`)))
      yield* runMigrations.pipe(
        Effect.provideContext(context),
        Effect.mapError(describeDbError(`cannot migrate ${where}`))
      )
      return yield* use.pipe(Effect.provideContext(context))
    })
  )

/** Writes the output: the JSON object or the text, once, to stdout. */
export const emit = (json: boolean, output: Output) =>
  Effect.sync(() => {
    process.stdout.write(json ? `${JSON.stringify(output.json, null, 2)}\n` : `${output.text}\n`)
  })

/** Validates first (no database), then runs the work against the database, then prints. */
const execute = (command: AdminCommand) =>
  Effect.gen(function*() {
    const json = yield* Json
    const work = yield* command
    const output = yield* withDatabase(work)
    yield* emit(json, output)
  })

const optional = <A>(o: Option.Option<A>): A | undefined => Option.getOrUndefined(o)

// ---------------------------------------------------------------------------------------------------
// accounts

const accountId = Argument.String("account-id").pipe(Argument.withDescription("The account's id (acc_…)"))

const accountsCreateCommand = Command.make(
  "create",
  {
    name: Flag.String("name").pipe(Flag.withDescription("The account's name")),
    trialDays: Flag.Int("trial-days").pipe(
      Flag.withDescription("Length of the free trial, from now"),
      Flag.withDefault(14)
    )
  },
  ({ name, trialDays }) => execute(accountsCreate({ name, trialDays }))
).pipe(
  Command.withDescription("Create an account with a free trial"),
  Command.withExamples([{
    command: "admin accounts create --name \"Acme\" --trial-days 30",
    description: "30-day trial"
  }])
)

const accountsListCommand = Command.make("list", {}, () => execute(accountsList)).pipe(
  Command.withDescription("List all accounts with their entitlement")
)

const accountsTrialCommand = Command.make(
  "trial",
  {
    accountId,
    endsAt: Flag.String("ends-at").pipe(
      Flag.withDescription("When the trial ends (ISO 8601 date or instant); a past date ends it now")
    )
  },
  ({ accountId, endsAt }) => execute(accountsTrial({ accountId, endsAt }))
).pipe(
  Command.withDescription("Set when an account's trial ends"),
  Command.withExamples([
    { command: "admin accounts trial acc_123 --ends-at 2020-01-01", description: "End the trial" }
  ])
)

const accountsSubscriptionCommand = Command.make(
  "subscription",
  {
    accountId,
    status: Flag.Literals("status", ["active", "canceled", "none"]).pipe(
      Flag.withDescription("active: entitled (until --until, if given); canceled: entitled until --until; none")
    ),
    until: Flag.String("until").pipe(
      Flag.withDescription("End of the paid period (ISO 8601 date or instant)"),
      Flag.optional
    )
  },
  ({ accountId, status, until }) => execute(accountsSubscription({ accountId, status, until: optional(until) }))
).pipe(
  Command.withDescription("Set an account's subscription"),
  Command.withExamples([
    { command: "admin accounts subscription acc_123 --status active", description: "Activate" },
    {
      command: "admin accounts subscription acc_123 --status canceled --until 2025-12-31",
      description: "Canceled, paid up to the end of 2025"
    }
  ])
)

const accounts = Command.make("accounts").pipe(
  Command.withDescription("Accounts: create, list, trial and subscription"),
  Command.withSubcommands([
    accountsCreateCommand,
    accountsListCommand,
    accountsTrialCommand,
    accountsSubscriptionCommand
  ])
)

// ---------------------------------------------------------------------------------------------------
// projects

const projectsCreateCommand = Command.make(
  "create",
  {
    account: Flag.String("account").pipe(Flag.withDescription("The owning account's id (acc_…)")),
    name: Flag.String("name").pipe(Flag.withDescription("The project's name")),
    domain: Flag.String("domain").pipe(Flag.withDescription("The site's host name, e.g. example.com")),
    timezone: Flag.String("timezone").pipe(
      Flag.withDescription("IANA time zone the project's days are counted in (default UTC)"),
      Flag.optional
    ),
    currency: Flag.String("currency").pipe(
      Flag.withDescription("ISO 4217 reporting currency (default USD)"),
      Flag.optional
    )
  },
  ({ account, currency, domain, name, timezone }) =>
    execute(
      projectsCreate({ accountId: account, name, domain, timezone: optional(timezone), currency: optional(currency) })
    )
).pipe(
  Command.withDescription("Create a project (website) in an account"),
  Command.withExamples([
    {
      command: "admin projects create --account acc_123 --name Shop --domain shop.example --timezone Europe/Berlin " +
        "--currency EUR",
      description: "A project counted in Berlin days, reporting in euros"
    }
  ])
)

const projectsDeleteCommand = Command.make(
  "delete",
  { projectId: Argument.String("project-id").pipe(Argument.withDescription("The project's id (prj_…)")) },
  ({ projectId }) => execute(projectsDelete(projectId))
).pipe(Command.withDescription("Delete a project and everything stored for it"))

const projects = Command.make("projects").pipe(
  Command.withDescription("Projects: create and delete"),
  Command.withSubcommands([projectsCreateCommand, projectsDeleteCommand])
)

// ---------------------------------------------------------------------------------------------------
// tokens

const tokensMintCommand = Command.make(
  "mint",
  {
    account: Flag.String("account").pipe(Flag.withDescription("The account's id (acc_…)")),
    name: Flag.String("name").pipe(
      Flag.withDescription("A label for the token (default \"API token\")"),
      Flag.optional
    ),
    projects: Flag.String("projects").pipe(
      Flag.withDescription(
        "Comma-separated project ids to limit the token to (default: every project, present and future)"
      ),
      Flag.optional
    ),
    permissions: Flag.String("permissions").pipe(
      Flag.withDescription(`Comma-separated permissions (default: all): ${PERMISSIONS.join(", ")}`),
      Flag.optional
    ),
    expiresAt: Flag.String("expires-at").pipe(
      Flag.withDescription("When the token expires (ISO 8601, in the future; default: never)"),
      Flag.optional
    )
  },
  ({ account, expiresAt, name, permissions, projects }) =>
    execute(
      tokensMint({
        accountId: account,
        name: optional(name),
        projects: optional(projects),
        permissions: optional(permissions),
        expiresAt: optional(expiresAt)
      })
    )
).pipe(
  Command.withDescription("Mint an API token; prints its secret once"),
  Command.withExamples([
    {
      command: "admin tokens mint --account acc_123 --name ci --projects prj_1,prj_2 --permissions " +
        "projects:read,analytics:read",
      description: "A read-only token for two projects"
    }
  ])
)

const tokensRevokeCommand = Command.make(
  "revoke",
  { tokenId: Argument.String("token-id").pipe(Argument.withDescription("The token's id (tok_…)")) },
  ({ tokenId }) => execute(tokensRevoke(tokenId))
).pipe(Command.withDescription("Revoke a token (idempotent)"))

const tokens = Command.make("tokens").pipe(
  Command.withDescription("API tokens: mint and revoke"),
  Command.withSubcommands([tokensMintCommand, tokensRevokeCommand])
)

// ---------------------------------------------------------------------------------------------------
// fx

const fxSetCommand = Command.make(
  "set",
  {
    base: Flag.String("base").pipe(Flag.withDescription("ISO 4217 code of the currency converted from, e.g. EUR")),
    quote: Flag.String("quote").pipe(Flag.withDescription("ISO 4217 code of the currency converted to, e.g. USD")),
    rate: Flag.String("rate").pipe(Flag.withDescription("Units of quote per 1 unit of base, e.g. 1.08")),
    day: Flag.String("day").pipe(
      Flag.withDescription("First day (YYYY-MM-DD) the rate applies; it holds until the pair's next rate")
    )
  },
  (input) => execute(fxSet(input))
).pipe(
  Command.withDescription("Store an FX rate (replaces the pair's rate of that day); reports convert with it"),
  Command.withExamples([
    {
      command: "admin fx set --base EUR --quote USD --rate 1.08 --day 2026-11-01",
      description: "1 EUR = 1.08 USD from Nov 1st"
    }
  ])
)

const fx = Command.make("fx").pipe(
  Command.withDescription(
    "FX rates: set and list (sitehealth never invents a rate; amounts without one are reported apart)"
  ),
  Command.withSubcommands([
    fxSetCommand,
    Command.make("list", {}, () => execute(fxList)).pipe(
      Command.withDescription("List the stored FX rates")
    )
  ])
)

// ---------------------------------------------------------------------------------------------------
// integrations

const integrationProject = Flag.String("project").pipe(Flag.withDescription("The project's id (prj_…)"))
const integrationProvider = Flag.String("provider").pipe(
  Flag.withDescription("stripe, plausible, google-search-console or demo")
)

const integrationsConnectCommand = Command.make(
  "connect",
  {
    project: integrationProject,
    provider: integrationProvider,
    credentialsFile: Flag.String("credentials-file").pipe(
      Flag.withDescription(
        "A JSON object file of the provider's credentials (an error names any field that is missing); not needed for " +
          "demo"
      ),
      Flag.optional
    ),
    baseUrl: Flag.String("base-url").pipe(
      Flag.withDescription("The provider API's base URL (a sandbox or a local fake)"),
      Flag.optional
    ),
    intervalMinutes: Flag.Int("interval-minutes").pipe(
      Flag.withDescription("Minutes between scheduled syncs (default SITEHEALTH_SYNC_INTERVAL_MINUTES, 60)"),
      Flag.optional
    )
  },
  ({ baseUrl, credentialsFile, intervalMinutes, project, provider }) =>
    execute(integrationsConnect({
      projectId: project,
      provider,
      credentialsFile: optional(credentialsFile),
      baseUrl: optional(baseUrl),
      intervalMinutes: optional(intervalMinutes)
    }))
).pipe(
  Command.withDescription(
    "Check a provider's credentials with one cheap call, store them encrypted and queue a full sync"
  ),
  Command.withExamples([{
    command: "admin integrations connect --project prj_123 --provider stripe --credentials-file stripe.json",
    description: "stripe.json: {\"apiKey\": \"rk_live_…\"}"
  }])
)

const integrationsDisconnectCommand = Command.make(
  "disconnect",
  { project: integrationProject, provider: integrationProvider },
  ({ project, provider }) => execute(integrationsDisconnect({ projectId: project, provider }))
).pipe(Command.withDescription("Delete an integration's credentials and queued syncs (synced data stays)"))

const integrationsListCommand = Command.make(
  "list",
  { project: Flag.String("project").pipe(Flag.withDescription("Only this project's (prj_…)"), Flag.optional) },
  ({ project }) => execute(integrationsList({ projectId: optional(project) }))
).pipe(Command.withDescription("List connected integrations with their status (never a secret)"))

const integrations = Command.make("integrations").pipe(
  Command.withDescription("Integrations: connect, disconnect and list (the API keeps these dashboard-only)"),
  Command.withSubcommands([integrationsConnectCommand, integrationsDisconnectCommand, integrationsListCommand])
)

// ---------------------------------------------------------------------------------------------------
// secret-key

const secretKeyRotateCommand = Command.make(
  "rotate",
  {
    oldKeyFile: Flag.String("old-key-file").pipe(
      Flag.withDescription("A file holding the OLD key (base64 or hex); default: SITEHEALTH_SECRET_KEY_OLD"),
      Flag.optional
    )
  },
  ({ oldKeyFile }) => execute(secretKeyRotate({ oldKeyFile: optional(oldKeyFile) }))
).pipe(
  Command.withDescription(
    "Re-encrypt every stored integration credential from the old key to SITEHEALTH_SECRET_KEY, in one transaction " +
      "(already re-encrypted ones are left; one that neither key opens stops it, nothing changed). See " +
      "docs/operations.md"
  ),
  Command.withExamples([{
    command: "SITEHEALTH_SECRET_KEY=$NEW SITEHEALTH_SECRET_KEY_OLD=$OLD npm run admin -- secret-key rotate",
    description: "After every server and worker runs with both keys"
  }])
)

const secretKey = Command.make("secret-key").pipe(
  Command.withDescription("The key integration credentials are encrypted with: rotate"),
  Command.withSubcommands([secretKeyRotateCommand])
)

// ---------------------------------------------------------------------------------------------------

export const admin = Command.make("admin").pipe(
  Command.withDescription(
    "sitehealth operator CLI. Works on the database directly (DATABASE_URL, or the embedded one in " +
      "SITEHEALTH_DATA_DIR), whether or not the server is running."
  ),
  Command.withSubcommands([accounts, projects, tokens, fx, integrations, secretKey]),
  Command.withGlobalFlags([Json])
)
