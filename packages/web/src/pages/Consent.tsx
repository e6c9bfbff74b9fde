/**
 * Consent for an MCP client that connected by URL (docs/mcp.md, "Connecting by URL"). The server's
 * /oauth/authorize sends the browser here with the client's request; the owner (logged in first: the session gate
 * brings them back) sees who asks and where the browser returns, chooses websites and permissions — never more
 * than the account has — and approves or denies. Either answer sends the browser back to the client.
 */
import { useAtomValue } from "@effect/atom-react"
import type { ProjectId } from "@sitehealth/domain/Common"
import type { AuthorizationRequest } from "@sitehealth/domain/DashboardConsent"
import type { Permission } from "@sitehealth/domain/Permissions"
import { Exit } from "effect"
import { useMemo, useState } from "react"
import { consentAtom, decideConsent } from "../consentClient.ts"
import { formValues, Result } from "../forms.tsx"
import { useMutation } from "../hooks.ts"
import { useLocation } from "../navigation.tsx"
import { RoleNote, useCan } from "../roles.tsx"
import { MutationStatus } from "../ui.tsx"

const KEYS = [
  "client_id",
  "redirect_uri",
  "response_type",
  "code_challenge",
  "code_challenge_method",
  "state",
  "scope",
  "resource"
] as const

/** The client's request as the address bar carries it (only the names OAuth gives it). */
const requestOf = (query: URLSearchParams): AuthorizationRequest => {
  const entries = KEYS.flatMap((k) => {
    const v = query.get(k)
    return v === null ? [] : [[k, v] as const]
  })
  const request = Object.fromEntries(entries) as Record<string, string>
  return {
    ...request,
    client_id: request["client_id"] ?? "",
    redirect_uri: request["redirect_uri"] ?? "",
    response_type: request["response_type"] ?? ""
  }
}

export const ConsentPage = () =>
  useCan("admin") ? <ConsentForm /> : (
    <>
      <h1>Connect an MCP client</h1>
      <RoleNote level="admin" what="connecting an MCP client to this account's websites" />
    </>
  )

const ConsentForm = () => {
  const { query } = useLocation()
  const text = query.toString()
  const request = useMemo(() => requestOf(new URLSearchParams(text)), [text])
  const atom = useMemo(() => consentAtom(request), [request])
  const view = useAtomValue(atom)
  const [result, run] = useMutation(decideConsent)
  const [scope, setScope] = useState<"all" | "some">("some")
  return (
    <>
      <h1>Connect an MCP client</h1>
      <Result result={view} what="the client's request">
        {(consent) => {
          const decide = async (approve: boolean, form: HTMLFormElement) => {
            const values = formValues(form)
            const exit = await run({
              payload: {
                request,
                approve,
                websites: scope === "all" ? null : (values.all("website") as Array<ProjectId>),
                permissions: approve ? (values.all("permission") as Array<Permission>) : []
              }
            })
            if (Exit.isSuccess(exit)) window.location.assign(exit.value.redirectTo)
          }
          return (
            <form
              className="panel"
              onSubmit={(event) => {
                event.preventDefault()
                void decide(true, event.currentTarget)
              }}
            >
              <p>
                <strong>{consent.client.name}</strong> asks for access to your websites through{" "}
                <code>{consent.resource}</code>. After your answer the browser goes back to{" "}
                <strong>{consent.redirectHost}</strong>. Only approve a client you started yourself.
              </p>
              <MutationStatus result={result} />
              <fieldset>
                <legend>Websites</legend>
                <label className="check">
                  <input type="radio" name="scope" checked={scope === "some"} onChange={() => setScope("some")} />
                  Only the websites checked below
                </label>
                <label className="check">
                  <input type="radio" name="scope" checked={scope === "all"} onChange={() => setScope("all")} />
                  Every website, including ones added later
                </label>
                {scope === "some"
                  ? consent.websites.map((w) => (
                    <label className="check" key={w.id}>
                      <input type="checkbox" name="website" value={w.id} defaultChecked />
                      {w.name} <span className="muted">({w.domain})</span>
                    </label>
                  ))
                  : null}
              </fieldset>
              <fieldset>
                <legend>Permissions</legend>
                {consent.permissions.map((p) => (
                  <label className="check" key={p.name}>
                    <input
                      type="checkbox"
                      name="permission"
                      value={p.name}
                      defaultChecked={consent.requestedPermissions.includes(p.name) && !p.name.endsWith(":write")}
                    />
                    <span>
                      <code>{p.name}</code> <span className="muted">{p.description}</span>
                    </span>
                  </label>
                ))}
              </fieldset>
              <div className="row">
                <button type="submit" disabled={result.waiting}>Approve</button>
                <button
                  type="button"
                  className="secondary"
                  disabled={result.waiting}
                  onClick={(event) => void decide(false, event.currentTarget.form!)}
                >
                  Deny
                </button>
              </div>
            </form>
          )
        }}
      </Result>
    </>
  )
}
