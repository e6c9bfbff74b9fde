/**
 * Two-factor sign-in's forms on the account page (the panel itself: Security.tsx): turn it on (the password,
 * then the QR code and the key, then a first code), the recovery codes shown once, and, once on, new recovery
 * codes or turning it off (the password and a code). Their client is securityClient.ts.
 */
import { useAtomValue } from "@effect/atom-react"
import { Exit } from "effect"
import type { AsyncResult } from "effect/reactivity"
import { type ReactNode, useEffect, useId, useRef, useState } from "react"
import { Keys, sessionAtom } from "../client.ts"
import { CopyButton, Field, formValues } from "../forms.tsx"
import { useMutation } from "../hooks.ts"
import { disableTwoFactor, enableTwoFactor, regenerateRecoveryCodes, setUpTwoFactor } from "../securityClient.ts"
import { MutationStatus } from "../ui.tsx"

/** A hidden username beside the password fields, so that password managers know which account they are for. */
export const Username = () => {
  const session = useAtomValue(sessionAtom)
  const email = session._tag === "Success" ? session.value.user.email : ""
  return <input type="email" name="username" autoComplete="username" value={email} readOnly hidden />
}

export const CurrentPassword = () => (
  <Field label="Current password">
    <input name="password" type="password" autoComplete="current-password" required />
  </Field>
)

const CodeField = ({ label, hint }: { readonly label: string; readonly hint?: string }) => (
  <Field label={label} {...(hint !== undefined ? { hint } : {})}>
    <input
      name="code"
      inputMode="numeric"
      autoComplete="one-time-code"
      autoCapitalize="off"
      spellCheck={false}
      maxLength={40}
      required
    />
  </Field>
)

/** Takes the focus when shown: what the form that was just submitted (and is gone) turned into. */
const FocusOnShow = ({ children, className }: { readonly children: ReactNode; readonly className: string }) => {
  const ref = useRef<HTMLDivElement>(null)
  useEffect(() => ref.current?.focus(), [])
  return <div ref={ref} tabIndex={-1} className={className}>{children}</div>
}

export interface Codes {
  readonly title: string
  readonly codes: ReadonlyArray<string>
}

export const RecoveryCodes = ({ codes, onDone }: { readonly codes: Codes; readonly onDone: () => void }) => (
  <FocusOnShow className="recovery">
    <div className="alert warn" role="status">
      <strong>{codes.title}</strong>
      <p>Save these now: each works once, and they are not shown again.</p>
    </div>
    <p className="muted">
      When you cannot use the app (a lost phone), type one instead of a code. Keep them apart from your phone: in a
      password manager, or printed.
    </p>
    <ol className="codes" aria-label="Recovery codes">
      {codes.codes.map((c) => (
        <li key={c}>
          <code>{c}</code>
        </li>
      ))}
    </ol>
    <div className="row">
      <CopyButton text={codes.codes.join("\n")} label="Copy the codes" />
      <button type="button" onClick={onDone}>Done</button>
    </div>
  </FocusOnShow>
)

/** Off: the password, then the QR code and the key, then a first code from the app. */
export const TurnOn = ({ onOn }: { readonly onOn: (codes: Codes) => void }) => {
  const [setUp, runSetUp] = useMutation(setUpTwoFactor)
  const [enabled, runEnable] = useMutation(enableTwoFactor)
  const [setup, setSetup] = useState<{ readonly secret: string; readonly qrSvg: string } | null>(null)
  const stepsId = useId()
  if (setup === null) {
    return (
      <>
        <p>
          <strong>Off.</strong>{" "}
          Turned on, log-in asks for a code from an authenticator app on your phone after your password.
        </p>
        <form
          aria-label="Turn on two-factor sign-in"
          onSubmit={async (event) => {
            event.preventDefault()
            const exit = await runSetUp({ payload: { password: formValues(event.currentTarget).get("password") } })
            if (Exit.isSuccess(exit)) setSetup(exit.value)
          }}
        >
          <MutationStatus result={setUp} />
          <Username />
          <CurrentPassword />
          <div className="row">
            <button type="submit" disabled={setUp.waiting}>{setUp.waiting ? "Starting…" : "Turn on"}</button>
          </div>
        </form>
      </>
    )
  }
  return (
    <FocusOnShow className="setup">
      <h3 id={stepsId}>Add sitehealth to your authenticator app</h3>
      <div className="qr-row">
        <img
          src={"data:image/svg+xml;utf8," + encodeURIComponent(setup.qrSvg)}
          alt="QR code for your authenticator app"
          width={200}
          height={200}
          className="qr"
        />
        <div>
          <p>1. Scan this QR code with the app (Google Authenticator, 1Password, Authy, Bitwarden…).</p>
          <p>Or type this key into it by hand:</p>
          <code className="secret" data-testid="totp-secret">{setup.secret.replace(/(.{4})(?=.)/g, "$1 ")}</code>
        </div>
      </div>
      <form
        aria-labelledby={stepsId}
        onSubmit={async (event) => {
          event.preventDefault()
          const exit = await runEnable({
            payload: { code: formValues(event.currentTarget).get("code").trim() },
            reactivityKeys: [Keys.twoFactor]
          })
          if (Exit.isSuccess(exit)) {
            onOn({
              title: "Two-factor sign-in is on. Here are your ten recovery codes.",
              codes: exit.value.recoveryCodes
            })
          }
        }}
      >
        <MutationStatus result={enabled} />
        <CodeField label="2. The 6-digit code the app shows" />
        <div className="row">
          <button type="submit" disabled={enabled.waiting}>{enabled.waiting ? "Checking…" : "Turn on"}</button>
          <button type="button" className="secondary" onClick={() => setSetup(null)}>Cancel</button>
        </div>
      </form>
    </FocusOnShow>
  )
}

/** On: a change asks for the password and a code (from the app, or a recovery code). */
const PasswordAndCode = ({ title, button, busy, danger, result, onSubmit }: {
  readonly title: string
  readonly button: string
  readonly busy: string
  readonly danger?: boolean
  readonly result: AsyncResult.AsyncResult<unknown, unknown>
  readonly onSubmit: (payload: { readonly password: string; readonly code: string }) => Promise<boolean>
}) => {
  const id = useId()
  return (
    <form
      aria-labelledby={id}
      onSubmit={async (event) => {
        event.preventDefault()
        const element = event.currentTarget
        const form = formValues(element)
        if (await onSubmit({ password: form.get("password"), code: form.get("code").trim() })) element.reset()
      }}
    >
      <h3 id={id}>{title}</h3>
      <MutationStatus result={result} />
      <Username />
      <CurrentPassword />
      <CodeField label="Code from the app" hint="Or one of your recovery codes." />
      <div className="row">
        <button type="submit" className={danger === true ? "danger" : undefined} disabled={result.waiting}>
          {result.waiting ? busy : button}
        </button>
      </div>
    </form>
  )
}

export const NewRecoveryCodes = ({ onCodes }: { readonly onCodes: (codes: Codes) => void }) => {
  const [result, run] = useMutation(regenerateRecoveryCodes)
  return (
    <PasswordAndCode
      title="New recovery codes"
      button="Make new codes"
      busy="Making…"
      result={result}
      onSubmit={async (payload) => {
        const exit = await run({ payload, reactivityKeys: [Keys.twoFactor] })
        if (Exit.isSuccess(exit)) {
          onCodes({
            title: "New recovery codes: the old ones no longer work.",
            codes: exit.value.recoveryCodes
          })
        }
        return Exit.isSuccess(exit)
      }}
    />
  )
}

export const TurnOff = ({ onOff }: { readonly onOff: () => void }) => {
  const [result, run] = useMutation(disableTwoFactor)
  return (
    <PasswordAndCode
      title="Turn off"
      button="Turn off two-factor sign-in"
      busy="Turning off…"
      danger
      result={result}
      onSubmit={async (payload) => {
        const exit = await run({ payload, reactivityKeys: [Keys.twoFactor] })
        if (Exit.isSuccess(exit)) onOff()
        return Exit.isSuccess(exit)
      }}
    />
  )
}
