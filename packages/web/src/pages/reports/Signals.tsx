/**
 * A website's signals (`/websites/:id/signals?dimension=&severity=&state=`): filtered by dimension, severity
 * and state (active, resolved or all), the filters in the URL; each with expected against actual and when it
 * started. The list is /api/v1's listSignals with the same filters.
 */
import { useAtomValue } from "@effect/atom-react"
import { type Dimension, DIMENSIONS, SEVERITIES, type Severity } from "@sitehealth/domain/Projects"
import { useMemo } from "react"
import { Field } from "../../forms.tsx"
import { Link, setQuery, useLocation, websiteHref } from "../../navigation.tsx"
import { signalsAtom } from "../../reportsClient.ts"
import { LikelyCause } from "./Annotations.tsx"
import { Evidence } from "./Briefing.tsx"
import { ListDownload } from "./Downloads.tsx"
import {
  Busy,
  dimensionLabel,
  dimensionTab,
  formatWhen,
  Outcome,
  settled,
  tabLabel,
  type WebsitePageProps
} from "./shared.tsx"

const STATES = { active: "Active", resolved: "Resolved", all: "All" } as const
type State = keyof typeof STATES

const oneOf = <T extends string>(values: ReadonlyArray<T>, v: string | null): T | undefined =>
  v !== null && (values as ReadonlyArray<string>).includes(v) ? (v as T) : undefined

export default function SignalsPage({ website }: WebsitePageProps) {
  const { query } = useLocation()
  const dimension = oneOf<Dimension>(DIMENSIONS, query.get("dimension"))
  const severity = oneOf<Severity>(SEVERITIES, query.get("severity"))
  const state: State = oneOf<State>(["active", "resolved", "all"], query.get("state")) ?? "active"
  const filters = useMemo(() => ({
    ...(dimension !== undefined ? { dimension } : {}),
    ...(severity !== undefined ? { severity } : {}),
    ...(state === "all" ? {} : { active: state === "active" ? ("true" as const) : ("false" as const) })
  }), [dimension, severity, state])
  const atom = useMemo(() => signalsAtom(website.id, filters), [website.id, filters])
  const result = useAtomValue(atom)
  return (
    <>
      <h1>Signals</h1>
      <Busy busy={!settled(result)} />
      <form className="filters" aria-label="Filter the signals" onSubmit={(e) => e.preventDefault()}>
        <Field label="Dimension">
          <select value={dimension ?? ""} onChange={(e) => setQuery("dimension", e.target.value || null)}>
            <option value="">All dimensions</option>
            {DIMENSIONS.map((d) => <option key={d} value={d}>{dimensionLabel[d]}</option>)}
          </select>
        </Field>
        <Field label="Severity">
          <select value={severity ?? ""} onChange={(e) => setQuery("severity", e.target.value || null)}>
            <option value="">All severities</option>
            {SEVERITIES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </Field>
        <Field label="State">
          <select
            value={state}
            onChange={(e) => setQuery("state", e.target.value === "active" ? null : e.target.value)}
          >
            {Object.entries(STATES).map(([k, label]) => <option key={k} value={k}>{label}</option>)}
          </select>
        </Field>
      </form>
      <ListDownload id={website.id} list="signals" query={filters} label="Download these signals as CSV" />
      <Outcome atom={atom} result={result} what="the signals">
        {({ signals, nextCursor }) =>
          signals.length === 0
            ? (
              <p className="panel" role="status">
                No {state === "all" ? "" : `${STATES[state].toLowerCase()} `}signal
                {dimension !== undefined ? ` about ${dimensionLabel[dimension]?.toLowerCase()}` : ""}
                {severity !== undefined ? ` of severity ${severity}` : ""}.{" "}
                {dimension !== undefined || severity !== undefined || state !== "all"
                  ? <Link href={websiteHref(website.id, "signals", { state: "all" })}>Show every signal</Link>
                  : (
                    <>
                      Signals appear when a figure leaves its usual range; connect providers on the{" "}
                      <Link href={websiteHref(website.id, "integrations")}>Integrations</Link> tab.
                    </>
                  )}
              </p>
            )
            : (
              <>
                <p className="muted" role="status">
                  {nextCursor !== null
                    ? `The first ${signals.length} signals (narrow the filters to see the others)`
                    : `${signals.length} signal${signals.length === 1 ? "" : "s"}`}
                </p>
                <ul className="plain signals">
                  {signals.map((s) => (
                    <li key={s.id} className="panel signal" data-signal={s.id}>
                      <h2 className="h3">
                        <span className={`badge sev-${s.severity}`}>{s.severity}</span> {s.title}
                      </h2>
                      <p className="muted">
                        {dimensionLabel[s.dimension]} · started {formatWhen(s.detectedAt)} · {s.active
                          ? `still active (last seen ${formatWhen(s.lastSeenAt)})`
                          : `resolved ${formatWhen(s.resolvedAt)}`}
                      </p>
                      <p>{s.detail}</p>
                      <LikelyCause cause={s.likelyCause} />
                      <Evidence signal={s} currency={website.currency} />
                      <p>
                        <Link href={websiteHref(website.id, dimensionTab[s.dimension] ?? "")}>
                          See it on the {tabLabel(dimensionTab[s.dimension] ?? "")} page
                        </Link>
                      </p>
                    </li>
                  ))}
                </ul>
              </>
            )}
      </Outcome>
    </>
  )
}
