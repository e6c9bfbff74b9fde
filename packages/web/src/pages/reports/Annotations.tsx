/**
 * Annotations on the report pages: the days the owner marked (a launch, a price change, a campaign), which every
 * chart draws (charts/TimeSeries.tsx), and a panel to mark a day and to delete a mark. The API's own list
 * (`listAnnotations`), answered by the same service as /api/v1's.
 */
import { useAtomValue } from "@effect/atom-react"
import {
  type Annotation,
  ANNOTATION_CATEGORIES,
  type AnnotationCategory,
  type LikelyCause as Cause
} from "@sitehealth/domain/Annotations"
import { Exit } from "effect"
import { AsyncResult } from "effect/reactivity"
import { useMemo, useState } from "react"
import type { ChartAnnotation } from "../../charts/TimeSeries.tsx"
import { Field, formValues } from "../../forms.tsx"
import { useMutation } from "../../hooks.ts"
import { annotationsAtom, createAnnotation, deleteAnnotation, ReportKeys } from "../../reportsClient.ts"
import { Can, useCan } from "../../roles.tsx"
import { MutationStatus } from "../../ui.tsx"
import { Outcome } from "./outcome.tsx"
import type { WebsitePageProps } from "./shared.tsx"

const CATEGORY_NAMES: Record<AnnotationCategory, string> = {
  launch: "Launch",
  price_change: "Price change",
  campaign: "Campaign",
  release: "Release",
  incident: "Incident",
  other: "Other"
}

/** A signal's or a priority's likely cause: the day the owner marked just before the change began. */
export const LikelyCause = ({ cause }: { readonly cause: Cause | undefined }) =>
  cause === undefined ? null : (
    <p className="likely-cause" data-likely-cause={cause.annotationId}>
      <strong>Likely cause:</strong> you marked <time dateTime={cause.date}>{cause.date}</time>{" "}
      ({CATEGORY_NAMES[cause.category].toLowerCase()}): “{cause.note}”
    </p>
  )

/** Today in the website's time zone (a mark's day is the website's day), YYYY-MM-DD; UTC's if the zone is unknown. */
const todayIn = (timeZone: string): string => {
  try {
    return new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" })
      .format(new Date())
  } catch {
    return new Date().toISOString().slice(0, 10)
  }
}

/** The website's marked days for a chart: none while they load or when they cannot be read (the chart still shows). */
export const useChartAnnotations = (websiteId: string): ReadonlyArray<ChartAnnotation> => {
  const atom = useMemo(() => annotationsAtom(websiteId), [websiteId])
  const result = useAtomValue(atom)
  return AsyncResult.isSuccess(result) ? result.value.annotations : []
}

const AnnotationRow = ({ websiteId, annotation }: { readonly websiteId: string; readonly annotation: Annotation }) => {
  const [result, run] = useMutation(deleteAnnotation)
  const admin = useCan("admin")
  return (
    <li data-annotation-row={annotation.id}>
      <time dateTime={annotation.date}>{annotation.date}</time>{" "}
      <span className="badge">
        {CATEGORY_NAMES[annotation.category]}
      </span>{" "}
      {annotation.note} {admin ?
        (
          <button
            type="button"
            className="secondary small"
            disabled={result.waiting}
            aria-label={`Delete the mark of ${annotation.date}: ${annotation.note}`}
            onClick={() =>
              run({
                params: { id: websiteId, annotationId: annotation.id },
                reactivityKeys: [ReportKeys.annotations, ReportKeys.reports]
              })}
          >
            Delete
          </button>
        ) :
        null}
      <MutationStatus result={result} />
    </li>
  )
}

/** Marked days: the list, and a form to mark one (today by default). */
export const AnnotationsPanel = ({ website }: WebsitePageProps) => {
  const atom = useMemo(() => annotationsAtom(website.id), [website.id])
  const list = useAtomValue(atom)
  const [result, run] = useMutation(createAnnotation)
  const [notice, setNotice] = useState<string | null>(null)
  return (
    <section className="panel" aria-labelledby="annotations-heading" data-panel="annotations">
      <h2 id="annotations-heading">Marked days</h2>
      <p className="muted">
        Mark what you did on the day it happened — a launch, a price change, a campaign. Every chart shows the mark, and
        the briefing and signals name it when a change begins on or just after it.
      </p>
      <Can level="admin" what="marking a day">
        <form
          aria-label="Mark a day"
          onSubmit={async (event) => {
            event.preventDefault()
            setNotice(null)
            const form = event.currentTarget
            const v = formValues(form)
            const exit = await run({
              params: { id: website.id },
              payload: {
                date: v.get("date"),
                note: v.get("note").trim(),
                category: v.get("category") as AnnotationCategory
              },
              reactivityKeys: [ReportKeys.annotations, ReportKeys.reports]
            })
            if (Exit.isSuccess(exit)) {
              setNotice(`Marked ${exit.value.annotation.date}: “${exit.value.annotation.note}”.`)
              form.reset()
            }
          }}
        >
          <MutationStatus result={result} />
          {notice !== null ? <div className="alert ok" role="status">{notice}</div> : null}
          <div className="form-grid">
            <Field label="Day">
              <input name="date" type="date" required defaultValue={todayIn(website.timezone)} />
            </Field>
            <Field label="What happened" hint="Up to 280 characters">
              <input name="note" required maxLength={280} />
            </Field>
            <Field label="Kind">
              <select name="category" defaultValue="other">
                {ANNOTATION_CATEGORIES.map((c) => <option key={c} value={c}>{CATEGORY_NAMES[c]}</option>)}
              </select>
            </Field>
          </div>
          <button type="submit" disabled={result.waiting}>Mark the day</button>
        </form>
      </Can>
      <Outcome atom={atom} result={list} what="the marked days">
        {({ annotations }) =>
          annotations.length === 0
            ? <p>No day marked yet.</p>
            : (
              <ul className="annotation-list" aria-label="Marked days">
                {[...annotations].reverse().map((a) => (
                  <AnnotationRow key={a.id} websiteId={website.id} annotation={a} />
                ))}
              </ul>
            )}
      </Outcome>
    </section>
  )
}
