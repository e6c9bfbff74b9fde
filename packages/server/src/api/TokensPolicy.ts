/**
 * No escalation: a token may only mint or revoke tokens whose projects, permissions and lifetime are
 * within its own.
 */
import type { Principal } from "@sitehealth/domain/Authentication"
import type { Permission } from "@sitehealth/domain/Permissions"

export const projectsWithin = (principal: Principal, projects: ReadonlyArray<string> | null): boolean => {
  const scope: ReadonlyArray<string> | null = principal.projects
  return scope === null || (projects !== null && projects.every((p) => scope.includes(p)))
}

export const missingPermissions = (principal: Principal, permissions: ReadonlyArray<Permission>): Array<Permission> =>
  permissions.filter((p) => !principal.permissions.includes(p))

export const expiryWithin = (principal: Principal, expiresAt: Date | null): boolean =>
  principal.expiresAt === null || (expiresAt !== null && expiresAt.getTime() <= principal.expiresAt.getTime())
