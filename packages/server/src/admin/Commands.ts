/**
 * What the operator CLI does, independent of how argv is parsed. Each command first validates its
 * input without touching the database (so a typo never starts Postgres), and answers the work to do
 * on the repositories: `Effect<Effect<Output, AdminError, Repos>, AdminError>`. The `Output` carries
 * the JSON object and its human-readable text. Failures are `AdminError`s with a message meant for
 * the operator and a machine-readable type.
 */
import type { ProjectId } from "@sitehealth/domain/Common"
import { type Permission, PERMISSIONS } from "@sitehealth/domain/Permissions"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { AccountsRepo, isEntitled } from "../accounts/AccountsRepo.ts"
import { createAccount, createProject, mintToken } from "../accounts/Provisioning.ts"
import type { FxRepo } from "../fx/FxRepo.ts"
import type { IntegrationsRepo } from "../integrations/IntegrationsRepo.ts"
import type { SyncQueue } from "../integrations/SyncQueue.ts"
import type { PaymentsRepo } from "../payments/PaymentsRepo.ts"
import { canonicalCurrency, canonicalDomain, canonicalTimezone } from "../projects/Parse.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { iso, isoOrNull, tokenMetadata } from "../store/Present.ts"
import type { AccountRecord, ProjectRecord, SubscriptionStatus } from "../store/Records.ts"
import { TokensRepo } from "../tokens/TokensRepo.ts"

export type AdminErrorType =
  | "invalid_argument"
  | "not_found"
  | "usage"
  | "config"
  | "database"
  | "internal"
  | "credentials" // the provider rejected or could not check integration credentials

export class AdminError extends Data.TaggedError("AdminError")<{
  readonly message: string
  readonly type: AdminErrorType
}> {}

const invalid = (message: string) => new AdminError({ message, type: "invalid_argument" })
const notFound = (message: string) => new AdminError({ message, type: "not_found" })

/** What a command answers: exactly one JSON object for `--json`, and text for people. */
export interface Output {
  readonly json: Record<string, unknown>
  readonly text: string
}

// ---------------------------------------------------------------------------------------------------
// Validation

export const MAX_NAME_LENGTH = 100
export const MAX_TRIAL_DAYS = 3650

export const parseName = (label: string, raw: string) =>
  Effect.suspend(() => {
    const name = raw.trim()
    if (name.length === 0) return Effect.fail(invalid(`${label} must not be empty`))
    if (name.length > MAX_NAME_LENGTH) {
      return Effect.fail(invalid(`${label} must be at most ${MAX_NAME_LENGTH} characters, got ${name.length}`))
    }
    return Effect.succeed(name)
  })

export const parseTrialDays = (days: number) =>
  Number.isInteger(days) && days >= 0 && days <= MAX_TRIAL_DAYS
    ? Effect.succeed(days)
    : Effect.fail(invalid(`--trial-days must be a whole number of days between 0 and ${MAX_TRIAL_DAYS}, got ${days}`))

const ISO_SHAPE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/i

/**
 * An ISO 8601 date (`2025-01-31`, midnight UTC) or instant with an offset (`2025-01-31T12:00:00Z`).
 * A local time without an offset is refused: it would mean different instants on different machines.
 */
export const parseInstant = (flag: string, raw: string) =>
  Effect.suspend(() => {
    const text = raw.trim()
    const m = ISO_SHAPE.exec(text)
    const hint =
      `${flag} must be an ISO 8601 date or instant with an offset, e.g. 2025-01-31 or 2025-01-31T12:00:00Z; got ` +
      `"${raw}"`
    if (m === null) return Effect.fail(invalid(hint))
    const [, y, mo, d, h, mi, s] = m
    const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)))
    const realDay = day.getUTCFullYear() === Number(y) && day.getUTCMonth() === Number(mo) - 1 &&
      day.getUTCDate() === Number(d)
    const realTime = h === undefined || (Number(h) < 24 && Number(mi) < 60 && (s === undefined || Number(s) < 60))
    const t = Date.parse(h === undefined ? `${y}-${mo}-${d}T00:00:00Z` : text.replace(" ", "T"))
    if (!realDay || !realTime || Number.isNaN(t)) return Effect.fail(invalid(hint))
    return Effect.succeed(new Date(t))
  })

/** An IANA time zone Node knows (or UTC), in its canonical spelling. */
export const parseTimezone = (raw: string) =>
  Effect.suspend(() => {
    const zone = canonicalTimezone(raw)
    return zone === null
      ? Effect.fail(
        invalid(`Unknown time zone "${raw}": use an IANA name such as Europe/Berlin, America/New_York or UTC`)
      )
      : Effect.succeed(zone)
  })

/** An ISO 4217 currency code Node knows, upper case. */
export const parseCurrency = (raw: string) =>
  Effect.suspend(() => {
    const code = canonicalCurrency(raw)
    return code === null
      ? Effect.fail(invalid(`Unknown currency "${raw}": use an ISO 4217 code such as USD, EUR or GBP`))
      : Effect.succeed(code)
  })

/** A bare host name (`shop.example.com`), lower case; no scheme, path or port. */
export const parseDomain = (raw: string) =>
  Effect.suspend(() => {
    const parsed = canonicalDomain(raw)
    if ("domain" in parsed) return Effect.succeed(parsed.domain)
    return Effect.fail(invalid(
      parsed.problem === "not_bare"
        ? `--domain must be a bare host name such as example.com (no scheme, path or port), got "${raw}"`
        : `--domain must be a host name such as example.com, got "${raw}"`
    ))
  })

/** A comma-separated list: trimmed, empty entries dropped, duplicates removed, order kept. */
export const splitList = (raw: string): Array<string> => [
  ...new Set(raw.split(",").map((s) => s.trim()).filter((s) => s.length > 0))
]

export const parsePermissions = (raw: string) =>
  Effect.suspend(() => {
    const requested = splitList(raw)
    if (requested.length === 0) {
      return Effect.fail(invalid(`--permissions must name at least one of: ${PERMISSIONS.join(", ")}`))
    }
    const unknown = requested.filter((p) => !(PERMISSIONS as ReadonlyArray<string>).includes(p))
    if (unknown.length > 0) {
      return Effect.fail(
        invalid(
          `Unknown permission${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}; known: ${PERMISSIONS.join(", ")}`
        )
      )
    }
    return Effect.succeed(requested as Array<Permission>)
  })

// ---------------------------------------------------------------------------------------------------
// Presentation

export interface AccountView {
  readonly id: string
  readonly name: string
  readonly trialEndsAt: string
  readonly subscriptionStatus: SubscriptionStatus
  readonly subscriptionUntil: string | null
  readonly createdAt: string
  readonly entitled: boolean
}

export const accountView = (a: AccountRecord, now: Date): AccountView => ({
  id: a.id,
  name: a.name,
  trialEndsAt: iso(a.trialEndsAt),
  subscriptionStatus: a.subscriptionStatus,
  subscriptionUntil: isoOrNull(a.subscriptionUntil),
  createdAt: iso(a.createdAt),
  entitled: isEntitled(a, now)
})

export const projectView = (p: ProjectRecord) => ({
  id: p.id,
  accountId: p.accountId,
  name: p.name,
  domain: p.domain,
  timezone: p.timezone,
  currency: p.currency,
  createdAt: iso(p.createdAt)
})

const accountText = (a: AccountView, now: Date): string => {
  const trialEnded = Date.parse(a.trialEndsAt) <= now.getTime()
  const subscription = a.subscriptionStatus === "none"
    ? "none"
    : `${a.subscriptionStatus}${a.subscriptionUntil === null ? "" : ` until ${a.subscriptionUntil}`}`
  return [
    `Account ${a.id}  ${a.name}`,
    `  trial:         ${trialEnded ? "ended" : "ends"} ${a.trialEndsAt}`,
    `  subscription:  ${subscription}`,
    `  entitled:      ${a.entitled ? "yes" : "no (API requests get 402)"}`,
    `  created:       ${a.createdAt}`
  ].join("\n")
}

const tokenText = (t: ReturnType<typeof tokenMetadata>): string =>
  [
    `Token ${t.id}  ${t.name}  (${t.prefix})`,
    `  status:        ${t.status}${t.revokedAt === null ? "" : ` at ${t.revokedAt}`}`,
    `  projects:      ${t.projects === null ? "all projects of the account" : t.projects.join(", ")}`,
    `  permissions:   ${t.permissions.join(", ")}`,
    `  expires:       ${t.expiresAt ?? "never"}`,
    `  created:       ${t.createdAt}`
  ].join("\n")

const nowDate = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

const noAccount = (accountId: string) => notFound(`No account with id ${accountId}`)

/** An account as the command answers it: the view as JSON, and as text under `title`. */
const accountOutput = (title: string, account: AccountRecord) =>
  Effect.map(nowDate, (now): Output => {
    const view = accountView(account, now)
    return { json: { ...view }, text: `${title}\n${accountText(view, now)}` }
  })

/** The account a change returned, or not_found when there is no such account. */
const changedAccount = (title: string, accountId: string, updated: AccountRecord | null) =>
  updated === null ? Effect.fail(noAccount(accountId)) : accountOutput(title, updated)

const requireAccount = (accountId: string) =>
  Effect.gen(function*() {
    const accounts = yield* AccountsRepo
    const account = yield* accounts.find(accountId)
    if (account === null) return yield* Effect.fail(noAccount(accountId))
    return account
  })

// ---------------------------------------------------------------------------------------------------
// Commands

/** A command: validation (no database), answering the work to run against the database. */
export type AdminCommand = Effect.Effect<Effect.Effect<Output, AdminError, Repos>, AdminError>
/**
 * What withDatabase (Cli.ts) provides: the repositories, and the SqlClient for work across tables (secret-key rotate).
 */
export type Repos =
  | AccountsRepo
  | ProjectsRepo
  | TokensRepo
  | FxRepo
  | PaymentsRepo
  | IntegrationsRepo
  | SyncQueue
  | SqlClient.SqlClient

export const accountsCreate = (input: { readonly name: string; readonly trialDays: number }): AdminCommand =>
  Effect.gen(function*() {
    const name = yield* parseName("--name", input.name)
    const trialDays = yield* parseTrialDays(input.trialDays)
    return Effect.flatMap(createAccount({ name, trialDays }), (account) => accountOutput("Created", account))
  })

export const accountsList: AdminCommand = Effect.succeed(Effect.gen(function*() {
  const accounts = yield* AccountsRepo
  const now = yield* nowDate
  const views = (yield* accounts.list()).map((a) => accountView(a, now))
  const text = views.length === 0
    ? "No accounts. Create one with: npm run admin -- accounts create --name \"Acme\""
    : [
      `${views.length} account${views.length === 1 ? "" : "s"}:`,
      ...views.map((a) =>
        `  ${a.id}  ${
          a.entitled ? "entitled    " : "not entitled"
        }  trial ${a.trialEndsAt}  subscription ${a.subscriptionStatus}${
          a.subscriptionUntil === null ? "" : ` until ${a.subscriptionUntil}`
        }  ${a.name}`
      )
    ].join("\n")
  return { json: { accounts: views }, text }
}))

export const accountsTrial = (input: { readonly accountId: string; readonly endsAt: string }): AdminCommand =>
  Effect.gen(function*() {
    const endsAt = yield* parseInstant("--ends-at", input.endsAt)
    return Effect.flatMap(AccountsRepo, (accounts) => accounts.setTrial(input.accountId, endsAt)).pipe(
      Effect.flatMap((updated) => changedAccount("Trial updated", input.accountId, updated))
    )
  })

export const accountsSubscription = (input: {
  readonly accountId: string
  readonly status: SubscriptionStatus
  readonly until: string | undefined
}): AdminCommand =>
  Effect.gen(function*() {
    const until = input.until === undefined ? null : yield* parseInstant("--until", input.until)
    if (input.status === "none" && until !== null) {
      return yield* Effect.fail(invalid("--until makes no sense with --status none; leave it out"))
    }
    return Effect.flatMap(AccountsRepo, (accounts) => accounts.setSubscription(input.accountId, input.status, until))
      .pipe(
        Effect.flatMap((updated) => changedAccount("Subscription updated", input.accountId, updated))
      )
  })

export const projectsCreate = (input: {
  readonly accountId: string
  readonly name: string
  readonly domain: string
  readonly timezone: string | undefined
  readonly currency: string | undefined
}): AdminCommand =>
  Effect.gen(function*() {
    const name = yield* parseName("--name", input.name)
    const domain = yield* parseDomain(input.domain)
    const timezone = input.timezone === undefined ? "UTC" : yield* parseTimezone(input.timezone)
    const currency = input.currency === undefined ? "USD" : yield* parseCurrency(input.currency)
    return Effect.gen(function*() {
      yield* requireAccount(input.accountId)
      const project = projectView(
        yield* createProject({ accountId: input.accountId, name, domain, timezone, currency })
      )
      return {
        json: { ...project },
        text: [
          `Created project ${project.id}  ${project.name}`,
          `  account:   ${project.accountId}`,
          `  domain:    ${project.domain}`,
          `  timezone:  ${project.timezone}`,
          `  currency:  ${project.currency}`,
          `  created:   ${project.createdAt}`
        ].join("\n")
      }
    })
  })

export const projectsDelete = (projectId: string): AdminCommand =>
  Effect.succeed(Effect.gen(function*() {
    const projects = yield* ProjectsRepo
    if (!(yield* projects.remove(projectId))) return yield* Effect.fail(notFound(`No project with id ${projectId}`))
    return {
      json: { deleted: true, projectId },
      text: `Deleted project ${projectId} and everything stored for it`
    }
  }))

export const tokensMint = (input: {
  readonly accountId: string
  readonly name: string | undefined
  readonly projects: string | undefined
  readonly permissions: string | undefined
  readonly expiresAt: string | undefined
}): AdminCommand =>
  Effect.gen(function*() {
    const name = input.name === undefined ? undefined : yield* parseName("--name", input.name)
    const permissions = input.permissions === undefined ? undefined : yield* parsePermissions(input.permissions)
    const projectIds = input.projects === undefined ? null : splitList(input.projects)
    if (projectIds !== null && projectIds.length === 0) {
      return yield* Effect.fail(
        invalid("--projects must name at least one project id (leave it out for every project)")
      )
    }
    const expiresAt = input.expiresAt === undefined ? null : yield* parseInstant("--expires-at", input.expiresAt)
    if (expiresAt !== null && expiresAt.getTime() <= (yield* nowDate).getTime()) {
      return yield* Effect.fail(invalid("--expires-at must be in the future"))
    }
    return Effect.gen(function*() {
      const account = yield* requireAccount(input.accountId)
      let granted: ReadonlyArray<ProjectId> | null = null
      if (projectIds !== null) {
        const projects = yield* ProjectsRepo
        const existing = new Map<string, ProjectId>(
          (yield* projects.existing(account.id, projectIds)).map((id) => [id, id])
        )
        const foreign = projectIds.filter((p) => !existing.has(p))
        if (foreign.length > 0) {
          return yield* Effect.fail(notFound(`Not a project of account ${input.accountId}: ${foreign.join(", ")}`))
        }
        granted = projectIds.flatMap((p) => existing.get(p) ?? [])
      }
      const minted = yield* mintToken({
        accountId: account.id,
        projects: granted,
        expiresAt,
        ...(name === undefined ? {} : { name }),
        ...(permissions === undefined ? {} : { permissions })
      })
      const token = tokenMetadata(minted.token, yield* nowDate)
      return {
        json: { token, secret: minted.secret },
        text: [
          `Minted for account ${input.accountId}:`,
          tokenText(token),
          "",
          "  Secret (shown once, store it now; only its SHA-256 is kept):",
          "",
          `    ${minted.secret}`,
          ""
        ].join("\n")
      }
    })
  })

export const tokensRevoke = (tokenId: string): AdminCommand =>
  Effect.succeed(Effect.gen(function*() {
    const tokens = yield* TokensRepo
    const token = yield* tokens.findById(tokenId)
    if (token === null) return yield* Effect.fail(notFound(`No token with id ${tokenId}`))
    const now = yield* nowDate
    const revoked = yield* tokens.revoke(token.accountId, token.id, now)
    if (revoked === null) return yield* Effect.fail(notFound(`No token with id ${tokenId}`))
    const view = tokenMetadata(revoked, now)
    return {
      json: { ...view },
      text: `${token.revokedAt === null ? "Revoked" : "Already revoked (unchanged)"}\n${tokenText(view)}`
    }
  }))
