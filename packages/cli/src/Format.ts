/**
 * Text formatting for a terminal: aligned tables, sparklines, money, rates and colour. Pure functions:
 * whether colour is on is decided once (`colorEnabled`) and passed in.
 */

const BARS = "▁▂▃▄▅▆▇█"

/**
 * One character per value, scaled between the series' min and max (a flat series is all ▁; null is a
 * space, so gaps stay visible).
 */
export const sparkline = (values: ReadonlyArray<number | null>): string => {
  const present = values.filter((v): v is number => v !== null && Number.isFinite(v))
  if (present.length === 0) return " ".repeat(values.length)
  const min = Math.min(...present)
  const max = Math.max(...present)
  const span = max - min
  return values
    .map((v) => {
      if (v === null || !Number.isFinite(v)) return " "
      if (span === 0) return BARS[0]
      return BARS[Math.min(BARS.length - 1, Math.floor(((v - min) / span) * (BARS.length - 1) + 0.5))]
    })
    .join("")
}

/** NO_COLOR and TERM as read (platform/Settings.ts `displayEnvironment`). */
export interface DisplayEnvironment {
  readonly NO_COLOR?: string | undefined
  readonly TERM?: string | undefined
}

/** Colour on a terminal only: never when NO_COLOR is set (any value) or when stdout is not a TTY. */
export const colorEnabled = (env: DisplayEnvironment, isTty: boolean): boolean =>
  isTty && env.NO_COLOR === undefined && env.TERM !== "dumb"

export interface Style {
  readonly bold: (s: string) => string
  readonly dim: (s: string) => string
  readonly red: (s: string) => string
  readonly yellow: (s: string) => string
  readonly green: (s: string) => string
}

const ansi = (code: number) => (s: string) => `\u001b[${code}m${s}\u001b[0m`
const plain = (s: string) => s

export const makeStyle = (color: boolean): Style =>
  color
    ? { bold: ansi(1), dim: ansi(2), red: ansi(31), yellow: ansi(33), green: ansi(32) }
    : { bold: plain, dim: plain, red: plain, yellow: plain, green: plain }

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g
/** Printed width: escape codes take no columns. */
const width = (s: string) => [...s.replace(ANSI, "")].length

/** Left-aligned text columns, right-aligned numbers; a header row in bold. */
export const table = (
  style: Style,
  headers: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
  align: ReadonlyArray<"l" | "r"> = []
): string => {
  if (rows.length === 0) return style.dim("(none)")
  const widths = headers.map((h, i) => Math.max(width(h), ...rows.map((r) => width(r[i] ?? ""))))
  const pad = (cell: string, i: number) => {
    const gap = " ".repeat(widths[i] - width(cell))
    return align[i] === "r" ? gap + cell : cell + gap
  }
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => pad(c, i)).join("  ").trimEnd()
  return [style.bold(line(headers)), ...rows.map(line)].join("\n")
}

/** "key  value" lines with the keys aligned. */
export const fields = (style: Style, pairs: ReadonlyArray<readonly [string, string]>): string => {
  const w = Math.max(...pairs.map(([k]) => width(k)))
  return pairs.map(([k, v]) => `${style.dim(k.padEnd(w))}  ${v}`).join("\n")
}

const minorDigits = (currency: string): number => {
  try {
    return new Intl.NumberFormat("en-US", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2
  } catch {
    return 2
  }
}

/** Integer minor units as an amount: 123456 USD → "USD 1,234.56" (0-decimal currencies stay whole). */
export const money = (m: { readonly amount: number; readonly currency: string } | null): string => {
  if (m === null) return "—"
  const digits = minorDigits(m.currency)
  const value = m.amount / 10 ** digits
  return `${m.currency} ${
    value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
  }`
}

export const integer = (n: number | null): string => (n === null ? "—" : n.toLocaleString("en-US"))

export const decimal = (n: number | null, digits = 2): string =>
  n === null ? "—" : n.toLocaleString("en-US", { maximumFractionDigits: digits })

/** A ratio as a percentage: 0.0512 → "5.1%"; null (zero denominator) → "—". */
export const percent = (r: number | null): string => (r === null ? "—" : `${(r * 100).toFixed(1)}%`)

/** A relative change with its sign: 0.25 → "+25.0%". */
export const change = (style: Style, r: number | null): string => {
  if (r === null) return style.dim("—")
  const text = `${r > 0 ? "+" : ""}${(r * 100).toFixed(1)}%`
  return r > 0 ? style.green(text) : r < 0 ? style.red(text) : text
}

export const severity = (style: Style, s: string): string =>
  s === "critical" ? style.red(s) : s === "warning" ? style.yellow(s) : s

export const status = (style: Style, s: string): string =>
  s === "healthy" || s === "succeeded" || s === "connected" || s === "active"
    ? style.green(s)
    : s === "watch" || s === "queued" || s === "running"
    ? style.yellow(s)
    : s === "at_risk" || s === "critical" || s === "failed" || s === "error" || s === "revoked"
    ? style.red(s)
    : style.dim(s)

/**
 * Text from outside (a customer's name as a payment provider holds it) made safe to print: control characters
 * (escape sequences that would drive the terminal) and bidirectional overrides become U+FFFD.
 */
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu
export const printable = (s: string): string => s.replace(UNPRINTABLE, "\uFFFD")

/** A customer by its name, else its email address, else its id; a charge without a customer is a guest checkout. */
export const customerLabel = (c: {
  readonly customerId: string | null
  readonly name: string | null
  readonly email: string | null
}): string => printable(c.name ?? c.email ?? c.customerId ?? "guest checkout")

export const orDash = (s: string | null | undefined): string => (s === null || s === undefined || s === "" ? "—" : s)
