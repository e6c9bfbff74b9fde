/**
 * The account page's security panels: change the password, and two-factor sign-in (its forms:
 * TwoFactorForms.tsx). Every change asks for the current password again; recovery codes are shown once. Their
 * client is securityClient.ts, loaded with this page only.
 */
import { useAtomValue } from "@effect/atom-react"
import { Exit } from "effect"
import { useState } from "react"
import { Keys } from "../client.ts"
import { formatDate } from "../format.ts"
import { formValues, NewPasswordField, Result } from "../forms.tsx"
import { useMutation } from "../hooks.ts"
import { changePassword, twoFactorAtom } from "../securityClient.ts"
import { MutationStatus } from "../ui.tsx"
import {
  type Codes,
  CurrentPassword,
  NewRecoveryCodes,
  RecoveryCodes,
  TurnOff,
  TurnOn,
  Username
} from "./TwoFactorForms.tsx"

export const ChangePassword = () => {
  const [result, run] = useMutation(changePassword)
  const [done, setDone] = useState<string | null>(null)
  return (
    <section className="panel" aria-labelledby="password-heading">
      <h2 id="password-heading">Change password</h2>
      {done !== null ? <div className="alert ok" role="status">{done}</div> : null}
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          const element = event.currentTarget
          const form = formValues(element)
          setDone(null)
          const exit = await run({
            payload: { currentPassword: form.get("password"), newPassword: form.get("newPassword") },
            reactivityKeys: [Keys.sessions]
          })
          if (Exit.isSuccess(exit)) {
            element.reset()
            setDone(exit.value.message)
          }
        }}
      >
        <MutationStatus result={result} />
        <Username />
        <CurrentPassword />
        <NewPasswordField label="New password" name="newPassword" />
        <div className="row">
          <button type="submit" disabled={result.waiting}>{result.waiting ? "Changing…" : "Change password"}</button>
        </div>
      </form>
    </section>
  )
}

export const TwoFactor = () => {
  const status = useAtomValue(twoFactorAtom)
  const [codes, setCodes] = useState<Codes | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  return (
    <section className="panel" aria-labelledby="two-factor-heading">
      <h2 id="two-factor-heading">Two-factor sign-in</h2>
      {codes !== null
        ? <RecoveryCodes codes={codes} onDone={() => setCodes(null)} />
        : (
          <Result result={status} what="two-factor sign-in">
            {(s) => (
              <>
                {notice !== null ? <div className="alert ok" role="status">{notice}</div> : null}
                {s.enabled
                  ? (
                    <>
                      <p>
                        <strong>On</strong> since {formatDate(s.enabledAt)}, {s.recoveryCodesLeft === 1
                          ? "1 recovery code left"
                          : `${s.recoveryCodesLeft} recovery codes left`}.
                      </p>
                      {s.recoveryCodesLeft <= 3
                        ? <p className="alert warn">Few recovery codes left: make new ones below.</p>
                        : null}
                      <div className="pair">
                        <NewRecoveryCodes
                          onCodes={(c) => {
                            setNotice(null)
                            setCodes(c)
                          }}
                        />
                        <TurnOff
                          onOff={() => setNotice("Two-factor sign-in is off: log-in asks for your password only.")}
                        />
                      </div>
                    </>
                  )
                  : (
                    <TurnOn
                      onOn={(c) => {
                        setNotice(null)
                        setCodes(c)
                      }}
                    />
                  )}
              </>
            )}
          </Result>
        )}
    </section>
  )
}
