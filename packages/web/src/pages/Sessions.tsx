/** The account's live sessions (browsers logged in), each endable; "log out other sessions" keeps this one. */
import { useAtomValue } from "@effect/atom-react"
import { Exit } from "effect"
import { useState } from "react"
import { Keys, logOutOthers, revokeSession, sessionsAtom } from "../client.ts"
import { Result } from "../forms.tsx"
import { useMutation } from "../hooks.ts"
import { MutationStatus } from "../ui.tsx"

const when = (d: string) =>
  new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" }).format(new Date(d))

export const SessionsPage = () => {
  const sessions = useAtomValue(sessionsAtom)
  const [others, endOthers] = useMutation(logOutOthers)
  const [one, endOne] = useMutation(revokeSession)
  const [notice, setNotice] = useState<string | null>(null)
  return (
    <>
      <h1>Sessions</h1>
      <p className="muted">Every browser logged in to your account. End any you do not recognise.</p>
      <MutationStatus result={others} />
      <MutationStatus result={one} />
      {notice !== null ? <div className="alert ok" role="status">{notice}</div> : null}
      <div className="row">
        <button
          type="button"
          disabled={others.waiting}
          onClick={async () => {
            const exit = await endOthers({ reactivityKeys: [Keys.sessions] })
            if (Exit.isSuccess(exit)) {
              setNotice(
                exit.value.revoked === 1
                  ? "1 other session logged out."
                  : `${exit.value.revoked} other sessions logged out.`
              )
            }
          }}
        >
          Log out other sessions
        </button>
      </div>
      <Result result={sessions} what="your sessions">
        {({ sessions }) => (
          <table className="cards">
            <thead>
              <tr>
                <th scope="col">Browser</th>
                <th scope="col">Address</th>
                <th scope="col">Started</th>
                <th scope="col">Last seen</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((s) => (
                <tr key={s.id}>
                  <td data-label="Browser">
                    {s.userAgent ?? "Unknown"} {s.current ? <span className="badge">this session</span> : null}
                  </td>
                  <td data-label="Address">{s.address ?? "—"}</td>
                  <td data-label="Started">{when(s.createdAt)}</td>
                  <td data-label="Last seen">{when(s.lastSeenAt)}</td>
                  <td>
                    {s.current ? null : (
                      <button
                        type="button"
                        className="secondary"
                        onClick={() => endOne({ params: { id: s.id }, reactivityKeys: [Keys.sessions] })}
                      >
                        End<span className="sr-only">this session</span>
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Result>
    </>
  )
}
