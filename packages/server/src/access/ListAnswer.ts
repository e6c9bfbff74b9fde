/**
 * `GET /projects` served as stored, like every other read (docs/architecture.md, "Stored answers").
 *
 * The list's answer depends on who asks (the token's account and project list), which page (limit, cursor),
 * and, per project, on its fields and its health: today's stored snapshot and the stored snapshots of the 30
 * days before (the trend). So what is kept is not the page but each project's ENTRY — its `health` and `trend`,
 * encoded — under PROJECT_LIST_ENTRY, with the day, data_version and computed_at of the snapshot it was built
 * from. The authentication lookup reads the caller's page of projects (scope, order and cursor applied in SQL,
 * so an added, deleted or re-scoped project is seen by the very next request) with each project's entry when it
 * is of its local today (access/AccessRepo.ts): writing any snapshot deletes the entry (SnapshotsRepo.putHealth),
 * so an entry that is there was built from the snapshots stored now, and the lookup joins no snapshot. When every entry
 * of
 * the page is there and that snapshot is current (Freshness), the page is written from the project columns and
 * the entries' text: one statement, no decoding or schema encoding. Otherwise the handler computes the page
 * (api/Projects.ts) and keeps the entries for the next read.
 *
 * What makes an entry stale: any snapshot written — of today (a recompute) or of another day (a trend point) —
 * which deletes it (SnapshotsRepo.putHealth), the data moving on (data_version, via Freshness), the hour of
 * MAX_AGE_MS, and a new local day. A project's name, domain, time zone
 * or currency are not in the entry: they are read with the page, so an edit shows at once. One window is left:
 * a list computed from the snapshots as they were just before such a write, and kept just after its delete,
 * keeps the older health or trend until the entry is stale by the rules above (at most the hour: today is
 * recomputed only when the data moved on or the hour passed, which the entry's own version and age show).
 */
import { DEFAULT_PAGE_SIZE } from "@sitehealth/domain/Common"
import { successText } from "@sitehealth/domain/Envelope"
import { Project } from "@sitehealth/domain/Projects"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Schema from "effect/Schema"
import { projectView } from "../projects/View.ts"
import type { FreshnessShape } from "../recompute/Freshness.ts"
import { parseCursor } from "../store/Cursor.ts"
import type { ListLookup, ProjectListAccess } from "./AccessRepo.ts"

type Query = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/** The query's own grammar for `limit` (domain/Common.ts, PageQuery): 1–100 in plain decimal digits. */
const LIMIT = /^[0-9]{1,3}$/

/**
 * The page to read with the token for these raw query parameters, or null when they are not a valid query (the
 * handler then answers the 400 after its own decoding, or computes): the same values the handler decodes.
 */
export const listLookupOf = (query: Query): ListLookup | null => {
  const rawLimit = query.limit
  const rawCursor = query.cursor
  if (typeof rawLimit === "object" || typeof rawCursor === "object") return null
  let limit = DEFAULT_PAGE_SIZE
  if (rawLimit !== undefined) {
    if (!LIMIT.test(rawLimit)) return null
    limit = Number(rawLimit)
    if (limit < 1 || limit > 100) return null
  }
  if (rawCursor === undefined) return { limit, cursor: null, after: null }
  const after = parseCursor(rawCursor)
  return after === null ? null : { limit, cursor: rawCursor, after }
}

const EntryTail = Project.mapFields((f) => ({ health: f.health, trend: f.trend }))
const encodeTail = Schema.encodeSync(EntryTail)

/** The kept text of an entry: the JSON object of its `health` and `trend`, as the contract encodes them. */
export const encodeEntry = (item: Pick<Project, "health" | "trend">): string =>
  JSON.stringify(encodeTail({ health: item.health, trend: item.trend }))

/**
 * The whole `GET /projects` response from the page the lookup read, when every entry on it is current, else
 * null (compute). Byte for byte what the computed page encodes to: `Project`'s fields in its order — the
 * project's own from its columns, then the entry's `health` and `trend` — and `ProjectList`'s.
 */
export const servedList = (
  list: ProjectListAccess,
  freshness: Pick<FreshnessShape, "isFresh">,
  now: Date
): HttpServerResponse.HttpServerResponse | null => {
  let data = `{"projects":[`
  for (let i = 0; i < list.items.length; i++) {
    const { project: p, dataVersion, entry } = list.items[i]
    if (entry === null || !freshness.isFresh(entry, dataVersion, now)) return null
    const head = JSON.stringify(projectView(p))
    if (i > 0) data += ","
    data += `${head.slice(0, -1)},${entry.encoded.slice(1)}`
  }
  data += `],"nextCursor":${list.nextCursor === null ? "null" : JSON.stringify(list.nextCursor)}}`
  return HttpServerResponse.text(successText(data), { contentType: "application/json" })
}
