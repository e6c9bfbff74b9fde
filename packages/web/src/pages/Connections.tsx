/**
 * A website's connections (dashboard-only): each provider's status, last sync and last error in words,
 * "sync now", disconnect, and reconnect for Search Console (Google's consent again); forms to connect Stripe (a
 * restricted key, with the read permissions it needs)
 * and Plausible (API key + site id), both checked live by the server before anything is stored; Search
 * Console through Google's consent screen, then the property picked on `/oauth/google/callback`.
 */
import { useAtomValue } from "@effect/atom-react"
import type { Connection } from "@sitehealth/domain/DashboardConnections"
import { Exit } from "effect"
import { AsyncResult } from "effect/reactivity"
import { useEffect, useMemo, useRef, useState } from "react"
import { Keys } from "../client.ts"
import {
  connectGoogle,
  connectionsAtom,
  connectPlausible,
  connectStripe,
  disconnect,
  googleCallback,
  startGoogle,
  syncNow
} from "../connectionsClient.ts"
import { formatDate } from "../format.ts"
import { Field, formValues, Result } from "../forms.tsx"
import { useMutation } from "../hooks.ts"
import { Link, navigate, useLocation } from "../navigation.tsx"
import { Can, useCan } from "../roles.tsx"
import { ErrorMessage, Loading, MutationStatus } from "../ui.tsx"

/** Why Search Console cannot be connected (or reconnected) on this server. */
const NO_GOOGLE_CLIENT =
  "This server has no Google OAuth client: its operator sets GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET."

const when = (
  d: string | null
) => (d === null
  ? "never"
  : new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" }).format(new Date(d)))

/**
 * Google's consent screen for this website (Search Console): the server starts an OAuth flow (state, PKCE)
 * and the browser goes to Google, which sends it back to `/oauth/google/callback`. Connecting and
 * reconnecting are the same flow: the property picked there replaces any stored credentials.
 */
const useGoogleConsent = (websiteId: string) => {
  const [started, run] = useMutation(startGoogle)
  const go = async () => {
    const exit = await run({ params: { id: websiteId } })
    if (Exit.isSuccess(exit)) window.location.assign(exit.value.authorizeUrl)
  }
  return [started, go] as const
}

/**
 * `googleConfigured`: this server can start Google's consent, so a Search Console connection can be
 * reconnected — what its error asks for when Google refused the stored grant (revoked, expired).
 */
const ConnectionRow = ({ websiteId, c, syncButton, googleConfigured }: {
  readonly websiteId: string
  readonly c: Connection
  readonly syncButton: boolean
  readonly googleConfigured: boolean
}) => {
  const [synced, sync] = useMutation(syncNow)
  const [removed, remove] = useMutation(disconnect)
  const [reconnecting, reconnect] = useGoogleConsent(websiteId)
  const [confirming, setConfirming] = useState(false)
  const params = { id: websiteId, provider: c.provider }
  const admin = useCan("admin")
  const reconnectable = c.provider === "google-search-console" && googleConfigured && admin
  return (
    <li className="panel">
      <h3>
        {c.name} <span className="badge">{c.status.replace("_", " ")}</span>
      </h3>
      {c.detail !== null ? <p className="muted">{c.detail}</p> : null}
      {c.status !== "not_connected" && syncButton
        ? (
          <p>
            Last sync: {when(c.lastSyncAt)}
            {c.connectedAt !== null ? ` · connected ${formatDate(c.connectedAt)}` : ""}
          </p>
        )
        : null}
      {c.lastError !== null && syncButton
        ? (
          <div className="alert error" role="alert">
            <strong>Last sync failed.</strong>
            <p>{c.lastError}</p>
          </div>
        )
        : null}
      <MutationStatus result={synced} />
      <MutationStatus result={removed} />
      {reconnectable ? <MutationStatus result={reconnecting} /> : null}
      {c.provider === "google-search-console" && c.status === "error" && !googleConfigured
        ? (
          <p data-testid="reconnect-unavailable">
            Reconnecting needs Google sign-in. {NO_GOOGLE_CLIENT} Until then you can disconnect it.
          </p>
        )
        : null}
      {AsyncResult.isSuccess(synced) ? <p role="status">Sync queued.</p> : null}
      {c.status !== "not_connected" && admin
        ? (
          <div className="row">
            {syncButton
              ? (
                <button
                  type="button"
                  className="secondary"
                  disabled={synced.waiting}
                  onClick={() => sync({ params, reactivityKeys: [Keys.connections] })}
                >
                  Sync {c.name} now
                </button>
              )
              : null}
            {reconnectable
              ? (
                <button
                  type="button"
                  className={c.status === "error" ? undefined : "secondary"}
                  disabled={reconnecting.waiting}
                  onClick={reconnect}
                >
                  Reconnect {c.name}
                </button>
              )
              : null}
            {confirming
              ? (
                <>
                  <span>Disconnect {c.name}? Its stored credentials are deleted.</span>
                  <button
                    type="button"
                    className="danger"
                    onClick={() => remove({ params, reactivityKeys: [Keys.connections] })}
                  >
                    Yes, disconnect
                  </button>
                  <button type="button" className="secondary" onClick={() => setConfirming(false)}>Cancel</button>
                </>
              )
              : (
                <button type="button" className="secondary" onClick={() => setConfirming(true)}>
                  Disconnect {c.name}
                </button>
              )}
          </div>
        )
        : null}
    </li>
  )
}

/**
 * `syncButtons: false` where the page already shows each provider's sync state and offers "sync now" (the
 * Integrations tab, with its live progress): then only connecting and disconnecting are offered here.
 */
export const Connections = (
  { websiteId, syncButtons = true }: { readonly websiteId: string; readonly syncButtons?: boolean }
) => {
  const atom = useMemo(() => connectionsAtom(websiteId), [websiteId])
  const list = useAtomValue(atom)
  const [stripe, runStripe] = useMutation(connectStripe)
  const [plausible, runPlausible] = useMutation(connectPlausible)
  const [google, connectWithGoogle] = useGoogleConsent(websiteId)
  const admin = useCan("admin")
  return (
    <section aria-labelledby="connections-heading">
      <h2 id="connections-heading">Connections</h2>
      <Can level="admin" what="connecting, syncing and disconnecting providers">{null}</Can>
      <Result result={list} what="the connections">
        {(l) => {
          // A provider is offered for connecting only to a member who may connect it.
          const status = (p: string) =>
            admin ? l.connections.find((c) => c.provider === p)?.status ?? "not_connected" : "hidden"
          return (
            <>
              <ul className="plain">
                {l.connections.filter((c) => c.status !== "not_connected").map((c) => (
                  <ConnectionRow
                    key={c.provider}
                    websiteId={websiteId}
                    c={c}
                    syncButton={syncButtons}
                    googleConfigured={l.googleConfigured}
                  />
                ))}
              </ul>
              {status("stripe") === "not_connected"
                ? (
                  <div className="panel">
                    <h3>Connect Stripe</h3>
                    <p>
                      Create a restricted key in Stripe with read access to:{" "}
                      {l.stripePermissions.map((p) => p.label).join(", ")}. It is checked with Stripe before it is
                      stored, encrypted.
                    </p>
                    <form
                      onSubmit={async (e) => {
                        e.preventDefault()
                        const form = e.currentTarget
                        const exit = await runStripe({
                          params: { id: websiteId },
                          payload: { key: formValues(form).get("key").trim() },
                          reactivityKeys: [Keys.connections]
                        })
                        if (Exit.isSuccess(exit)) form.reset()
                      }}
                    >
                      <MutationStatus result={stripe} />
                      <Field label="Stripe restricted key">
                        <input name="key" required autoComplete="off" spellCheck={false} placeholder="rk_live_…" />
                      </Field>
                      <div className="row">
                        <button type="submit" disabled={stripe.waiting}>
                          {stripe.waiting ? "Checking…" : "Connect Stripe"}
                        </button>
                      </div>
                    </form>
                  </div>
                )
                : null}
              {status("plausible") === "not_connected"
                ? (
                  <div className="panel">
                    <h3>Connect Plausible</h3>
                    <form
                      onSubmit={async (e) => {
                        e.preventDefault()
                        const form = e.currentTarget
                        const v = formValues(form)
                        const exit = await runPlausible({
                          params: { id: websiteId },
                          payload: { apiKey: v.get("apiKey").trim(), siteId: v.get("siteId").trim() },
                          reactivityKeys: [Keys.connections]
                        })
                        if (Exit.isSuccess(exit)) form.reset()
                      }}
                    >
                      <MutationStatus result={plausible} />
                      <Field label="Plausible API key">
                        <input name="apiKey" required autoComplete="off" spellCheck={false} />
                      </Field>
                      <Field label="Plausible site id" hint="The site's domain as registered in Plausible.">
                        <input name="siteId" required spellCheck={false} />
                      </Field>
                      <div className="row">
                        <button type="submit" disabled={plausible.waiting}>
                          {plausible.waiting ? "Checking…" : "Connect Plausible"}
                        </button>
                      </div>
                    </form>
                  </div>
                )
                : null}
              {status("google-search-console") === "not_connected"
                ? (
                  <div className="panel">
                    <h3>Connect Google Search Console</h3>
                    {l.googleConfigured
                      ? (
                        <>
                          <p>You will sign in with Google and allow read-only access, then pick the property.</p>
                          <MutationStatus result={google} />
                          <button type="button" disabled={google.waiting} onClick={connectWithGoogle}>
                            Connect with Google
                          </button>
                        </>
                      )
                      : <p>{NO_GOOGLE_CLIENT}</p>}
                  </div>
                )
                : null}
            </>
          )
        }}
      </Result>
    </section>
  )
}

/** `/oauth/google/callback?code&state` (Google sends the browser here): exchange, then pick the property. */
export const GoogleCallbackPage = () => {
  const { query } = useLocation()
  const [authorized, run] = useMutation(googleCallback)
  const [chosen, choose] = useMutation(connectGoogle)
  const started = useRef(false)
  const code = query.get("code")
  const state = query.get("state")
  const denied = query.get("error")
  useEffect(() => {
    if (started.current || code === null || state === null) return
    started.current = true
    void run({ payload: { code, state } })
  }, [code, state, run])
  if (denied !== null || code === null || state === null) {
    return (
      <>
        <h1>Google Search Console</h1>
        <ErrorMessage
          error={{
            type: "oauth_failed",
            message: denied !== null
              ? `Google did not grant access (${denied}).`
              : "This page needs the code and state Google sends back. Start again from the website's page."
          }}
        />
        <p>
          <Link href="/websites">Back to your websites</Link>
        </p>
      </>
    )
  }
  return (
    <>
      <h1>Google Search Console</h1>
      {AsyncResult.isFailure(authorized)
        ? (
          <>
            <ErrorMessage cause={authorized.cause} title="Google's answer could not be used." />
            <p>
              <Link href="/websites">Back to your websites</Link>
            </p>
          </>
        )
        : AsyncResult.isSuccess(authorized)
        ? (
          authorized.value.properties.length === 0
            ? (
              <p>
                This Google account has no Search Console property.{" "}
                <Link href={`/websites/${encodeURIComponent(authorized.value.websiteId)}/integrations`}>
                  Back to the website
                </Link>
              </p>
            )
            : (
              <form
                className="panel"
                onSubmit={async (e) => {
                  e.preventDefault()
                  const { websiteId, flow } = authorized.value
                  const exit = await choose({
                    params: { id: websiteId },
                    payload: { flow, siteUrl: formValues(e.currentTarget).get("siteUrl") },
                    reactivityKeys: [Keys.connections]
                  })
                  if (Exit.isSuccess(exit)) navigate(`/websites/${encodeURIComponent(websiteId)}/integrations`)
                }}
              >
                <MutationStatus result={chosen} />
                <fieldset>
                  <legend>Pick the property for this website</legend>
                  {authorized.value.properties.map((p, i) => (
                    <label className="check" key={p.siteUrl}>
                      <input type="radio" name="siteUrl" value={p.siteUrl} defaultChecked={i === 0} /> {p.siteUrl}{" "}
                      <span className="muted">({p.permissionLevel})</span>
                    </label>
                  ))}
                </fieldset>
                <div className="row">
                  <button type="submit" disabled={chosen.waiting}>Connect this property</button>
                </div>
              </form>
            )
        )
        : <Loading what="your Search Console properties" />}
    </>
  )
}
