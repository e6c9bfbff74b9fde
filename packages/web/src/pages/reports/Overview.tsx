/**
 * The overview (`/overview`): every website with its health score, the trend since last week (the daily
 * scores of the last 8 days as a sparkline, and `trend.scoreChange7d`), the top
 * priority of its briefing and a badge for failing integrations, sorted by what needs attention first:
 *
 *   1. the severity of the briefing's top priority: critical, then warning, then info, then none;
 *   2. then more failing integrations first (its figures may be stale);
 *   3. then the lower health score first (a website without data yet comes after every scored one);
 *   4. then the steeper fall over the last 7 days first;
 *   5. then by name.
 *
 * Rows appear in health order while the briefings and integrations load, and take their final order once
 * every one has answered. Figures come from the same operations as /api/v1: the projects list (score and
 * trend), each website's briefing and integrations.
 */
import { useAtomValue } from "@effect/atom-react"
import { type IntegrationList, PROVIDER_NAMES } from "@sitehealth/domain/Integrations"
import type { Briefing, Project } from "@sitehealth/domain/Projects"
import { AsyncResult, Atom } from "effect/reactivity"
import { useMemo } from "react"
import { Link, websiteHref } from "../../navigation.tsx"
import { overviewAtom, overviewBriefingAtom, overviewIntegrationsAtom } from "../../overviewClient.ts"
import { Busy, Outcome, settled, Sparkline, statusLabel, useBusy } from "./outcome.tsx"

const SEVERITY_RANK: Record<string, number> = { critical: 0, warning: 1, info: 2 }

interface Row {
  readonly project: Project
  readonly briefing: AsyncResult.AsyncResult<Briefing, unknown>
  readonly integrations: AsyncResult.AsyncResult<typeof IntegrationList.Type, unknown>
}

const topPriority = (r: Row) => (AsyncResult.isSuccess(r.briefing) ? r.briefing.value.priorities[0] ?? null : null)
const failing = (r: Row) =>
  AsyncResult.isSuccess(r.integrations) ? r.integrations.value.integrations.filter((i) => i.status === "error") : []

/** The attention order documented above: negative when `a` needs attention before `b`. */
export const byAttention = (a: Row, b: Row): number => {
  const sev = (r: Row) => SEVERITY_RANK[topPriority(r)?.severity ?? ""] ?? 3
  const score = (r: Row) => r.project.health.score ?? 101
  return sev(a) - sev(b) ||
    failing(b).length - failing(a).length ||
    score(a) - score(b) ||
    (a.project.trend.scoreChange7d ?? 0) - (b.project.trend.scoreChange7d ?? 0) ||
    a.project.name.localeCompare(b.project.name)
}

const Rows = ({ projects }: { readonly projects: ReadonlyArray<Project> }) => {
  const ids = projects.map((p) => p.id).join(",")
  // One atom over every website's briefing and integrations (each its own request, all at once).
  const all = useMemo(() => {
    const atoms = projects.map((p) => [overviewBriefingAtom(p.id), overviewIntegrationsAtom(p.id)] as const)
    return Atom.make((get) => atoms.map(([b, i]) => [get(b), get(i)] as const))
  }, [ids])
  const results = useAtomValue(all)
  const rows: Array<Row> = projects.map((project, i) => ({
    project,
    briefing: results[i]![0],
    integrations: results[i]![1]
  }))
  const done = rows.every((r) => settled(r.briefing) && settled(r.integrations))
  const sorted = done
    ? [...rows].sort(byAttention)
    : [...rows].sort((a, b) => (a.project.health.score ?? 101) - (b.project.health.score ?? 101))
  useBusy(!done)
  return (
    <>
      {done ? null : <p className="loading" role="status">Loading each website's briefing and integrations…</p>}
      <table className="cards overview">
        <thead>
          <tr>
            <th scope="col">Website</th>
            <th scope="col">Health</th>
            <th scope="col">Since last week</th>
            <th scope="col">Top priority</th>
            <th scope="col">Integrations</th>
          </tr>
        </thead>
        <tbody>
          {sorted.map((r) => <OverviewRow key={r.project.id} row={r} />)}
        </tbody>
      </table>
    </>
  )
}

const OverviewRow = ({ row }: { readonly row: Row }) => {
  const { project, briefing, integrations } = row
  const change = project.trend.scoreChange7d
  // The stored daily scores of the last week: the 8 latest points (a week ago … today).
  const week = project.trend.points.slice(-8)
  const priority = topPriority(row)
  const bad = failing(row)
  return (
    <tr data-website={project.id}>
      <th scope="row" data-label="Website">
        <Link href={websiteHref(project.id, "")}>{project.name}</Link>
        <div className="muted small">{project.domain}</div>
      </th>
      <td data-label="Health">
        <span className={`score status-${project.health.status}`} data-testid="score">
          {project.health.score ?? "—"}
        </span>{" "}
        <span className="muted">{statusLabel[project.health.status]}</span>
      </td>
      <td data-label="Since last week">
        <Sparkline
          points={week.map((p) => p.score)}
          label={`Health score, day by day since a week ago: ${week.map((p) => p.score ?? "no data").join(", ")}`}
        />{" "}
        <span data-testid="change7d">
          {change === null ? "—" : `${change > 0 ? "+" : change < 0 ? "−" : "±"}${Math.abs(change)}`}
        </span>
      </td>
      <td data-label="Top priority">
        {AsyncResult.isFailure(briefing)
          ? <span className="muted">Briefing unavailable</span>
          : !AsyncResult.isSuccess(briefing)
          ? <span className="loading">Loading…</span>
          : priority === null
          ? <span className="muted">Nothing needs attention</span>
          : (
            <>
              <span className={`badge sev-${priority.severity}`}>{priority.severity}</span>{" "}
              <Link href={websiteHref(project.id, "")}>{priority.title}</Link>
            </>
          )}
      </td>
      <td data-label="Integrations">
        {AsyncResult.isFailure(integrations)
          ? <span className="muted">Unavailable</span>
          : !AsyncResult.isSuccess(integrations)
          ? <span className="loading">Loading…</span>
          : bad.length > 0
          ? (
            <Link href={websiteHref(project.id, "integrations")} className="badge sev-critical">
              {bad.length} failing: {bad.map((i) => PROVIDER_NAMES[i.provider]).join(", ")}
            </Link>
          )
          : integrations.value.integrations.some((i) => i.status === "connected")
          ? <span className="muted">All syncing</span>
          : <Link href={websiteHref(project.id, "integrations")}>Connect a provider</Link>}
      </td>
    </tr>
  )
}

export default function OverviewPage() {
  const overview = useAtomValue(overviewAtom)
  return (
    <>
      <h1>Overview</h1>
      <p className="muted">Your websites, what needs attention first at the top.</p>
      <Outcome atom={overviewAtom} result={overview} what="your websites' health">
        {({ projects }) =>
          projects.length === 0
            ? <EmptyOverview />
            : <Rows projects={projects} />}
      </Outcome>
      {AsyncResult.isSuccess(overview) && overview.value.projects.length > 0
        ? null
        : <Busy busy={!settled(overview)} />}
    </>
  )
}

const EmptyOverview = () => {
  return (
    <p>
      No website yet.{" "}
      <Link href="/websites?add=1">Add one</Link>, then connect Plausible, Stripe or Search Console to see its health
      here.
    </p>
  )
}
