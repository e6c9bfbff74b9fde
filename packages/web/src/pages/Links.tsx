/**
 * The pages the mailed links open: `/verify-email?token=…` verifies at once; `/reset-password` asks for the
 * email (and mails a link), `/reset-password?token=…` sets the new password.
 */
import { Exit } from "effect"
import { AsyncResult } from "effect/reactivity"
import { useEffect, useRef, useState } from "react"
import { Keys, requestReset, resetPassword, verifyEmail } from "../client.ts"
import { Field, formValues, NewPasswordField } from "../forms.tsx"
import { useMutation } from "../hooks.ts"
import { Link, useLocation } from "../navigation.tsx"
import { ErrorMessage, Loading, MutationStatus } from "../ui.tsx"

export const VerifyEmailPage = () => {
  const token = useLocation().query.get("token")
  const [result, run] = useMutation(verifyEmail)
  const started = useRef(false)
  useEffect(() => {
    if (token === null || token === "" || started.current) return
    started.current = true
    void run({ payload: { token }, reactivityKeys: [Keys.session] })
  }, [token, run])
  if (token === null || token === "") {
    return (
      <>
        <h1>Verify your email</h1>
        <ErrorMessage
          error={{
            message: "This link has no token. Open the link from the mail exactly as it was sent.",
            type: "invalid_link"
          }}
        />
      </>
    )
  }
  return (
    <>
      <h1>Verify your email</h1>
      {AsyncResult.isSuccess(result)
        ? (
          <div className="alert ok" role="status">
            <strong>Your email {result.value.email} is verified.</strong>
            <p>
              <Link href="/login">Log in</Link> to add your first website.
            </p>
          </div>
        )
        : AsyncResult.isFailure(result)
        ? (
          <>
            <ErrorMessage cause={result.cause} title="This link did not verify your email." />
            <p>
              Links work once and expire. <Link href="/login">Log in</Link> to get a new one, or{" "}
              <Link href="/signup">sign up again</Link>.
            </p>
          </>
        )
        : <Loading what="the verification" />}
    </>
  )
}

export const ResetPasswordPage = () => {
  const token = useLocation().query.get("token")
  return token === null || token === "" ? <RequestReset /> : <ChooseNewPassword token={token} />
}

const RequestReset = () => {
  const [result, run] = useMutation(requestReset)
  const [done, setDone] = useState<string | null>(null)
  return (
    <>
      <h1>Reset your password</h1>
      {done !== null
        ? (
          <div className="alert ok" role="status">
            <strong>{done}</strong>
          </div>
        )
        : (
          <div className="panel">
            <form
              onSubmit={async (event) => {
                event.preventDefault()
                const exit = await run({ payload: { email: formValues(event.currentTarget).get("email").trim() } })
                if (Exit.isSuccess(exit)) setDone(exit.value.message)
              }}
            >
              <p className="muted">We will mail you a link to choose a new password.</p>
              <MutationStatus result={result} />
              <Field label="Email">
                <input name="email" type="email" autoComplete="email" required />
              </Field>
              <div className="row">
                <button type="submit" disabled={result.waiting}>Send the link</button>
              </div>
            </form>
          </div>
        )}
      <p>
        <Link href="/login">Back to log in</Link>
      </p>
    </>
  )
}

const ChooseNewPassword = ({ token }: { readonly token: string }) => {
  const [result, run] = useMutation(resetPassword)
  return (
    <>
      <h1>Choose a new password</h1>
      {AsyncResult.isSuccess(result)
        ? (
          <div className="alert ok" role="status">
            <strong>{result.value.message}</strong>
            <p>
              Every session was logged out. <Link href="/login">Log in</Link> with the new password.
            </p>
          </div>
        )
        : (
          <div className="panel">
            <form
              onSubmit={async (event) => {
                event.preventDefault()
                await run({ payload: { token, password: formValues(event.currentTarget).get("password") } })
              }}
            >
              <MutationStatus result={result} />
              <NewPasswordField label="New password" name="password" />
              <div className="row">
                <button type="submit" disabled={result.waiting}>Set the password</button>
              </div>
            </form>
          </div>
        )}
    </>
  )
}
