/**
 * The team page (`/team`): the account's members with their roles, its pending invitations, and — for an owner —
 * inviting by email, changing a role, withdrawing an invitation and removing a member. And the page an
 * invitation's link opens (`/accept-invite?token=…`): who invites, to what, as what; a password; joined.
 */
import { useAtomValue } from "@effect/atom-react"
import type { DashboardRole } from "@sitehealth/domain/DashboardRoles"
import { DASHBOARD_ROLES } from "@sitehealth/domain/DashboardRoles"
import type { TeamInvitation, TeamMember } from "@sitehealth/domain/DashboardTeam"
import { Exit } from "effect"
import { AsyncResult } from "effect/reactivity"
import { useEffect, useRef, useState } from "react"
import { Keys } from "../client.ts"
import { formatDate } from "../format.ts"
import { Field, formValues, NewPasswordField, Result } from "../forms.tsx"
import { useMutation } from "../hooks.ts"
import { Link, navigate, useLocation } from "../navigation.tsx"
import { RoleNote, useCan } from "../roles.tsx"
import {
  acceptInvitation,
  changeRole,
  invite,
  previewInvitation,
  removeMember,
  revokeInvitation,
  teamAtom
} from "../teamClient.ts"
import { ErrorMessage, Loading, MutationStatus } from "../ui.tsx"

const ROLE_NAMES: Record<DashboardRole, string> = { owner: "Owner", admin: "Admin", viewer: "Viewer" }
const ROLE_DOES: Record<DashboardRole, string> = {
  owner: "billing and members, and all an admin does",
  admin: "websites, connections, tokens, expenses and alerts",
  viewer: "reads every report, changes nothing"
}

/** `id` and `aria-describedby` come from the Field around it. */
const RoleSelect = ({ name, defaultValue, ...labelling }: {
  readonly name: string
  readonly defaultValue: DashboardRole
  readonly id?: string
  readonly "aria-describedby"?: string
}) => (
  <select name={name} defaultValue={defaultValue} {...labelling}>
    {DASHBOARD_ROLES.map((r) => <option key={r} value={r}>{ROLE_NAMES[r]}: {ROLE_DOES[r]}</option>)}
  </select>
)

const MemberRow = ({ member, owner }: { readonly member: TeamMember; readonly owner: boolean }) => {
  const [changed, change] = useMutation(changeRole)
  const [removed, remove] = useMutation(removeMember)
  const [confirming, setConfirming] = useState(false)
  const [role, setRole] = useState<DashboardRole>(member.role)
  useEffect(() => setRole(member.role), [member.role])
  return (
    <tr data-member={member.email}>
      <th scope="row" data-label="Member">
        {member.email} {member.you ? <span className="badge">you</span> : null}
      </th>
      <td data-label="Role">
        {owner
          ? (
            <div className="row">
              <label className="sr-only" htmlFor={`role-${member.id}`}>Role of {member.email}</label>
              <select
                id={`role-${member.id}`}
                value={role}
                onChange={(e) => setRole(e.target.value as DashboardRole)}
              >
                {DASHBOARD_ROLES.map((r) => <option key={r} value={r}>{ROLE_NAMES[r]}</option>)}
              </select>
              {role !== member.role
                ? (
                  <button
                    type="button"
                    disabled={changed.waiting}
                    onClick={() =>
                      change({
                        params: { id: member.id },
                        payload: { role },
                        reactivityKeys: [Keys.team, Keys.session]
                      })}
                  >
                    Save role<span className="sr-only">of {member.email}</span>
                  </button>
                )
                : null}
            </div>
          )
          : ROLE_NAMES[member.role]}
        <MutationStatus result={changed} />
      </td>
      <td data-label="Two-factor">{member.twoFactor ? "On" : "Off"}</td>
      <td data-label="Joined">{formatDate(member.joinedAt)}</td>
      {owner
        ? (
          <td data-label="Actions">
            <MutationStatus result={removed} />
            {confirming
              ? (
                <div className="row">
                  <span>Remove {member.email}? Their sessions end at once.</span>
                  <button
                    type="button"
                    className="danger"
                    disabled={removed.waiting}
                    onClick={async () => {
                      const exit = await remove({ params: { id: member.id }, reactivityKeys: [Keys.team] })
                      if (Exit.isSuccess(exit) && member.you) navigate("/login")
                    }}
                  >
                    Yes, remove
                  </button>
                  <button type="button" className="secondary" onClick={() => setConfirming(false)}>Cancel</button>
                </div>
              )
              : (
                <button type="button" className="secondary" onClick={() => setConfirming(true)}>
                  Remove<span className="sr-only">{member.email}</span>
                </button>
              )}
          </td>
        )
        : null}
    </tr>
  )
}

const InvitationRow = ({ invitation, owner }: { readonly invitation: TeamInvitation; readonly owner: boolean }) => {
  const [revoked, revoke] = useMutation(revokeInvitation)
  return (
    <li data-invitation={invitation.email}>
      <strong>{invitation.email}</strong> as {ROLE_NAMES[invitation.role].toLowerCase()}
      {invitation.invitedBy !== null ? `, invited by ${invitation.invitedBy}` : ""} · the link works until{" "}
      {formatDate(invitation.expiresAt)} {owner
        ? (
          <button
            type="button"
            className="secondary small"
            disabled={revoked.waiting}
            onClick={() => revoke({ params: { id: invitation.id }, reactivityKeys: [Keys.team] })}
          >
            Withdraw<span className="sr-only">the invitation of {invitation.email}</span>
          </button>
        )
        : null}
      <MutationStatus result={revoked} />
    </li>
  )
}

const InviteForm = () => {
  const [result, run] = useMutation(invite)
  const [notice, setNotice] = useState<string | null>(null)
  return (
    <section className="panel" aria-labelledby="invite-heading">
      <h2 id="invite-heading">Invite someone</h2>
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          setNotice(null)
          const form = event.currentTarget
          const v = formValues(form)
          const exit = await run({
            payload: { email: v.get("email").trim(), role: v.get("role") as DashboardRole },
            reactivityKeys: [Keys.team]
          })
          if (Exit.isSuccess(exit)) {
            setNotice(`Invitation sent to ${exit.value.email}. The link in it works once, for 7 days.`)
            form.reset()
          }
        }}
      >
        <MutationStatus result={result} />
        {notice !== null ? <div className="alert ok" role="status">{notice}</div> : null}
        <div className="form-grid">
          <Field label="Email">
            <input name="email" type="email" required autoComplete="off" />
          </Field>
          <Field label="Role">
            <RoleSelect name="role" defaultValue="viewer" />
          </Field>
        </div>
        <button type="submit" disabled={result.waiting}>{result.waiting ? "Sending…" : "Send invitation"}</button>
      </form>
    </section>
  )
}

export const TeamPage = () => {
  const team = useAtomValue(teamAtom)
  const owner = useCan("owner")
  return (
    <>
      <h1>Team</h1>
      <p className="muted">
        Everyone who can log in to this account and see its websites. Owners: {ROLE_DOES.owner}. Admins:{" "}
        {ROLE_DOES.admin}. Viewers: {ROLE_DOES.viewer}.
      </p>
      {owner ? null : <RoleNote level="owner" what="inviting and managing members" />}
      <Result result={team} what="the team">
        {({ invitations, members }) => (
          <>
            <table className="cards">
              <caption className="sr-only">Members</caption>
              <thead>
                <tr>
                  <th scope="col">Member</th>
                  <th scope="col">Role</th>
                  <th scope="col">Two-factor</th>
                  <th scope="col">Joined</th>
                  {owner
                    ? (
                      <th scope="col">
                        <span className="sr-only">Actions</span>
                      </th>
                    )
                    : null}
                </tr>
              </thead>
              <tbody>
                {members.map((m) => <MemberRow key={m.id} member={m} owner={owner} />)}
              </tbody>
            </table>
            <section aria-labelledby="invitations-heading">
              <h2 id="invitations-heading">Pending invitations</h2>
              {invitations.length === 0
                ? <p className="muted">None.</p>
                : (
                  <ul className="plain spaced">
                    {invitations.map((i) => <InvitationRow key={i.id} invitation={i} owner={owner} />)}
                  </ul>
                )}
            </section>
          </>
        )}
      </Result>
      {owner ? <InviteForm /> : null}
    </>
  )
}

/** `/accept-invite?token=…`: what the link offers, then a password to join with. */
export const AcceptInvitationPage = () => {
  const token = useLocation().query.get("token") ?? ""
  const [preview, look] = useMutation(previewInvitation)
  const [accepted, accept] = useMutation(acceptInvitation)
  const started = useRef(false)
  useEffect(() => {
    if (token === "" || started.current) return
    started.current = true
    void look({ payload: { token } })
  }, [token, look])
  if (token === "") {
    return (
      <>
        <h1>Join a team</h1>
        <ErrorMessage
          error={{
            message: "This link has no token. Open the link from the invitation exactly as it was sent.",
            type: "invalid_link"
          }}
        />
      </>
    )
  }
  if (AsyncResult.isFailure(preview)) {
    return (
      <>
        <h1>Join a team</h1>
        <ErrorMessage cause={preview.cause} title="This invitation cannot be used." />
        <p>
          Invitations work once, for 7 days, and end when withdrawn. Ask whoever invited you for a new one, or{" "}
          <Link href="/login">log in</Link>.
        </p>
      </>
    )
  }
  if (!AsyncResult.isSuccess(preview)) return <Loading what="the invitation" />
  const p = preview.value
  return (
    <>
      <h1>Join {p.accountName}</h1>
      <p>
        {p.invitedBy ?? "An owner"} invited <strong>{p.email}</strong> to join <strong>{p.accountName}</strong>{" "}
        on sitehealth as {ROLE_NAMES[p.role].toLowerCase()}: {ROLE_DOES[p.role]}.
      </p>
      <div className="panel">
        <form
          onSubmit={async (event) => {
            event.preventDefault()
            const exit = await accept({
              payload: { token, password: formValues(event.currentTarget).get("password") },
              reactivityKeys: [Keys.session]
            })
            if (Exit.isSuccess(exit)) navigate("/overview")
          }}
        >
          <MutationStatus result={accepted} />
          <Field label="Email">
            <input name="email" type="email" value={p.email} readOnly autoComplete="username" />
          </Field>
          <NewPasswordField label="Choose a password" name="password" />
          <div className="row">
            <button type="submit" disabled={accepted.waiting}>
              {accepted.waiting ? "Joining…" : `Join ${p.accountName}`}
            </button>
          </div>
        </form>
      </div>
    </>
  )
}
