/** Handlers of the tokens group: list metadata, the caller's own, mint and revoke behind the confirmation gate. */
import { SiteHealthApi, TokensApi } from "@sitehealth/domain/Api"
import { CurrentPrincipal, type Principal } from "@sitehealth/domain/Authentication"
import { DEFAULT_PAGE_SIZE } from "@sitehealth/domain/Common"
import { badRequest, Conflict, Forbidden, notFound, Unauthorized } from "@sitehealth/domain/Errors"
import type { CreateTokenPayload, TokenMetadata } from "@sitehealth/domain/Tokens"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as Layer from "effect/Layer"
import { withApiMiddlewaresOnly } from "../http/Middleware.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { CSV_PAGE_SIZE, csvRequestOf, csvResponse } from "../reports/Csv.ts"
import { tokensTable } from "../reports/CsvTables.ts"
import { decodeCursor } from "../store/Cursor.ts"
import { newId } from "../store/Ids.ts"
import { isoOrNull, tokenMetadata } from "../store/Present.ts"
import type { Page, PageRequest, TokenRecord } from "../store/Records.ts"
import { generateSecret, hashSecret } from "../store/TokenSecret.ts"
import { TokensRepo } from "../tokens/TokensRepo.ts"
import { revokeWithEvent } from "../webhooks/TokenRevoked.ts"
import { WebhooksRepo } from "../webhooks/WebhooksRepo.ts"
import { expiryWithin, missingPermissions, projectsWithin } from "./TokensPolicy.ts"

type Request<Name extends keyof typeof TokensApi.endpoints> = (typeof TokensApi.endpoints)[Name]["~Request"]

const escalation = (message: string) => new Forbidden({ message, type: "escalation" })

const tokensOperations = Effect.gen(function*() {
  const tokens = yield* TokensRepo
  const projects = yield* ProjectsRepo
  const csvTokens = csvRequestOf(TokensApi.endpoints.listTokens)
  const revoke = revokeWithEvent({ tokens, projects, webhooks: yield* WebhooksRepo })

  /** What would be minted: the request resolved against the caller's own access, or the reason it can't. */
  const resolveDraft = (principal: Principal, body: CreateTokenPayload | undefined, now: Date) =>
    Effect.gen(function*() {
      const requestedProjects = body?.projects === undefined
        ? principal.projects
        : body.projects === null
        ? null
        : [...new Set(body.projects)]
      if (requestedProjects !== null) {
        const existing = yield* projects.existing(principal.accountId, requestedProjects)
        const unknown = requestedProjects.filter((p) => !existing.includes(p))
        if (unknown.length > 0) return yield* Effect.fail(notFound(`Project ${unknown[0]}`))
      }
      if (!projectsWithin(principal, requestedProjects)) {
        return yield* Effect.fail(
          escalation(
            requestedProjects === null
              ? "This token is limited to some projects; it cannot mint a token for every project"
              : "A token can only be given projects the calling token has"
          )
        )
      }
      const permissions = body?.permissions === undefined ? [...principal.permissions] : [...new Set(body.permissions)]
      const missing = missingPermissions(principal, permissions)
      if (missing.length > 0) {
        return yield* Effect.fail(escalation(`The calling token lacks ${missing.join(", ")}, so it cannot grant it`))
      }
      let expiresAt: Date | null
      if (body?.expiresAt === undefined) {
        expiresAt = principal.expiresAt
      } else if (body.expiresAt === null) {
        expiresAt = null
      } else {
        const t = Date.parse(body.expiresAt)
        // An instant needs its offset: "2027-01-31T00:00" would be read in the server's own zone.
        if (
          Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(body.expiresAt)
        ) {
          return yield* Effect.fail(
            badRequest("expiresAt must be an ISO 8601 instant with Z or an offset, e.g. 2027-01-31T00:00:00Z")
          )
        }
        if (t <= now.getTime()) return yield* Effect.fail(badRequest("expiresAt must be in the future"))
        expiresAt = new Date(t)
      }
      if (!expiryWithin(principal, expiresAt)) {
        return yield* Effect.fail(escalation("A token cannot outlive the token that mints it"))
      }
      return {
        name: body?.name ?? "API token",
        projects: requestedProjects,
        permissions,
        expiresAt
      }
    })

  return {
    listTokens: ({ query }: Pick<Request<"listTokens">, "query">) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const after = yield* decodeCursor(query.cursor)
        const now = new Date(yield* Clock.currentTimeMillis)
        if ((yield* csvTokens) !== null) {
          // Every token the caller may list, not a page.
          const all: Array<TokenMetadata> = []
          let next: PageRequest["after"] = null
          do {
            const page: Page<TokenRecord> = yield* tokens.list(
              principal.accountId,
              { limit: CSV_PAGE_SIZE, after: next },
              principal.projects
            )
            all.push(...page.items.map((t) => tokenMetadata(t, now)))
            next = page.nextCursor === null ? null : yield* decodeCursor(page.nextCursor)
          } while (next !== null)
          return csvResponse(tokensTable(all), "tokens")
        }
        // A token scoped to some projects sees only the tokens whose scope is within its own (api/TokensPolicy.ts).
        const page = yield* tokens.list(
          principal.accountId,
          { limit: query.limit ?? DEFAULT_PAGE_SIZE, after },
          principal.projects
        )
        return { tokens: page.items.map((t) => tokenMetadata(t, now)), nextCursor: page.nextCursor }
      }),
    getCurrentToken: () =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const now = new Date(yield* Clock.currentTimeMillis)
        // The caller authenticated with it a moment ago; only its deletion since then could make it vanish.
        const token = yield* tokens.find(principal.accountId, principal.tokenId)
        if (token === null) return yield* Effect.fail(Unauthorized.of("invalid_token"))
        return tokenMetadata(token, now)
      }),
    createToken: ({ payload }: Pick<Request<"createToken">, "payload">) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const now = new Date(yield* Clock.currentTimeMillis)
        const draft = yield* resolveDraft(principal, payload ?? undefined, now)
        if (payload?.confirm !== true) {
          return {
            preview: true as const,
            token: { ...draft, expiresAt: isoOrNull(draft.expiresAt) },
            message: "Nothing was created. Send the same request with \"confirm\": true to mint this token."
          }
        }
        const secret = generateSecret()
        const created = yield* tokens.insert({
          id: newId("tok"),
          accountId: principal.accountId,
          name: draft.name,
          secretSha256: hashSecret(secret),
          last4: secret.slice(-4),
          projects: draft.projects,
          permissions: draft.permissions,
          createdAt: now,
          lastUsedAt: null,
          expiresAt: draft.expiresAt,
          revokedAt: null
        })
        return { token: tokenMetadata(created, now), secret }
      }),
    revokeToken: ({ params, payload, query }: Pick<Request<"revokeToken">, "params" | "payload" | "query">) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const now = new Date(yield* Clock.currentTimeMillis)
        const target = yield* tokens.find(principal.accountId, params.id)
        if (target === null) return yield* Effect.fail(notFound("Token"))
        if (target.id === principal.tokenId) {
          return yield* Effect.fail(
            new Conflict({
              message: "A token cannot revoke itself; use another token or the dashboard",
              type: "self_revoke"
            })
          )
        }
        if (
          !projectsWithin(principal, target.projects) || missingPermissions(principal, target.permissions).length > 0
        ) {
          return yield* Effect.fail(escalation("This token has access the calling token lacks; it cannot revoke it"))
        }
        const confirmed = payload?.confirm === true || query.confirm === "true"
        if (!confirmed) {
          return {
            preview: true as const,
            token: tokenMetadata(target, now),
            message: "Nothing was revoked. Send again with {\"confirm\": true} or ?confirm=true to revoke this token."
          }
        }
        const revoked = yield* revoke(principal.accountId, target, now)
        return { revoked: true as const, token: tokenMetadata(revoked!, now) }
      })
  }
})

export const TokensHttp = Layer.unwrap(
  Effect.map(
    tokensOperations,
    (operations) =>
      HttpApiBuilder.group(SiteHealthApi, "tokens", (handlers) => handlers.handleAll(operations)).pipe(
        withApiMiddlewaresOnly
      )
  )
)
