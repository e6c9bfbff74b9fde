/**
 * The first sync, visible on the website's home (docs/first-five-minutes.md): from "Connect Stripe" to the first
 * briefing, each provider connected but not yet synced once shows where it is — connected, importing (queued,
 * running, with what it fetched once done), computing the briefing — and the briefing and health beside it are
 * read again as soon as the import lands, without a reload. Polls the integrations every second while there is
 * something to wait for, and the briefing while the server has not yet composed it from the new data; nothing
 * otherwise. Shows nothing for a website whose providers have all synced.
 */
import { useAtomRefresh, useAtomValue } from "@effect/atom-react"
import { type Integration, PROVIDER_NAMES } from "@sitehealth/domain/Integrations"
import type { Briefing, DataSources, Health } from "@sitehealth/domain/Projects"
import { AsyncResult, type Atom } from "effect/reactivity"
import { useEffect, useMemo, useRef } from "react"
import { Link, websiteHref } from "../../navigation.tsx"
import { integrationsAtom } from "../../reportsClient.ts"
import type { WebsitePageProps } from "./shared.tsx"

const KIND: Record<Integration["kind"], keyof DataSources> = {
  payments: "payments",
  analytics: "analytics",
  search: "search"
}

type Stage = "queued" | "importing" | "failed" | "computing"

/** Where a connected provider's first sync stands, or null when it has landed and the briefing knows it. */
export const stageOf = (i: Integration, sources: DataSources | null): Stage | null => {
  if (i.status === "not_connected") return null
  if (i.lastSuccessAt !== null) return sources !== null && sources[KIND[i.kind]] === "syncing" ? "computing" : null
  if (i.lastRun?.status === "running") return "importing"
  if (i.lastRun?.status === "failed") return "failed"
  return "queued"
}

const time = (d: string | null) =>
  d === null ? "" : new Intl.DateTimeFormat(undefined, { timeStyle: "medium" }).format(new Date(d))

const Step = ({ done, current, children }: { done: boolean; current: boolean; children: React.ReactNode }) => (
  <li data-done={done} aria-current={current ? "step" : undefined}>
    <span aria-hidden="true">{done ? "✓" : current ? "…" : "·"}</span> {children}
  </li>
)

export const FirstSync = (
  { website, briefing, health }: {
    readonly website: WebsitePageProps["website"]
    readonly briefing: Atom.Atom<AsyncResult.AsyncResult<Briefing, unknown>>
    readonly health: Atom.Atom<AsyncResult.AsyncResult<Health, unknown>>
  }
) => {
  const atom = useMemo(() => integrationsAtom(website.id), [website.id])
  const list = useAtomValue(atom)
  const b = useAtomValue(briefing)
  const refreshList = useAtomRefresh(atom)
  const refreshBriefing = useAtomRefresh(briefing)
  const refreshHealth = useAtomRefresh(health)
  const sources = AsyncResult.isSuccess(b) ? b.value.sources : null
  const integrations = AsyncResult.isSuccess(list) ? list.value.integrations : []
  const stages = integrations.map((i) => [i, stageOf(i, sources)] as const).filter(([, s]) => s !== null)
  const waiting = stages.some(([, s]) => s === "queued" || s === "importing")
  const computing = stages.some(([, s]) => s === "computing") ||
    (sources !== null && Object.values(sources).includes("syncing") && !waiting)
  // The import landed (a first success appeared): the briefing and the health are read again at once.
  const landed = integrations.filter((i) => i.lastSuccessAt !== null).map((i) => i.provider).join(",")
  const seen = useRef(landed)
  useEffect(() => {
    if (seen.current === landed) return
    seen.current = landed
    refreshBriefing()
    refreshHealth()
  }, [landed, refreshBriefing, refreshHealth])
  // A first sync that failed is retried by the worker: read again, less often.
  const failed = stages.some(([, s]) => s === "failed")
  useEffect(() => {
    if (!waiting && !computing && !failed) return
    const timer = setInterval(() => {
      refreshList()
      if (computing) {
        refreshBriefing()
        refreshHealth()
      }
    }, waiting || computing ? 1000 : 5000)
    return () => clearInterval(timer)
  }, [waiting, computing, failed, refreshList, refreshBriefing, refreshHealth])
  if (stages.length === 0) return null
  return (
    <section className="panel first-sync" aria-labelledby="first-sync-heading" data-testid="first-sync">
      <h2 id="first-sync-heading">Setting up</h2>
      {stages.map(([i, stage]) => {
        const name = PROVIDER_NAMES[i.provider]
        const run = i.lastRun
        return (
          <div key={i.provider} role="status" data-provider={i.provider} data-stage={stage}>
            <ol className="steps">
              <Step done current={false}>
                {name} connected{i.connectedAt !== null ? ` at ${time(i.connectedAt)}` : ""}
              </Step>
              <Step done={stage === "computing"} current={stage === "queued" || stage === "importing"}>
                {stage === "queued"
                  ? "Import queued, waiting for the worker…"
                  : stage === "importing"
                  ? `Importing from ${name} since ${time(run?.startedAt ?? null)}…`
                  : stage === "failed"
                  ? (
                    <>
                      The import failed{run?.error ? `: ${run.error}` : ""}; it is retried.{" "}
                      <Link href={websiteHref(website.id, "integrations")}>See {name} on Integrations</Link>
                    </>
                  )
                  : `Imported${
                    run?.counts ? `: ${Object.entries(run.counts).map(([k, n]) => `${n} ${k}`).join(", ")}` : ""
                  }.`}
              </Step>
              <Step done={false} current={stage === "computing"}>
                {stage === "computing" ? "Computing your health score and briefing…" : "Your briefing, from the data"}
              </Step>
            </ol>
          </div>
        )
      })}
    </section>
  )
}
