/**
 * A website's integrations (`/websites/:id/integrations`): each provider's status, last successful sync,
 * last run and last error in words (/api/v1's integration list), "Sync now" (/api/v1's sync) with live
 * progress — queued, running, then finished and the new last-sync time, read by polling the list every
 * second while a run is queued or running — and, below, connecting and disconnecting providers.
 */
import { useAtomRefresh, useAtomValue } from "@effect/atom-react"
import { type Integration, PROVIDER_NAMES, type SyncRun } from "@sitehealth/domain/Integrations"
import { AsyncResult } from "effect/reactivity"
import { useEffect, useMemo } from "react"
import { useMutation } from "../../hooks.ts"
import { integrationsAtom, ReportKeys, syncIntegration } from "../../reportsClient.ts"
import { useCan } from "../../roles.tsx"
import { MutationStatus } from "../../ui.tsx"
import { Connections } from "../Connections.tsx"
import { Busy, formatWhen, Outcome, settled, type WebsitePageProps } from "./shared.tsx"

const WHAT: Record<string, string> = {
  payments: "revenue, MRR and churn",
  analytics: "traffic",
  search: "search clicks, impressions and rankings"
}

const pending = (run: SyncRun | null) => run !== null && (run.status === "queued" || run.status === "running")

const time = (
  d: string | null
) => (d === null ? "—" : new Intl.DateTimeFormat(undefined, { timeStyle: "medium" }).format(new Date(d)))

/** The last run in words: what it is doing, or how it ended. */
/** `errorShown`: the alert above already says the run's error, so it is not repeated here. */
const RunProgress = ({ run, errorShown }: { readonly run: SyncRun; readonly errorShown: boolean }) => {
  if (run.status === "queued") return <>Sync queued at {time(run.requestedAt)}, waiting for the worker…</>
  if (run.status === "running") return <>Syncing since {time(run.startedAt)}…</>
  if (run.status === "failed") {
    return (
      <>The sync of {formatWhen(run.finishedAt)} failed{run.error !== null && !errorShown ? `: ${run.error}` : "."}</>
    )
  }
  const counts = Object.entries(run.counts ?? {}).map(([k, n]) => `${n} ${k}`).join(", ")
  return <>Sync finished at {time(run.finishedAt)}{counts !== "" ? `: ${counts}` : ""}.</>
}

const IntegrationCard = (
  { websiteId, integration: i }: { readonly websiteId: string; readonly integration: Integration }
) => {
  const [synced, sync] = useMutation(syncIntegration)
  const admin = useCan("admin")
  const name = PROVIDER_NAMES[i.provider]
  const connected = i.status !== "not_connected"
  return (
    <li className="panel integration" data-provider={i.provider}>
      <h2 className="h3">
        {name} <span className={`badge status-${i.status}`}>{i.status.replace("_", " ")}</span>
      </h2>
      <p className="muted">Brings {WHAT[i.kind] ?? i.kind}.</p>
      {connected
        ? (
          <dl className="facts">
            <dt>Last sync</dt>
            <dd data-testid="last-sync">{formatWhen(i.lastSuccessAt)}</dd>
            <dt>Connected</dt>
            <dd>{formatWhen(i.connectedAt)}</dd>
            {i.syncIntervalMinutes !== null
              ? (
                <>
                  <dt>Syncs</dt>
                  <dd>every {i.syncIntervalMinutes} minutes</dd>
                </>
              )
              : null}
          </dl>
        )
        : <p>Not connected: connect it below to see {WHAT[i.kind] ?? "its data"}.</p>}
      {i.lastError !== null && i.status === "error"
        ? (
          <div className="alert error" role="alert">
            <strong>The last sync failed.</strong>
            <p>{i.lastError}</p>
          </div>
        )
        : null}
      <p role="status" aria-live="polite" data-testid="progress" className={pending(i.lastRun) ? "progress" : "muted"}>
        {i.lastRun !== null
          ? (
            <RunProgress
              run={i.lastRun}
              errorShown={i.status === "error" && i.lastError !== null && i.lastError === i.lastRun.error}
            />
          )
          : null}
      </p>
      <MutationStatus result={synced} />
      {connected && admin
        ? (
          <button
            type="button"
            disabled={synced.waiting || pending(i.lastRun)}
            onClick={() =>
              sync({
                params: { id: websiteId, provider: i.provider },
                payload: null,
                reactivityKeys: [ReportKeys.integrations]
              })}
          >
            {pending(i.lastRun) ? "Syncing…" : `Sync ${name} now`}
          </button>
        )
        : null}
    </li>
  )
}

export default function IntegrationsPage({ website }: WebsitePageProps) {
  const atom = useMemo(() => integrationsAtom(website.id), [website.id])
  const list = useAtomValue(atom)
  const refresh = useAtomRefresh(atom)
  const running = AsyncResult.isSuccess(list) && list.value.integrations.some((i) => pending(i.lastRun))
  // Live progress: while a run is queued or running, read the list again every second.
  useEffect(() => {
    if (!running) return
    const timer = setInterval(refresh, 1000)
    return () => clearInterval(timer)
  }, [running, refresh])
  return (
    <>
      <h1>Integrations</h1>
      <Busy busy={AsyncResult.isInitial(list) || (!settled(list) && !AsyncResult.isSuccess(list))} />
      <Outcome atom={atom} result={list} what="the integrations">
        {({ integrations }) => (
          <ul className="plain integrations">
            {integrations.map((i) => <IntegrationCard key={i.provider} websiteId={website.id} integration={i} />)}
          </ul>
        )}
      </Outcome>
      <Connections websiteId={website.id} syncButtons={false} />
    </>
  )
}
