/**
 * What the dashboard (here: the operator CLI, the demo seed and the tests) does that the API does not:
 * create accounts and projects, mint tokens without a calling token, delete projects.
 */
import { type Permission, PERMISSIONS } from "@sitehealth/domain/Permissions"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { idOf, newId } from "../store/Ids.ts"
import type { TokenRecord } from "../store/Records.ts"
import { generateSecret, hashSecret } from "../store/TokenSecret.ts"
import { TokensRepo } from "../tokens/TokensRepo.ts"
import { AccountsRepo } from "./AccountsRepo.ts"

/**
 * Callers here (the operator CLI, the seed, tests) pass ids they got from us or checked already: one that is
 * not even shaped like an id is a bug of theirs, a defect, as the foreign-key violation it would cause.
 */
const accountIdOf = (s: string) => {
  const id = idOf("acc", s)
  return id === null ? Effect.die(new Error(`not an account id: ${JSON.stringify(s)}`)) : Effect.succeed(id)
}
const projectIdOf = (s: string) => {
  const id = idOf("prj", s)
  return id === null ? Effect.die(new Error(`not a project id: ${JSON.stringify(s)}`)) : Effect.succeed(id)
}

export const TRIAL_DAYS = 14
const DAY_MS = 86_400_000

export const createAccount = (input: { readonly name: string; readonly trialDays?: number }) =>
  Effect.gen(function*() {
    const accounts = yield* AccountsRepo
    const now = yield* Clock.currentTimeMillis
    return yield* accounts.create({
      name: input.name,
      now: new Date(now),
      trialEndsAt: new Date(now + (input.trialDays ?? TRIAL_DAYS) * DAY_MS)
    })
  })

export const createProject = (input: {
  readonly accountId: string
  readonly name: string
  readonly domain: string
  readonly timezone?: string
  readonly currency?: string
}) =>
  Effect.gen(function*() {
    const projects = yield* ProjectsRepo
    const now = yield* Clock.currentTimeMillis
    return yield* projects.create({
      accountId: yield* accountIdOf(input.accountId),
      name: input.name,
      domain: input.domain,
      timezone: input.timezone ?? "UTC",
      currency: input.currency ?? "USD",
      now: new Date(now)
    })
  })

export const mintToken = (input: {
  readonly accountId: string
  readonly name?: string
  readonly projects?: ReadonlyArray<string> | null
  readonly permissions?: ReadonlyArray<Permission>
  readonly expiresAt?: Date | null
}) =>
  Effect.gen(function*() {
    const tokens = yield* TokensRepo
    const now = yield* Clock.currentTimeMillis
    const secret = generateSecret()
    const token: TokenRecord = yield* tokens.insert({
      id: newId("tok"),
      accountId: yield* accountIdOf(input.accountId),
      name: input.name ?? "API token",
      secretSha256: hashSecret(secret),
      last4: secret.slice(-4),
      projects: input.projects === undefined || input.projects === null
        ? null
        : yield* Effect.forEach(input.projects, projectIdOf),
      permissions: input.permissions ?? [...PERMISSIONS],
      createdAt: new Date(now),
      lastUsedAt: null,
      expiresAt: input.expiresAt ?? null,
      revokedAt: null
    })
    return { token, secret }
  })
