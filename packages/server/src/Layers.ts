/** Wiring: the repositories over SQL or in memory (tests), the rate limiter, and the app on top. */
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { AccessRepo } from "./access/AccessRepo.ts"
import { AccountsRepo } from "./accounts/AccountsRepo.ts"
import { BillingRepo } from "./accounts/BillingRepo.ts"
import { BriefingMailRepo } from "./alerts/BriefingMailRepo.ts"
import { AnnotationsRepo } from "./annotations/AnnotationsRepo.ts"
import { AnswersRepo } from "./answers/AnswersRepo.ts"
import { type AppOverrides, appRoutes } from "./App.ts"
import { AuthRepo } from "./dashboard/AuthRepo.ts"
import { OAuthFlowsRepo } from "./dashboard/connections/OAuthFlowsRepo.ts"
import { FailuresRepo } from "./dashboard/FailuresRepo.ts"
import { AccountMembersLive } from "./dashboard/Members.ts"
import { WebsitesRepo } from "./dashboard/WebsitesRepo.ts"
import { ExpensesRepo } from "./expenses/ExpensesRepo.ts"
import { FxRepo } from "./fx/FxRepo.ts"
import { IdempotencyRepo } from "./http/IdempotencyRepo.ts"
import { RateLimiter } from "./http/RateLimiter.ts"
import { Readiness } from "./http/Readiness.ts"
import { IntegrationsRepo } from "./integrations/IntegrationsRepo.ts"
import { SyncQueue } from "./integrations/SyncQueue.ts"
import { MetricsRepo } from "./metrics/MetricsRepo.ts"
import { OAuthRepo } from "./oauth/OAuthRepo.ts"
import { PaymentsRepo } from "./payments/PaymentsRepo.ts"
import { AppConfig, type AppConfigShape } from "./platform/Config.ts"
import { ProjectsRepo } from "./projects/ProjectsRepo.ts"
import { JobsRepo } from "./recompute/JobsRepo.ts"
import { SearchRepo } from "./search/SearchRepo.ts"
import { SignalsRepo } from "./snapshots/SignalsRepo.ts"
import { SnapshotsRepo } from "./snapshots/SnapshotsRepo.ts"
import { MemoryDb } from "./store/MemoryDb.ts"
import { TokensRepo } from "./tokens/TokensRepo.ts"
import { TrafficRepo } from "./traffic/TrafficRepo.ts"
import { WebhooksMemory } from "./webhooks/WebhooksMemory.ts"
import { WebhooksRepo } from "./webhooks/WebhooksRepo.ts"

/**
 * The repositories that come in both kinds and stand alone, SQL or in memory: one list, so the two sets cannot
 * drift apart. The ones built on others follow in each set.
 */
const standalone = <K extends "sql" | "memory">(kind: K) =>
  [
    AccountsRepo[kind],
    ProjectsRepo[kind],
    TokensRepo[kind],
    ExpensesRepo[kind],
    AnnotationsRepo[kind],
    MetricsRepo[kind],
    TrafficRepo[kind],
    SearchRepo[kind],
    FxRepo[kind],
    SnapshotsRepo[kind],
    SignalsRepo[kind],
    JobsRepo[kind],
    IdempotencyRepo[kind],
    Readiness[kind],
    AuthRepo[kind],
    FailuresRepo[kind],
    OAuthFlowsRepo[kind],
    OAuthRepo[kind],
    BriefingMailRepo[kind]
  ] as const

/** Needs a SqlClient. */
export const SqlRepos = Layer.mergeAll(
  ...standalone("sql"),
  IntegrationsRepo.sql.pipe(Layer.provideMerge(SyncQueue.sql), Layer.provide(WebhooksRepo.sql)),
  PaymentsRepo.sql.pipe(Layer.provide(FxRepo.sql)), // layers are memoised by reference: the same FxRepo
  AccessRepo.sql,
  AnswersRepo.sql,
  WebsitesRepo.sql,
  BillingRepo.sql,
  WebhooksRepo.sql,
  AccountMembersLive.pipe(Layer.provide([AuthRepo.sql, ProjectsRepo.sql]))
)

/** Tests only: the same repositories over maps. */
export const MemoryRepos = Layer.mergeAll(
  ...standalone("memory"),
  IntegrationsRepo.memory.pipe(Layer.provideMerge(SyncQueue.memory), Layer.provide(WebhooksMemory)),
  PaymentsRepo.memory.pipe(Layer.provide(FxRepo.memory)), // the same FxRepo.memory instance (memoised)
  // Composed from the repositories above (the same memoised instances), as the SQL ones join their tables.
  AnswersRepo.memory,
  AccessRepo.memory.pipe(
    Layer.provide([TokensRepo.memory, ProjectsRepo.memory, SnapshotsRepo.memory, JobsRepo.memory, AnswersRepo.memory])
  ),
  WebsitesRepo.memory.pipe(Layer.provide(ProjectsRepo.memory)),
  BillingRepo.memory, // over MemoryDb: writes the accounts' entitlement columns
  WebhooksMemory,
  AccountMembersLive.pipe(Layer.provide([AuthRepo.memory, ProjectsRepo.memory]))
).pipe(Layer.provideMerge(MemoryDb.layer))

export const rateLimiterFor = (config: AppConfigShape) =>
  config.redisUrl === null
    ? RateLimiter.memory(config.rateLimit)
    : RateLimiter.redis(Redacted.value(config.redisUrl), config.rateLimit)

/** The HTTP app over the given repositories (and, in tests, with some of its layers swapped). */
export const appLayer = <A, E, R>(config: AppConfigShape, repos: Layer.Layer<A, E, R>, overrides: AppOverrides = {}) =>
  appRoutes(overrides).pipe(
    Layer.provide(rateLimiterFor(config)),
    Layer.provide(AppConfig.layer(config)),
    Layer.provideMerge(repos)
  )
