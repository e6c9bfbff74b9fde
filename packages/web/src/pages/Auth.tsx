/** Log in and sign up. Both answer the same for a registered or unknown address: the server decides. */
import { Exit } from "effect"
import { useState } from "react"
import { PASSWORD_MIN_LENGTH } from "@sitehealth/domain/Dashboard"
import { Keys, logIn, setCsrfToken, signUp } from "../client.ts"
import { useMutation } from "../hooks.ts"
import { Link, navigate, useLocation } from "../router.tsx"
import { Field, formValues } from "../forms.tsx"
import { MutationStatus } from "../ui.tsx"

/** Only a path on this site (never `//evil.example` or a full URL) may be the page to go back to. */
const safeNext = (next: string | null) =>
  next !== null && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : "/websites"

export const LogInPage = () => {
  const { query } = useLocation()
  const [result, run] = useMutation(logIn)
  const waiting = result.waiting
  return (
    <>
      <h1>Log in</h1>
      <div className="panel">
        <form
          onSubmit={async (event) => {
            event.preventDefault()
            const form = formValues(event.currentTarget)
            const exit = await run({
              payload: { email: form.get("email").trim(), password: form.get("password") },
              reactivityKeys: [Keys.session, Keys.sessions, Keys.websites, Keys.tokens, Keys.account]
            })
            if (Exit.isSuccess(exit)) {
              setCsrfToken(exit.value.csrfToken)
              navigate(safeNext(query.get("next")))
            }
          }}
        >
          <MutationStatus result={result} />
          <Field label="Email">
            <input name="email" type="email" autoComplete="username" required />
          </Field>
          <Field label="Password">
            <input name="password" type="password" autoComplete="current-password" required />
          </Field>
          <div className="row">
            <button type="submit" disabled={waiting}>{waiting ? "Logging in…" : "Log in"}</button>
            <Link href="/reset-password">Forgot your password?</Link>
          </div>
        </form>
      </div>
      <p>No account yet? <Link href="/signup">Sign up — 14 days free</Link></p>
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
        <p><Link href="/login">Go to log in</Link></p>
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
          <Field label="Password" hint={`At least ${PASSWORD_MIN_LENGTH} characters.`}>
            <input name="password" type="password" autoComplete="new-password" minLength={PASSWORD_MIN_LENGTH} required />
          </Field>
          <div className="row">
            <button type="submit" disabled={result.waiting}>{result.waiting ? "Creating…" : "Sign up"}</button>
          </div>
        </form>
      </div>
      <p>Already have an account? <Link href="/login">Log in</Link></p>
    </>
  )
}
