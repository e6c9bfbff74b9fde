/**
 * The building blocks of the pages' own content — an atom's result, labelled fields, form values, a copy
 * button — apart from ui.tsx (what the shell itself draws), so that they load with the pages that use them
 * and not on a first screen that has none (the overview).
 */
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "@sitehealth/domain/Dashboard"
import { AsyncResult } from "effect/reactivity"
import { cloneElement, type ReactElement, type ReactNode, useId, useState } from "react"
import { ErrorMessage, Loading } from "./ui.tsx"

/** Renders an atom's result: loading, a failure in words, or the value. */
export function Result<A, E>({ result, what, children }: {
  readonly result: AsyncResult.AsyncResult<A, E>
  readonly what: string
  readonly children: (value: A) => ReactNode
}) {
  if (AsyncResult.isSuccess(result)) return <>{children(result.value)}</>
  if (AsyncResult.isFailure(result)) return <ErrorMessage cause={result.cause} title={`Could not load ${what}.`} />
  return <Loading what={what} />
}

export const CopyButton = ({ text, label }: { readonly text: string; readonly label: string }) => {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle")
  return (
    <>
      <button
        type="button"
        className="secondary"
        onClick={() => {
          navigator.clipboard.writeText(text).then(() => setState("copied"), () => setState("failed"))
        }}
      >
        {label}
      </button>
      <span role="status" aria-live="polite" className="muted">
        {state === "copied"
          ? " Copied."
          : state === "failed"
          ? " Copying failed: select the text and copy it yourself."
          : ""}
      </span>
    </>
  )
}

/** A labelled control; the hint is its description (aria-describedby), not part of its name. */
export const Field = ({ label, hint, children }: {
  readonly label: string
  readonly hint?: string
  readonly children: ReactElement<{ id?: string; "aria-describedby"?: string }>
}) => {
  const id = useId()
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {hint !== undefined ? <span className="hint" id={`${id}-hint`}>{hint}</span> : null}
      {cloneElement(children, { id, ...(hint !== undefined ? { "aria-describedby": `${id}-hint` } : {}) })}
    </div>
  )
}

/** A new password (sign-up, reset, change): the contract's length, and what the server refuses besides. */
export const NewPasswordField = ({ label, name }: { readonly label: string; readonly name: string }) => (
  <Field label={label} hint={`At least ${PASSWORD_MIN_LENGTH} characters. Common passwords are refused.`}>
    <input
      name={name}
      type="password"
      autoComplete="new-password"
      minLength={PASSWORD_MIN_LENGTH}
      maxLength={PASSWORD_MAX_LENGTH}
      required
    />
  </Field>
)

export const formValues = (form: HTMLFormElement) => {
  const data = new FormData(form)
  return {
    get: (name: string) => String(data.get(name) ?? ""),
    all: (name: string) => data.getAll(name).map(String)
  }
}
