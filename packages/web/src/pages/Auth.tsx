/**
 * Log in and sign up. Both answer the same for a registered or unknown address: the server decides. With
 * two-factor sign-in on, log-in has a second step on the same page: a code from the app, or a recovery code.
 */
import { Exit } from "effect"
import { AsyncResult } from "effect/reactivity"
import { useId, useState } from "react"
import { Keys, logIn, logInSecondFactor, setCsrfToken, signUp } from "../client.ts"
import { errorType } from "../errors.ts"
import { Field, formValues, NewPasswordField } from "../forms.tsx"
import { useMutation } from "../hooks.ts"
import { Link, navigate, useLocation } from "../navigation.tsx"
import { MutationStatus } from "../ui.tsx"

/** Only a path on this site (never `//evil.example` or a full URL) may be the page to go back to. */
const safeNext = (next: string | null) =>
  next !== null && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : "/websites"

/** What a log-in changes: everything read for the logged-in owner is read again. */
const LOGGED_IN_KEYS = [Keys.session, Keys.sessions, Keys.websites, Keys.tokens, Keys.account, Keys.twoFactor]

/** The password was right and two-factor sign-in is on: the second step's challenge, and the first step's box. */
interface SecondStep {
  readonly challenge: string
  readonly staySignedIn: boolean
}

export const LogInPage = () => {
  const { query } = useLocation()
  const [secondStep, setSecondStep] = useState<SecondStep | null>(null)
  const [email, setEmail] = useState("")
  const loggedIn = (csrfToken: string) => {
    setCsrfToken(csrfToken)
    navigate(safeNext(query.get("next")))
  }
  return secondStep === null
    ? <PasswordStep email={email} onEmail={setEmail} onSecondStep={setSecondStep} onLoggedIn={loggedIn} />
    : <CodeStep step={secondStep} onRestart={() => setSecondStep(null)} onLoggedIn={loggedIn} />
}

const PasswordStep = ({ email, onEmail, onSecondStep, onLoggedIn }: {
  readonly email: string
  readonly onEmail: (email: string) => void
  readonly onSecondStep: (step: SecondStep) => void
  readonly onLoggedIn: (csrfToken: string) => void
}) => {
  const [result, run] = useMutation(logIn)
  const waiting = result.waiting
  const hintId = useId()
  return (
    <>
      <h1>Log in</h1>
      <div className="panel">
        <form
          onSubmit={async (event) => {
            event.preventDefault()
            const form = formValues(event.currentTarget)
            const staySignedIn = form.get("staySignedIn") === "on"
            onEmail(form.get("email").trim())
            const exit = await run({
              payload: { email: form.get("email").trim(), password: form.get("password"), staySignedIn },
              reactivityKeys: LOGGED_IN_KEYS
            })
            if (Exit.isSuccess(exit)) {
              const answer = exit.value
              if ("secondFactorRequired" in answer) onSecondStep({ challenge: answer.challenge, staySignedIn })
              else onLoggedIn(answer.csrfToken)
            }
          }}
        >
          <MutationStatus result={result} />
          <Field label="Email">
            <input name="email" type="email" autoComplete="username" defaultValue={email} required />
          </Field>
          <Field label="Password">
            <input name="password" type="password" autoComplete="current-password" required />
          </Field>
          <div>
            <label className="check">
              <input name="staySignedIn" type="checkbox" aria-describedby={hintId} />
              Stay signed in for 14 days
            </label>
            <span className="hint" id={hintId}>
              Without it, the session ends after 30 minutes without activity, or after 12 hours at most.
            </span>
          </div>
          <div className="row">
            <button type="submit" disabled={waiting}>{waiting ? "Logging in…" : "Log in"}</button>
            <Link href="/reset-password">Forgot your password?</Link>
          </div>
        </form>
      </div>
      <p>
        No account yet? <Link href="/signup">Sign up — 14 days free</Link>
      </p>
    </>
  )
}

/** The second step, on the same page: a code from the authenticator app or a recovery code. */
const CodeStep = ({ step, onRestart, onLoggedIn }: {
  readonly step: SecondStep
  readonly onRestart: () => void
  readonly onLoggedIn: (csrfToken: string) => void
}) => {
  const [result, run] = useMutation(logInSecondFactor)
  const waiting = result.waiting
  // The challenge expired (5 minutes) or was used: only a new log-in helps.
  const expired = AsyncResult.isFailure(result) && errorType(result.cause) === "invalid_link"
  return (
    <>
      <h1>Two-factor sign-in</h1>
      <div className="panel">
        {expired
          ? (
            <>
              <MutationStatus result={result} />
              <div className="row">
                <button type="button" onClick={onRestart}>Log in again</button>
              </div>
            </>
          )
          : (
            <form
              onSubmit={async (event) => {
                event.preventDefault()
                const code = formValues(event.currentTarget).get("code").trim()
                const exit = await run({
                  payload: { challenge: step.challenge, code, staySignedIn: step.staySignedIn },
                  reactivityKeys: LOGGED_IN_KEYS
                })
                if (Exit.isSuccess(exit)) onLoggedIn(exit.value.csrfToken)
              }}
            >
              <p className="muted">
                Your password was right. Open your authenticator app and type the code it shows for sitehealth.
              </p>
              <MutationStatus result={result} />
              <Field label="6-digit code" hint="Or type one of your recovery codes.">
                <input
                  name="code"
                  inputMode="numeric"
                  autoComplete="one-time-code"
                  autoCapitalize="off"
                  spellCheck={false}
                  maxLength={40}
                  required
                  autoFocus
                />
              </Field>
              <div className="row">
                <button type="submit" disabled={waiting}>{waiting ? "Checking…" : "Log in"}</button>
                <button type="button" className="secondary" onClick={onRestart}>Start over</button>
              </div>
            </form>
          )}
      </div>
    </>
  )
}

export const SignUpPage = () => {
  const [result, run] = useMutation(signUp)
  const [done, setDone] = useState<string | null>(null)
  if (done !== null) {
    return (
      <>
        <h1>Check your email</h1>
        <div className="alert ok" role="status">
          <p>{done}</p>
        </div>
        <p>
          <Link href="/login">Go to log in</Link>
        </p>
      </>
    )
  }
  return (
    <>
      <h1>Create your account</h1>
      <p className="muted">Your 14-day free trial starts when you sign up. No card needed.</p>
      <div className="panel">
        <form
          onSubmit={async (event) => {
            event.preventDefault()
            const form = formValues(event.currentTarget)
            const exit = await run({ payload: { email: form.get("email").trim(), password: form.get("password") } })
            if (Exit.isSuccess(exit)) setDone(exit.value.message)
          }}
        >
          <MutationStatus result={result} />
          <Field label="Email">
            <input name="email" type="email" autoComplete="email" required />
          </Field>
          <NewPasswordField label="Password" name="password" />
          <div className="row">
            <button type="submit" disabled={result.waiting}>{result.waiting ? "Creating…" : "Sign up"}</button>
          </div>
        </form>
      </div>
      <p>
        Already have an account? <Link href="/login">Log in</Link>
      </p>
    </>
  )
}
