/**
 * Who may call a dashboard endpoint. Every endpoint of `DashboardApi` declares its minimum access level as a
 * `DashboardAccessAnnotation` (through `access(level, endpoint)`); the session middleware (server
 * dashboard/Middleware.ts) reads it from the endpoint it wraps and compares it with the caller's role, read
 * afresh with the session on every request. An endpoint without one is refused (403 `role_forbidden`) and a
 * contract test fails for it.
 *
 * Levels, lowest first:
 * - `public`: no session (sign-up, log-in, password reset, email verification).
 * - `self`: any member, acting on their own login only (their sessions, password, two-factor sign-in).
 * - `viewer`: any member: reads the account's websites and every report; changes nothing.
 * - `admin`: websites, connections, tokens, expenses, syncs, agent consent.
 * - `owner`: billing (checkout, billing portal) and, later, members.
 */
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"

export const DASHBOARD_ROLES = ["owner", "admin", "viewer"] as const
export const DashboardRole = Schema.Literals(DASHBOARD_ROLES).annotate({
  description: "A member's role in the account: owner (billing, members), admin (websites, connections, tokens), " +
    "viewer (reads every report, changes nothing)"
})
export type DashboardRole = typeof DashboardRole.Type

export const DASHBOARD_ACCESS_LEVELS = ["public", "self", "viewer", "admin", "owner"] as const
export type DashboardAccess = (typeof DASHBOARD_ACCESS_LEVELS)[number]

/** An endpoint's minimum access level; absent = refused to everyone with a session. */
export class DashboardAccessAnnotation extends Context.Service<DashboardAccessAnnotation, DashboardAccess>()(
  "sitehealth/DashboardAccess"
) {}

/** Declares `endpoint`'s minimum access level. */
export const access = <E extends { annotate: (key: any, value: any) => any }>(level: DashboardAccess, endpoint: E): E =>
  endpoint.annotate(DashboardAccessAnnotation, level)

/** The level an endpoint declares, or undefined. */
export const accessOf = (endpoint: { readonly annotations: Context.Context<never> }): DashboardAccess | undefined =>
  Context.getOrUndefined(endpoint.annotations, DashboardAccessAnnotation)

const RANK: Record<DashboardRole, number> = { viewer: 1, admin: 2, owner: 3 }
const NEEDED: Record<DashboardAccess, number> = { public: 0, self: 0, viewer: 1, admin: 2, owner: 3 }

/** Whether a member with `role` may call an endpoint that declares `level`. */
export const roleAllows = (role: DashboardRole, level: DashboardAccess): boolean => RANK[role] >= NEEDED[level]
