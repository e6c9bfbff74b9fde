/**
 * CSV text (RFC 4180) for the exports (@sitehealth/domain/Csv, docs/api.md "CSV export"): a header row, CRLF line
 * ends, a cell quoted when it holds a comma, a quote or a line break (its quotes doubled). A text cell whose first
 * character a spreadsheet reads as the start of a formula (`=`, `+`, `-`, `@`, or a tab or carriage return,
 * which some strip before looking) is prefixed with `'`, so that a customer name or search query such as
 * `=HYPERLINK(…)` stays text (OWASP, "CSV Injection"). Numbers are written as numbers: a negative amount is data,
 * and it is never text a user wrote.
 */
import { csvExportOf } from "@sitehealth/domain/Csv"
import { BadRequest } from "@sitehealth/domain/Errors"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type { AnswerEndpoint } from "../access/StoredAnswers.ts"

/** The page size a list's CSV walks the list by (the API's largest page): a CSV holds the whole list. */
export const CSV_PAGE_SIZE = 100

export type Cell = string | number | boolean | null

const FORMULA_START = /^[=+\-@\t\r]/u
const NEEDS_QUOTES = /[",\r\n]/u

/** One cell as CSV text: formula starts neutralised, quoted when needed; null is an empty cell. */
export const csvCell = (value: Cell): string => {
  if (value === null) return ""
  if (typeof value !== "string") return String(value)
  const text = FORMULA_START.test(value) ? `'${value}` : value
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll("\"", "\"\"")}"` : text
}

/** A table: its header names and its rows, each as many cells as the header. */
export interface CsvTable {
  readonly header: ReadonlyArray<string>
  readonly rows: ReadonlyArray<ReadonlyArray<Cell>>
}

/** The whole text of a table, header first, every line ending CRLF. */
export const csvText = (table: CsvTable): string => {
  let text = `${table.header.map(csvCell).join(",")}\r\n`
  for (const row of table.rows) text += `${row.map(csvCell).join(",")}\r\n`
  return text
}

/** A file name of letters, digits, dots, dashes and underscores only (it goes in a header). */
const safeName = (name: string) => name.replaceAll(/[^A-Za-z0-9._-]+/gu, "-")

export const csvResponse = (table: CsvTable, fileName: string) =>
  HttpServerResponse.text(csvText(table), {
    contentType: "text/csv; charset=utf-8",
    headers: {
      "content-disposition": `attachment; filename="${safeName(fileName)}.csv"`,
      // The representation depends on Accept as well as the query: caches must know.
      vary: "Accept, Accept-Encoding"
    }
  })

/** What a request asks of an endpoint that exports CSV: JSON (null), or CSV of one of its tables. */
export interface CsvRequest {
  readonly table: string
}

/**
 * Whether the request to `endpoint` asks for CSV (`?format=csv`, or `Accept: text/csv` without `?format=json`),
 * and of which table (`?table=`, the endpoint's first by default): null for JSON. An unknown format or table is a
 * 400 naming what is allowed. Taken once per endpoint; the request's parts are read per request.
 */
export const csvRequestOf = (endpoint: AnswerEndpoint) => {
  const csv = csvExportOf(endpoint)
  if (csv === undefined) throw new Error(`${endpoint.identifier} declares no CSV export`)
  return Effect.gen(function*() {
    const query = yield* HttpServerRequest.ParsedSearchParams
    const request = yield* HttpServerRequest.HttpServerRequest
    const format = query.format
    const table = query.table
    if (format !== undefined && format !== "csv" && format !== "json") {
      return yield* invalid("format", "must be json or csv")
    }
    const wantsCsv = format === "csv" ||
      (format === undefined && (request.headers.accept ?? "").toLowerCase().includes("text/csv"))
    if (!wantsCsv) return null
    if (table === undefined) return { table: csv.tables[0] } satisfies CsvRequest
    if (typeof table !== "string" || !csv.tables.includes(table)) {
      return yield* invalid("table", `must be one of ${csv.tables.join(", ")}`)
    }
    return { table } satisfies CsvRequest
  })
}

const invalid = (field: string, message: string) =>
  Effect.fail(
    new BadRequest({
      message: `Invalid query parameter ${field}: ${message}`,
      type: "invalid_request",
      issues: [{ path: `query.${field}`, message }]
    })
  )
