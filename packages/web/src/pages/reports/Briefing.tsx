/**
 * A website's home, the morning briefing (`/websites/:id`): the headline; the priorities in order, each with
 * its evidence (the figure, what was expected, the change, the day) and a link to the page that shows it;
 * yesterday's key figures against the usual; the health score with its confidence and every dimension; and
 * what moved it (the score's change over 7 and 30 days, the dimensions pulling it down the most, the signals
 * new since yesterday). Each panel loads and fails on its own.
 */
import { useAtomRefresh, useAtomValue } from "@effect/atom-react"
import type { Briefing, Health, KeyFigure, Signal } from "@sitehealth/domain/Projects"
import { AsyncResult } from "effect/reactivity"
import { useEffect, useMemo, useRef } from "react"
import { Link, websiteHref } from "../../navigation.tsx"
import { briefingAtom, healthAtom, overviewAtom, signalsAtom } from "../../reportsClient.ts"
import { LikelyCause } from "./Annotations.tsx"
import { FirstSync } from "./FirstSync.tsx"
import {
  Busy,
  dimensionLabel,
  dimensionTab,
  formatChange,
  formatDay,
  formatMoney,
  formatNumber,
  formatPercent,
  Outcome,
  Panel,
  settled,
  statusLabel,
  tabLabel,
  type WebsitePageProps
} from "./shared.tsx"

/** Signal metrics in minor units of the reporting currency, and those that are ratios (docs/metrics.md, Signals). */
const MONEY_METRICS = new Set(["net_revenue", "mrr", "expenses"])
const RATE_METRICS = new Set(["logo_churn", "profit_margin", "mrr_growth"])

/** A signal's figure as words: "actual 412 visitors, expected 820 (640–990), −49.8 %". */
export const Evidence = ({ signal, currency }: { readonly signal: Signal; readonly currency: string }) => {
  const show = (n: number | null | undefined) =>
    MONEY_METRICS.has(signal.metric)
      ? formatMoney(n, currency)
      : RATE_METRICS.has(signal.metric)
      ? formatPercent(n)
      : formatNumber(n, 2)
  return (
    <dl className="facts evidence">
      <dt>Metric</dt>
      <dd>
        {signal.metric.replaceAll("_", " ")}
        {signal.subject !== null && signal.subject !== signal.metric ? ` · ${signal.subject}` : ""}
      </dd>
      <dt>Actual</dt>
      <dd data-testid="actual">{show(signal.actual)}</dd>
      <dt>Expected</dt>
      <dd data-testid="expected">
        {signal.expected === null
          ? "—"
          : (
            <>
              {show(signal.expected.value)}
              {signal.expected.low !== null && signal.expected.high !== null
                ? ` (normal ${show(signal.expected.low)}–${show(signal.expected.high)})`
                : ""}
            </>
          )}
      </dd>
      <dt>Change</dt>
      <dd>{formatChange(signal.change)}</dd>
      <dt>Day</dt>
      <dd>{formatDay(signal.day)}</dd>
      {signal.moneyAtStake !== null
        ? (
          <>
            <dt>At stake</dt>
            <dd>{formatMoney(signal.moneyAtStake.amount, signal.moneyAtStake.currency)}</dd>
          </>
        )
        : null}
    </dl>
  )
}

const Priorities = (
  { website, briefing }: { readonly website: WebsitePageProps["website"]; readonly briefing: Briefing }
) => {
  const signals = useMemo(() => signalsAtom(website.id, { active: "true" }), [website.id])
  const list = useAtomValue(signals)
  const refresh = useAtomRefresh(signals)
  const byId = new Map<string, Signal>()
  for (const s of briefing.whatChanged) byId.set(s.id, s)
  if (AsyncResult.isSuccess(list)) { for (const s of list.value.signals) byId.set(s.id, s) }
  // A briefing recomposed since the list was read (a first sync landed) names signals the list has not seen yet:
  // read it again, once per edition.
  const edition = `${briefing.generatedAt}|${briefing.updatedAt ?? ""}`
  const missing = AsyncResult.isSuccess(list) && briefing.priorities.some((p) => !byId.has(p.signalId))
  const refreshedFor = useRef("")
  useEffect(() => {
    if (!missing || refreshedFor.current === edition) return
    refreshedFor.current = edition
    refresh()
  }, [missing, edition, refresh])
  if (briefing.priorities.length === 0) {
    const states = Object.values(briefing.sources)
    // Nothing to rank is not "all is well" when there is nothing to rank from yet.
    return states.every((state) => state === "not_connected")
      ? (
        <p>
          Nothing to rank yet: the priorities come from your data. Connect a provider on the{" "}
          <Link href={websiteHref(website.id, "integrations")}>Integrations</Link> tab.
        </p>
      )
      : states.includes("syncing")
      ? <p>The priorities follow the first import, as soon as it lands.</p>
      : <p>Nothing needs your attention today. The figures below are within their usual range.</p>
  }
  return (
    <ol className="priorities">
      {briefing.priorities.map((p) => {
        const signal = byId.get(p.signalId)
        const tab = dimensionTab[p.dimension] ?? "signals"
        return (
          <li key={p.signalId} className="priority" data-rank={p.rank}>
            <h3>
              <span className={`badge sev-${p.severity}`}>{p.severity}</span> {p.title}
            </h3>
            <p>
              <strong>What to do:</strong> {p.action}
            </p>
            {p.moneyAtStake !== null
              ? <p>At stake: {formatMoney(p.moneyAtStake.amount, p.moneyAtStake.currency)}</p>
              : null}
            <LikelyCause cause={p.likelyCause} />
            {signal !== undefined
              ? (
                <>
                  <p className="muted">{signal.detail}</p>
                  <Evidence signal={signal} currency={website.currency} />
                </>
              )
              : AsyncResult.isFailure(list)
              ? <p className="muted">The evidence could not be loaded.</p>
              : AsyncResult.isSuccess(list) && !list.waiting && refreshedFor.current === edition
              ? null
              : <p className="loading">Loading the evidence…</p>}
            <p>
              <Link href={websiteHref(website.id, tab)}>See it on the {tabLabel(tab)} page</Link>
              {" · "}
              <Link href={websiteHref(website.id, "signals", { dimension: p.dimension })}>
                {dimensionLabel[p.dimension]} signals
              </Link>
            </p>
          </li>
        )
      })}
    </ol>
  )
}

const FIGURES: ReadonlyArray<readonly [keyof Briefing["yesterday"], string, boolean, string, string]> = [
  ["visitors", "Visitors", false, "analytics", "Plausible"],
  ["pageviews", "Page views", false, "analytics", "Plausible"],
  ["netRevenue", "Net revenue", true, "revenue", "Stripe"],
  ["newCustomers", "New customers", false, "revenue", "Stripe"],
  ["churnedCustomers", "Churned customers", false, "revenue", "Stripe"],
  ["mrr", "MRR", true, "revenue", "Stripe"]
]

/** A figure that is not data (docs/first-five-minutes.md, "No data is not zero"): why, and where to fix it. */
const NotData = (
  { website, state, provider }: {
    readonly website: WebsitePageProps["website"]
    readonly state: KeyFigure["state"]
    readonly provider: string
  }
) =>
  state === "syncing"
    ? <span className="muted" data-state="syncing">Syncing {provider}…</span>
    : (
      <span data-state={state}>
        <span className="muted">Not connected</span> ·{" "}
        <Link href={websiteHref(website.id, "integrations")}>Connect {provider}</Link>
      </span>
    )

const Yesterday = (
  { website, briefing }: { readonly website: WebsitePageProps["website"]; readonly briefing: Briefing }
) => {
  const y = briefing.yesterday
  const show = (f: KeyFigure, money: boolean) => (money ? formatMoney(f.value, y.currency) : formatNumber(f.value))
  return (
    <table className="cards figures">
      <caption className="sr-only">
        Yesterday ({y.date}) against the usual: the median of the same weekday over the previous 4 weeks
      </caption>
      <thead>
        <tr>
          <th scope="col">Figure</th>
          <th scope="col">Yesterday</th>
          <th scope="col">Usual</th>
          <th scope="col">Change</th>
        </tr>
      </thead>
      <tbody>
        {FIGURES.map(([key, label, money, tab, provider]) => {
          const f = y[key] as KeyFigure
          return (
            <tr key={key} data-figure={key}>
              <th scope="row" data-label="Figure">
                <Link href={websiteHref(website.id, tab)}>{label}</Link>
              </th>
              <td data-label="Yesterday" data-testid="value">
                {f.state === "connected"
                  ? show(f, money)
                  : <NotData website={website} state={f.state} provider={provider} />}
              </td>
              <td data-label="Usual">
                {f.usual === null ? "—" : money ? formatMoney(f.usual, y.currency) : formatNumber(f.usual)}
              </td>
              <td data-label="Change">{formatChange(f.change)}</td>
            </tr>
          )
        })}
      </tbody>
    </table>
  )
}

const HealthPanel = (
  { website, health }: { readonly website: WebsitePageProps["website"]; readonly health: Health }
) => {
  const overview = useAtomValue(overviewAtom)
  const trend = AsyncResult.isSuccess(overview)
    ? overview.value.projects.find((p) => p.id === website.id)?.trend
    : undefined
  const c = health.confidenceFactors
  // What pulls the score down the most: each scored dimension's distance below 75 (healthy) times its weight.
  const pulling = health.dimensions
    .filter((d) => d.score !== null)
    .map((d) => ({ d, pull: (d.score! - 75) * d.weight }))
    .sort((a, b) => a.pull - b.pull)
  return (
    <>
      {health.status === "no_data"
        ? (
          <div className="alert warn">
            <strong>No data yet.</strong>
            <p>
              Connect Plausible to see traffic, Stripe for revenue and churn, Search Console for search, on the{" "}
              <Link href={websiteHref(website.id, "integrations")}>Integrations</Link>{" "}
              tab; the score appears with the first sync.
            </p>
          </div>
        )
        : null}
      <p className="big-score">
        <span className={`score status-${health.status}`} data-testid="health-score">{health.score ?? "—"}</span>
        <span>/ 100 · {statusLabel[health.status]}</span>
      </p>
      <p className="muted" data-testid="health-as-of">As of {formatTime(health.computedAt)}.</p>
      <p>
        Confidence <strong data-testid="confidence">{formatPercent(health.confidence)}</strong>{" "}
        <span className="muted">
          (coverage {formatPercent(c.coverage)}, freshness {formatPercent(c.freshness)}, history{" "}
          {formatPercent(c.history)})
        </span>
      </p>
      <p className="muted">
        Comparing {formatDay(health.window.current.from)}–{formatDay(health.window.current.to)} with{" "}
        {formatDay(health.window.previous.from)}–{formatDay(health.window.previous.to)}.
      </p>
      <h3>What moved it</h3>
      <ul>
        {trend !== undefined
          ? (
            <li>
              Since last week:{" "}
              <strong>
                {trend.scoreChange7d === null
                  ? "no score a week ago"
                  : `${trend.scoreChange7d > 0 ? "+" : ""}${trend.scoreChange7d} points`}
              </strong>; over 30 days: {trend.scoreChange30d === null
                ? "—"
                : `${trend.scoreChange30d > 0 ? "+" : ""}${trend.scoreChange30d} points`}.
            </li>
          )
          : null}
        {pulling.filter((p) => p.pull < 0).slice(0, 3).map(({ d }) => (
          <li key={d.name}>
            <strong>{dimensionLabel[d.name]}</strong> ({d.score}): {d.reason}
          </li>
        ))}
        {pulling.length === 0
          ? <li>No dimension has data yet.</li>
          : pulling.every((p) => p.pull >= 0)
          ? <li>Every dimension with data is healthy.</li>
          : null}
      </ul>
      <table className="cards dimensions">
        <caption className="sr-only">The health score's dimensions</caption>
        <thead>
          <tr>
            <th scope="col">Dimension</th>
            <th scope="col">Score</th>
            <th scope="col">Weight</th>
            <th scope="col">Why</th>
            <th scope="col">Last data</th>
          </tr>
        </thead>
        <tbody>
          {health.dimensions.map((d) => (
            <tr key={d.name} data-dimension={d.name}>
              <th scope="row" data-label="Dimension">
                <Link href={websiteHref(website.id, dimensionTab[d.name] ?? "signals")}>{dimensionLabel[d.name]}</Link>
              </th>
              <td data-label="Score" data-testid="dimension-score">
                {d.score ?? "—"} <span className="muted">{statusLabel[d.status]}</span>
              </td>
              <td data-label="Weight">{formatPercent(d.weight)}</td>
              <td data-label="Why">{d.reason}{d.stale ? <strong>(stale data)</strong> : null}</td>
              <td data-label="Last data">{formatDay(d.lastDataOn)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  )
}

/** "14:05" in the viewer's time zone. */
const formatTime = (iso: string) => new Intl.DateTimeFormat(undefined, { timeStyle: "short" }).format(new Date(iso))

/**
 * When the briefing was written, and updated; and, when the score has moved since (new data during the day), that
 * the Health panel beside it is newer: the page never shows two figures as one without saying "as of".
 */
const Edition = ({ briefing, health }: { readonly briefing: Briefing; readonly health: Health | null }) => (
  <span className="muted" data-testid="edition">
    ({formatDay(briefing.date)}; {briefing.updatedAt === null
      ? `written ${formatTime(briefing.generatedAt)}`
      : `updated ${formatTime(briefing.updatedAt)}`}
    {health !== null && health.score !== briefing.health.score
      ? `; as of then the score was ${briefing.health.score ?? "—"}, now ${health.score ?? "—"}`
      : ""})
  </span>
)

export default function BriefingPage({ website }: WebsitePageProps) {
  const briefing = useMemo(() => briefingAtom(website.id), [website.id])
  const health = useMemo(() => healthAtom(website.id), [website.id])
  const b = useAtomValue(briefing)
  const h = useAtomValue(health)
  return (
    <>
      <h1>Morning briefing</h1>
      <Busy busy={!(settled(b) && settled(h))} />
      <FirstSync website={website} briefing={briefing} health={health} />
      <Outcome atom={briefing} result={b} what="the briefing">
        {(value) => (
          <p className="headline" data-testid="headline">
            {value.headline} <Edition briefing={value} health={AsyncResult.isSuccess(h) ? h.value : null} />
          </p>
        )}
      </Outcome>
      <div className="grid-2">
        <section className="panel" aria-labelledby="priorities-heading">
          <h2 id="priorities-heading">Priorities</h2>
          <Outcome atom={briefing} result={b} what="the priorities">
            {(value) => <Priorities website={website} briefing={value} />}
          </Outcome>
        </section>
        <Panel atom={health} title="Health" what="the health score">
          {(value) => <HealthPanel website={website} health={value} />}
        </Panel>
      </div>
      <section className="panel" aria-labelledby="yesterday-heading">
        <h2 id="yesterday-heading">Yesterday</h2>
        <Outcome atom={briefing} result={b} what="yesterday's figures">
          {(value) => <Yesterday website={website} briefing={value} />}
        </Outcome>
      </section>
    </>
  )
}
