/**
 * One time series chart (uPlot), the same points always also as a table.
 *
 * - x is the bucket's index; its label (the API's own: "2026-03-29", "2026-03", an hour) is shown on the axis,
 *   in the legend and in the table, so nothing is re-bucketed or re-zoned in the browser.
 * - `previous`: the previous period's values drawn dashed under the current ones, bucket i against bucket i
 *   (the API returns the previous period with the same number and kind of buckets).
 * - `partial`: the last points are not final (today so far, days Google still revises): the current line goes on
 *   to them dashed, in its own colour, each such point drawn hollow; the legend and the table mark them with
 *   `partial.label` ("so far"), and the legend says what the dashed end means.
 * - The legend under the chart shows the exact values of the bucket under the pointer, or the one chosen
 *   with ← → (Home/End) when the chart has keyboard focus; otherwise the last bucket.
 * - Colours come from CSS variables (charts.css), read at each draw; a change of the system's colour scheme
 *   redraws. The chart follows its container's width (ResizeObserver), so it fits 375 px.
 * - After each draw the container gets `data-drawn="true"` (what the bench waits for); an empty chart gets
 *   it too, with `data-empty="true"`, when its empty state is shown.
 * - `annotations`: days the owner marked (a launch, a price change) drawn as a vertical dotted line at their
 *   bucket (the day's, the hour's first of that day, the month's) and listed under the chart, date and note.
 * - The table (in a <details>, so it does not take the page, but always in the document for screen readers
 *   and for copying) lists every point with the same formatting as the legend.
 */
import { type KeyboardEvent, type ReactNode, useEffect, useId, useRef, useState } from "react"
import uPlot from "uplot"
import "uplot/dist/uPlot.min.css"
import "./charts.css"

export interface TimeSeriesProps {
  /** What the chart shows ("Visitors"); its accessible name and the table's caption. */
  readonly title: string
  /** One label per bucket, as the API writes it. */
  readonly labels: ReadonlyArray<string>
  /** The current period's values, one per label; null where there is no value. */
  readonly values: ReadonlyArray<number | null>
  /** The previous period's values, bucket by bucket, with its own labels (for the legend and the table). */
  readonly previous?:
    | { readonly labels: ReadonlyArray<string>; readonly values: ReadonlyArray<number | null> }
    | undefined
  /** How a value is written (legend, table, axis); default: the locale's number. */
  readonly format?: ((value: number) => string) | undefined
  /** A shorter label for the x axis; default: the label itself. */
  readonly axisLabel?: ((label: string) => string) | undefined
  /** Name of the current and previous series in the legend and the table. */
  readonly currentName?: string | undefined
  readonly previousName?: string | undefined
  /** Lower values are better (average position): the y axis is drawn upside down. */
  readonly invert?: boolean | undefined
  /**
   * Points from index `from` on are not final yet: drawn dashed and hollow, marked `label` ("so far") in the
   * legend and the table; `note` is the legend's key to it ("dashed: today, so far").
   */
  readonly partial?: { readonly from: number; readonly label: string; readonly note: string } | undefined
  /** Days marked with a note, drawn at their bucket and listed under the chart (those outside the labels: not). */
  readonly annotations?: ReadonlyArray<ChartAnnotation> | undefined
  /** When given, shown instead of the chart (and the table): "connect Plausible to see traffic". */
  readonly empty?: ReactNode | undefined
  readonly height?: number | undefined
}

export interface ChartAnnotation {
  readonly id: string
  readonly date: string
  readonly note: string
}

/**
 * The bucket of a marked day: the label that is that day ("2026-11-20"), starts with it (an hour of it), or that
 * it starts with (its month, "2026-11"); null when the chart's range does not hold it.
 */
export const bucketOf = (labels: ReadonlyArray<string>, date: string): number | null => {
  const i = labels.findIndex((l) => l.startsWith(date) || date.startsWith(l))
  return i < 0 ? null : i
}

const defaultFormat = (v: number) => v.toLocaleString()
const cssVar = (el: Element, name: string, fallback: string) =>
  getComputedStyle(el).getPropertyValue(name).trim() || fallback

/** Same length as `n`: a previous series longer than the current is cut, a shorter one padded with null. */
const aligned = (values: ReadonlyArray<number | null>, n: number): Array<number | null> =>
  Array.from({ length: n }, (_, i) => values[i] ?? null)

export const TimeSeries = (props: TimeSeriesProps) => {
  const { title, labels, values, previous, empty } = props
  const partial = props.partial !== undefined && props.partial.from < labels.length ? props.partial : undefined
  const isPartial = (i: number) => partial !== undefined && i >= partial.from
  const format = props.format ?? defaultFormat
  const axisLabel = props.axisLabel ?? ((l: string) => l)
  const currentName = props.currentName ?? "This period"
  const previousName = props.previousName ?? "Previous period"
  const height = props.height ?? 240
  const containerRef = useRef<HTMLDivElement>(null)
  const plotRef = useRef<HTMLDivElement>(null)
  const chartRef = useRef<uPlot | null>(null)
  const [index, setIndex] = useState<number | null>(null)
  const [scheme, setScheme] = useState(0)
  const tableId = useId()
  const n = labels.length
  const shown = index ?? (n > 0 ? n - 1 : null)
  const marks = (props.annotations ?? []).flatMap((a) => {
    const at = bucketOf(labels, a.date)
    return at === null ? [] : [{ ...a, at }]
  })
  const drawn = JSON.stringify([labels, values, previous?.values ?? null, partial?.from ?? null, marks])

  // A change of the system's colour scheme redraws with the other palette.
  useEffect(() => {
    const media = window.matchMedia("(prefers-color-scheme: dark)")
    const changed = () => setScheme((s) => s + 1)
    media.addEventListener("change", changed)
    return () => media.removeEventListener("change", changed)
  }, [])

  useEffect(() => {
    const container = containerRef.current
    const target = plotRef.current
    if (container === null) return
    container.removeAttribute("data-drawn")
    if (empty !== undefined || target === null) {
      container.setAttribute("data-drawn", "true")
      container.setAttribute("data-empty", "true")
      return
    }
    container.removeAttribute("data-empty")
    const current = cssVar(container, "--chart-current", "#1d5fd1")
    const prev = cssVar(container, "--chart-previous", "#6b7280")
    const grid = cssVar(container, "--chart-grid", "#e3e6eb")
    const axis = cssVar(container, "--chart-axis", "#545b66")
    const panel = cssVar(container, "--panel", "#ffffff")
    const marker = cssVar(container, "--chart-annotation", "#8a4b00")
    const xs = Array.from({ length: n }, (_, i) => i)
    const all = aligned(values, n)
    // The final points solid; the partial ones a series of their own from the last final point on, so the line
    // carries on into them dashed.
    const solid = partial === undefined ? all : all.map((v, i) => (i < partial.from ? v : null))
    const tail = partial === undefined ? [] : [all.map((v, i) => (i >= partial.from - 1 ? v : null))]
    const data: uPlot.AlignedData = previous === undefined
      ? [xs, solid, ...tail]
      : [xs, solid, aligned(previous.values, n), ...tail]
    const axisStyle = {
      stroke: axis,
      grid: { stroke: grid, width: 1 },
      ticks: { stroke: grid, width: 1 },
      font: "12px system-ui, sans-serif"
    }
    const opts: uPlot.Options = {
      width: Math.max(200, target.clientWidth),
      height,
      legend: { show: false },
      cursor: { drag: { x: false, y: false }, points: { size: 7 } },
      scales: { x: { time: false }, y: { dir: props.invert === true ? -1 : 1 } },
      axes: [
        {
          ...axisStyle,
          incrs: [1, 2, 3, 4, 6, 7, 12, 14, 24, 30, 48, 60, 90, 120, 180, 365],
          space: 56,
          values: (_u, splits) =>
            splits.map((s) => (Number.isInteger(s) && labels[s] !== undefined ? axisLabel(labels[s]) : ""))
        },
        { ...axisStyle, size: 64, values: (_u, splits) => splits.map((s) => format(s)) }
      ],
      series: [
        {},
        { label: currentName, stroke: current, width: 2, points: { show: n <= 1 } },
        ...(previous === undefined
          ? []
          : [{ label: previousName, stroke: prev, width: 1.5, dash: [6, 4], points: { show: false } }]),
        ...(partial === undefined ? [] : [{
          label: `${currentName}, ${partial.label}`,
          stroke: current,
          width: 2,
          dash: [3, 4],
          // The partial points themselves, hollow (not the last final point the dashes start from).
          points: {
            show: true,
            filter: () => Array.from({ length: n - partial.from }, (_, k) => partial.from + k),
            fill: panel,
            size: 7,
            width: 2
          }
        }])
      ],
      hooks: {
        setCursor: [(u) => setIndex(u.cursor.idx ?? null)],
        draw: [(u) => {
          // The marked days: a dotted line the plot's height and a small flag at its top.
          const ctx = u.ctx
          ctx.save()
          ctx.strokeStyle = marker
          ctx.fillStyle = marker
          ctx.lineWidth = 1.5 * devicePixelRatio
          ctx.setLineDash([2 * devicePixelRatio, 3 * devicePixelRatio])
          for (const m of marks) {
            const x = Math.round(u.valToPos(m.at, "x", true))
            ctx.beginPath()
            ctx.moveTo(x, u.bbox.top)
            ctx.lineTo(x, u.bbox.top + u.bbox.height)
            ctx.stroke()
            ctx.fillRect(x, u.bbox.top, 6 * devicePixelRatio, 5 * devicePixelRatio)
          }
          ctx.restore()
          container.setAttribute("data-drawn", "true")
        }]
      }
    }
    const chart = new uPlot(opts, data, target)
    chartRef.current = chart
    const observer = new ResizeObserver(() => {
      const width = Math.max(200, target.clientWidth)
      if (width !== chart.width) chart.setSize({ width, height })
    })
    observer.observe(target)
    return () => {
      observer.disconnect()
      chart.destroy()
      chartRef.current = null
    }
    // Rebuilt when what it draws changes (compared by content: callers may pass new arrays each render).
  }, [drawn, empty === undefined, height, scheme, props.invert])

  /** ← → Home End move the highlighted bucket, as the pointer does. */
  const onKey = (event: KeyboardEvent<HTMLDivElement>) => {
    const chart = chartRef.current
    if (chart === null || n === 0) return
    const at = index ?? n - 1
    const next = event.key === "ArrowLeft"
      ? Math.max(0, at - 1)
      : event.key === "ArrowRight"
      ? Math.min(n - 1, at + 1)
      : event.key === "Home"
      ? 0
      : event.key === "End"
      ? n - 1
      : null
    if (next === null) return
    event.preventDefault()
    const y = values[next]
    chart.setCursor({
      left: chart.valToPos(next, "x"),
      top: y === null || y === undefined ? 0 : chart.valToPos(y, "y")
    })
    setIndex(next)
  }

  const valueText = (v: number | null | undefined) => (v === null || v === undefined ? "—" : format(v))
  /** " (so far)" after a partial point's label. */
  const mark = (i: number) => (isPartial(i) ? ` (${partial!.label})` : "")

  return (
    <figure className="chart" ref={containerRef} data-chart={title}>
      {empty !== undefined
        ? <div className="empty">{empty}</div>
        : (
          <>
            <div
              ref={plotRef}
              className="chart-plot"
              role="img"
              tabIndex={0}
              aria-label={`${title}: chart of ${n} points${
                shown === null ? "" : `, ${labels[shown]}${mark(shown)} ${valueText(values[shown])}`
              }${
                partial === undefined ? "" : `; ${partial.note}`
              }. Use the left and right arrow keys to read each point; the figures are also in the table below.`}
              aria-describedby={tableId}
              onKeyDown={onKey}
              onMouseLeave={() => setIndex(null)}
            />
            <figcaption className="chart-legend" aria-live="off">
              {shown === null ? null : (
                <>
                  <span data-partial={isPartial(shown) ? "true" : undefined}>
                    <span className={`swatch current${isPartial(shown) ? " dashed" : ""}`} />
                    {currentName}, {labels[shown]}
                    {mark(shown)}: <span className="value" data-series="current">{valueText(values[shown])}</span>
                  </span>
                  {previous !== undefined
                    ? (
                      <span>
                        <span className="swatch previous" />
                        {previousName}
                        {previous.labels[shown] !== undefined ? `, ${previous.labels[shown]}` : ""}:{" "}
                        <span className="value" data-series="previous">{valueText(previous.values[shown])}</span>
                      </span>
                    )
                    : null}
                </>
              )}
              {partial === undefined ? null : (
                <span className="partial-note muted" data-partial-note>
                  <span className="swatch current dashed" />
                  {partial.note}
                </span>
              )}
            </figcaption>
            {marks.length === 0 ? null : (
              <ul className="chart-annotations" aria-label={`Marked days on ${title}`}>
                {marks.map((m) => (
                  <li key={m.id} data-annotation={m.date}>
                    <span className="swatch annotation" aria-hidden="true" />
                    <time dateTime={m.date}>{m.date}</time> {m.note}
                  </li>
                ))}
              </ul>
            )}
            <details>
              <summary>{title} as a table</summary>
              <div className="table-scroll tall" tabIndex={0} role="region" aria-label={`${title}, table`}>
                <table id={tableId} data-points={title}>
                  <caption className="sr-only">{title}, every point</caption>
                  <thead>
                    <tr>
                      <th scope="col">{previous !== undefined ? currentName : "When"}</th>
                      <th scope="col" className="num">{title}</th>
                      {previous !== undefined
                        ? (
                          <>
                            <th scope="col">{previousName}</th>
                            <th scope="col" className="num">{title}, before</th>
                          </>
                        )
                        : null}
                    </tr>
                  </thead>
                  <tbody>
                    {labels.map((label, i) => (
                      <tr key={label + i} data-partial={isPartial(i) ? "true" : undefined}>
                        <th scope="row">{label}</th>
                        <td className="num" data-value={values[i] ?? ""}>
                          {valueText(values[i])}
                          {isPartial(i) ? <span className="partial-mark">{mark(i)}</span> : null}
                        </td>
                        {previous !== undefined
                          ? (
                            <>
                              <td>{previous.labels[i] ?? "—"}</td>
                              <td className="num">{valueText(previous.values[i])}</td>
                            </>
                          )
                          : null}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </details>
          </>
        )}
    </figure>
  )
}
