/**
 * What the logged-in member's role lets them do (DashboardRoles.ts): the session's answer carries the role, and
 * the pages hide the controls it cannot use — the server refuses them anyway (403 `role_forbidden`), this only
 * spares a member buttons that would fail. A viewer sees every report and a line saying who can change things.
 */
import { useAtomValue } from "@effect/atom-react"
import { type DashboardRole, roleAllows } from "@sitehealth/domain/DashboardRoles"
import { AsyncResult } from "effect/reactivity"
import type { ReactNode } from "react"
import { sessionAtom } from "./client.ts"

type Level = "admin" | "owner"

/** The member's role; while the session is loading, the least (nothing is offered that may be refused). */
export const useRole = (): DashboardRole => {
  const session = useAtomValue(sessionAtom)
  return AsyncResult.isSuccess(session) ? session.value.role : "viewer"
}

export const useCan = (level: Level): boolean => roleAllows(useRole(), level)

const WHO: Record<Level, string> = { admin: "an admin or an owner", owner: "an owner" }

/** The reason a control is missing, in one line. */
export const RoleNote = ({ level, what }: { readonly level: Level; readonly what: string }) => {
  const role = useRole()
  return (
    <p className="muted role-note" data-role-note={level}>
      Your role is <strong>{role}</strong>: {what} is for {WHO[level]} of this account.
    </p>
  )
}

/** `children` when the role allows `level`; else the note (when `what` is given) or nothing. */
export const Can = ({ level, what, children }: {
  readonly level: Level
  readonly what?: string
  readonly children: ReactNode
}) => {
  const can = useCan(level)
  if (can) return <>{children}</>
  return what === undefined ? null : <RoleNote level={level} what={what} />
}
