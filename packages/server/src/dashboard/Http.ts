/** The dashboard API's handlers: auth, websites, tokens, account. */
import type { Website } from "@sitehealth/domain/Dashboard"
import { CurrentDashboardSession, DashboardApi } from "@sitehealth/domain/DashboardApi"
import { BadRequest, Conflict, notFound } from "@sitehealth/domain/Errors"
import type { Permission } from "@sitehealth/domain/Permissions"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as Layer from "effect/Layer"
import { createProject, mintToken } from "../accounts/Provisioning.ts"
import { canonicalCurrency, canonicalDomain, canonicalTimezone } from "../projects/Parse.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { projectView } from "../projects/View.ts"
import { tokenMetadata } from "../store/Present.ts"
import type { ProjectRecord, TokenRecord } from "../store/Records.ts"
import { TokensRepo } from "../tokens/TokensRepo.ts"
import { revokeWithEvent } from "../webhooks/TokenRevoked.ts"
import { WebhooksRepo } from "../webhooks/WebhooksRepo.ts"
import { DashboardAccountHttp } from "./AccountHttp.ts"
import * as Auth from "./Auth.ts"
import { AuthRepo } from "./AuthRepo.ts"
import { WebsitesRepo } from "./WebsitesRepo.ts"

const website = (p: ProjectRecord): Website => projectView(p)

const dashboardToken = (t: TokenRecord, now: Date) => {
  const { accountId: _accountId, projects, ...rest } = tokenMetadata(t, now)
  return { ...rest, websites: projects }
}

const fieldError = (path: string, message: string) =>
  new BadRequest({
    message: `Invalid request: ${path}: ${message}`,
    type: "invalid_request",
    issues: [{ path, message }]
  })

const checked = (value: string | null, path: string, message: string) =>
  value === null ? Effect.fail(fieldError(path, message)) : Effect.succeed(value)

const domainOf = (raw: string) => {
  const parsed = canonicalDomain(raw)
  return checked(
    "domain" in parsed ? parsed.domain : null,
    "body.domain",
    "must be a bare host name such as example.com (no scheme, path or port)"
  )
}
const timezoneOf = (raw: string) =>
  checked(canonicalTimezone(raw), "body.timezone", "must be an IANA time zone such as Europe/Berlin or UTC")
const currencyOf = (raw: string) =>
  checked(canonicalCurrency(raw), "body.currency", "must be an ISO 4217 code such as USD")

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
const SESSION_ID = /^ses_[A-Za-z0-9]{1,64}$/
const ALL_WEBSITES = { limit: 100_000, after: null } as const

export const DashboardAuthHttp = HttpApiBuilder.group(DashboardApi, "auth", (h) =>
  h
    .handle("signUp", ({ payload }) => Auth.signUp(payload))
    .handle("logIn", ({ payload }) => Auth.logIn(payload))
    .handle("logInSecondFactor", ({ payload }) => Auth.logInSecondFactor(payload))
    .handle("requestPasswordReset", ({ payload }) => Auth.requestPasswordReset(payload))
    .handle("resetPassword", ({ payload }) => Auth.resetPassword(payload))
    .handle("verifyEmail", ({ payload }) => Auth.verifyEmail(payload))
    .handle("logOut", () =>
      Effect.gen(function*() {
        const session = yield* CurrentDashboardSession
        const repo = yield* AuthRepo
        const user = yield* repo.findUser(session.userId)
        if (user !== null) yield* repo.deleteSession(user.id, session.sessionId)
        yield* Auth.setSessionCookie(null)
        return { loggedOut: true as const }
      }))
    .handle("session", () =>
      Effect.gen(function*() {
        return Auth.sessionView(yield* CurrentDashboardSession)
      }))
    .handle("listSessions", () =>
      Effect.gen(function*() {
        const session = yield* CurrentDashboardSession
        const repo = yield* AuthRepo
        const user = yield* repo.findUser(session.userId)
        const sessions = user === null ? [] : yield* repo.listSessions(user.id, yield* now)
        return {
          sessions: sessions.map((s) => ({
            id: s.id as typeof session.sessionId,
            createdAt: s.createdAt.toISOString(),
            lastSeenAt: s.lastSeenAt.toISOString(),
            userAgent: s.userAgent,
            address: s.address,
            current: s.id === session.sessionId
          }))
        }
      }))
    .handle("revokeSession", ({ params }) =>
      Effect.gen(function*() {
        const session = yield* CurrentDashboardSession
        const repo = yield* AuthRepo
        const user = yield* repo.findUser(session.userId)
        // A session id is ours (`ses_` and base62): anything else is no session, without asking the database.
        if (user === null || !SESSION_ID.test(params.id) || !(yield* repo.deleteSession(user.id, params.id))) {
          return yield* notFound("Session")
        }
        if (params.id === session.sessionId) yield* Auth.setSessionCookie(null)
        return { revoked: 1 }
      }))
    .handle("logOutOtherSessions", () =>
      Effect.gen(function*() {
        const session = yield* CurrentDashboardSession
        const repo = yield* AuthRepo
        const user = yield* repo.findUser(session.userId)
        return { revoked: user === null ? 0 : yield* repo.deleteSessionsOf(user.id, session.sessionId) }
      })))

export const DashboardWebsitesHttp = HttpApiBuilder.group(DashboardApi, "websites", (h) =>
  h
    .handle("list", () =>
      Effect.gen(function*() {
        const session = yield* CurrentDashboardSession
        const page = yield* (yield* ProjectsRepo).list(session.accountId, null, ALL_WEBSITES)
        return { websites: page.items.map(website) }
      }))
    .handle("create", ({ payload }) =>
      Effect.gen(function*() {
        const session = yield* CurrentDashboardSession
        const domain = yield* domainOf(payload.domain)
        const timezone = yield* timezoneOf(payload.timezone)
        const currency = yield* currencyOf(payload.currency)
        return website(
          yield* createProject({ accountId: session.accountId, name: payload.name, domain, timezone, currency })
        )
      }))
    .handle("update", ({ params, payload }) =>
      Effect.gen(function*() {
        const session = yield* CurrentDashboardSession
        const updated = yield* (yield* WebsitesRepo).update(session.accountId, params.id, {
          ...(payload.name === undefined ? {} : { name: payload.name }),
          ...(payload.domain === undefined ? {} : { domain: yield* domainOf(payload.domain) }),
          ...(payload.timezone === undefined ? {} : { timezone: yield* timezoneOf(payload.timezone) }),
          ...(payload.currency === undefined ? {} : { currency: yield* currencyOf(payload.currency) })
        })
        if (updated === null) return yield* notFound("Website")
        return website(updated)
      }))
    .handle("delete", ({ params, payload }) =>
      Effect.gen(function*() {
        const session = yield* CurrentDashboardSession
        const project = yield* (yield* ProjectsRepo).find(params.id)
        if (project === null || project.accountId !== session.accountId) return yield* notFound("Website")
        if (payload.confirmDomain.trim().toLowerCase() !== project.domain) {
          return yield* new BadRequest({
            message: `Type the website's domain (${project.domain}) to confirm its deletion`,
            type: "confirmation_mismatch"
          })
        }
        const removed = yield* (yield* WebsitesRepo).remove(session.accountId, project.id)
        if (removed === null) return yield* notFound("Website")
        return { deleted: true as const, id: project.id, tokensNarrowed: removed.tokensNarrowed }
      })))

export const DashboardTokensHttp = HttpApiBuilder.group(DashboardApi, "tokens", (h) =>
  h
    .handle("list", () =>
      Effect.gen(function*() {
        const session = yield* CurrentDashboardSession
        const page = yield* (yield* TokensRepo).list(session.accountId, ALL_WEBSITES)
        const at = yield* now
        return { tokens: page.items.map((t) => dashboardToken(t, at)) }
      }))
    .handle("create", ({ payload }) =>
      Effect.gen(function*() {
        const session = yield* CurrentDashboardSession
        const at = yield* now
        if (payload.websites !== null) {
          const wanted = [...new Set(payload.websites)]
          const owned = yield* (yield* ProjectsRepo).existing(session.accountId, wanted)
          if (owned.length !== wanted.length) return yield* notFound("Website")
        }
        let expiresAt: Date | null = null
        if (payload.expiresAt !== undefined && payload.expiresAt !== null) {
          expiresAt = new Date(payload.expiresAt)
          if (Number.isNaN(expiresAt.getTime()) || expiresAt <= at) {
            return yield* fieldError("body.expiresAt", "must be an ISO 8601 instant in the future")
          }
        }
        const minted = yield* mintToken({
          accountId: session.accountId,
          name: payload.name,
          projects: payload.websites === null ? null : [...new Set(payload.websites)],
          permissions: [...new Set<Permission>(payload.permissions)],
          expiresAt
        })
        return { token: dashboardToken(minted.token, at), secret: minted.secret }
      }))
    .handle("revoke", ({ params }) =>
      Effect.gen(function*() {
        const session = yield* CurrentDashboardSession
        const tokens = yield* TokensRepo
        const at = yield* now
        const existing = yield* tokens.find(session.accountId, params.id)
        if (existing === null) return yield* notFound("Token")
        if (existing.revokedAt !== null) {
          return yield* new Conflict({ message: "This token is already revoked", type: "already_revoked" })
        }
        const revoke = revokeWithEvent({ tokens, projects: yield* ProjectsRepo, webhooks: yield* WebhooksRepo })
        const revoked = yield* revoke(session.accountId, existing, at)
        if (revoked === null) return yield* notFound("Token")
        return { revoked: true as const, token: dashboardToken(revoked, at) }
      })))

export const DashboardHttp = Layer.mergeAll(
  DashboardAuthHttp,
  DashboardWebsitesHttp,
  DashboardTokensHttp,
  DashboardAccountHttp
)
