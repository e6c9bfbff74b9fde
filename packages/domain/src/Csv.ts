/**
 * CSV export (docs/api.md, "CSV export"): a report or list endpoint that declares `csv` in its `op(...)` spec
 * (ApiOperation.ts) also answers `text/csv` — when the request says `?format=csv` or `Accept: text/csv` — one of its
 * tables, named by `?table=` (the first by default). The declaration is the endpoint's `CsvExportAnnotation`; the
 * server reads it from the endpoint object, and the OpenAPI document states the parameters and the `text/csv`
 * representation from it. `format` and `table` are read from the raw query, not the endpoint's query schema, so the
 * typed clients (CLI, MCP), which decode JSON, never see them.
 */
import * as Context from "effect/Context"

export interface CsvExport {
  /** The tables the endpoint exports, the default first (`series`, `pages`…). */
  readonly tables: readonly [string, ...Array<string>]
}

/** The annotation key of an endpoint's `CsvExport` (absent: JSON only). */
export class CsvExportAnnotation extends Context.Service<CsvExportAnnotation, CsvExport>()("sitehealth/CsvExport") {}

/** An endpoint's `CsvExport` annotation; undefined when it exports none. */
export const csvExportOf = (endpoint: { readonly annotations: Context.Context<never> }): CsvExport | undefined =>
  Context.getOrUndefined(endpoint.annotations, CsvExportAnnotation)

export const CSV_CONTENT_TYPE = "text/csv; charset=utf-8"

const CSV_DESCRIPTION =
  "Also answers CSV (`?format=csv` or `Accept: text/csv`): a header row, one row per item; days " +
  "are ISO dates in the website's time zone, amounts integer minor units with a `currency` column, and a text cell " +
  "starting with `=`, `+`, `-`, `@`, a tab or a carriage return is prefixed with `'` " +
  "so that a spreadsheet never runs " +
  "it as a formula. `?table=` picks the table."

/** The OpenAPI operation with the CSV parameters and the `text/csv` representation of its 200 answer. */
export const withCsvExport = (csv: CsvExport) => (operation: Record<string, unknown>): Record<string, unknown> => {
  const responses = (operation.responses ?? {}) as Record<string, Record<string, unknown>>
  const ok = responses["200"] ?? { description: "Success" }
  return {
    ...operation,
    description: `${String(operation.description ?? "")} ${CSV_DESCRIPTION}`.trim(),
    parameters: [
      ...(Array.isArray(operation.parameters) ? operation.parameters : []),
      {
        name: "format",
        in: "query",
        required: false,
        description:
          "`csv` answers `text/csv` instead of the JSON envelope (as `Accept: text/csv` does); `json` the envelope",
        schema: { type: "string", enum: ["json", "csv"] }
      },
      {
        name: "table",
        in: "query",
        required: false,
        description: `With CSV: the table to export (default \`${csv.tables[0]}\`)`,
        schema: { type: "string", enum: [...csv.tables] }
      }
    ],
    responses: {
      ...responses,
      "200": {
        ...ok,
        content: {
          ...(ok.content as Record<string, unknown> | undefined),
          "text/csv": { schema: { type: "string", description: "RFC 4180 CSV with a header row" } }
        }
      }
    }
  }
}
