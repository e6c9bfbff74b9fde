/**
 * The incremental rollup's marks on PostgreSQL (migration 0019, IncrementalMigration.ts): payments_rollup_dirty
 * holds what the commits since the last rollup marked, payments_rollup_basis what the stored parts were
 * computed with. WHAT is marked is decided by DirtyTracking.ts, for this store and the memory one alike: this
 * module reads the stored rows the rule compares against and keeps its marks.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import { chunks } from "../store/Chunks.ts"
import { bulkRowsOf, CorruptRow, firstOf } from "../store/Sql.ts"
import { type FlowMark, type Marks, marksOf, type RollupBasis, splitVersions } from "./DirtyTracking.ts"
import type { PaymentsBatch } from "./PaymentsShape.ts"
import { chargeOf, decodeCharges, decodeRefunds, decodeVersions, refundOf, versionOf } from "./SqlRows.ts"
import type { Charge, Refund, SubscriptionVersion } from "./Types.ts"

const decodeBasis = firstOf(
  "payments_rollup_basis",
  Schema.Struct({ timezone: Schema.String, currency: Schema.String, rates: Schema.String })
)
const decodeDirty = bulkRowsOf(
  "payments_rollup_dirty",
  Schema.Struct({
    kind: Schema.Literals(["customer", "charge", "refund"]),
    key: Schema.String,
    old: Schema.Unknown
  })
)
/** A marked charge's or refund's row as it was before (`old`: oldJson below). */
const OldFlow = Schema.Struct({
  at: Schema.String,
  amount_minor: Schema.Number,
  currency: Schema.String,
  status: Schema.optional(Schema.Literals(["succeeded", "failed"]))
})
const decodeOldFlow = Schema.decodeUnknownResult(OldFlow)

const oldJson = (old: Charge | Refund | null) =>
  old === null ? null : {
    at: old.at,
    amount_minor: old.amountMinor,
    currency: old.currency.toUpperCase(),
    ...("status" in old ? { status: old.status } : {})
  }

// ---------------------------------------------------------------------------------------------------
// Marking (inside a commit's transaction, before its facts are written)
// ---------------------------------------------------------------------------------------------------

/** Keeps these marks; a mark already waiting stays as it is (DirtyTracking.keepFirst, as ON CONFLICT DO NOTHING). */
export const keepMarks = Effect.fnUntraced(function*(
  sql: SqlClient.SqlClient,
  projectId: string,
  marks: Marks
) {
  for (const ids of chunks([...marks.customers])) {
    yield* sql`INSERT INTO payments_rollup_dirty (project_id, kind, key)
        SELECT ${projectId}, 'customer', u.id FROM unnest(${ids}::text[]) AS u(id)
        ON CONFLICT DO NOTHING`
  }
  const flows: ReadonlyArray<readonly ["charge" | "refund", ReadonlyArray<FlowMark<Charge | Refund>>]> = [
    ["charge", marks.charges],
    ["refund", marks.refunds]
  ]
  for (const [kind, list] of flows) {
    for (const chunk of chunks(list)) {
      const json = JSON.stringify(chunk.map((m) => ({ id: m.id, old: oldJson(m.old) })))
      yield* sql`INSERT INTO payments_rollup_dirty (project_id, kind, key, old)
          SELECT ${projectId}, ${kind}, u.id, u.old FROM jsonb_to_recordset(${json}::jsonb) AS u(id text, old jsonb)
          ON CONFLICT DO NOTHING`
    }
  }
})

/** The stored charges of these ids (at most CHUNK), by id. */
export const storedCharges = (sql: SqlClient.SqlClient, projectId: string, ids: ReadonlyArray<string>) =>
  sql`SELECT * FROM charges WHERE project_id = ${projectId} AND id = ANY(${ids})`.pipe(
    Effect.flatMap(decodeCharges),
    Effect.map((rows) => new Map(rows.map((r) => [r.id, chargeOf(r)] as const)))
  )

/** The stored refunds of these ids (at most CHUNK), by id. */
export const storedRefunds = (sql: SqlClient.SqlClient, projectId: string, ids: ReadonlyArray<string>) =>
  sql`SELECT * FROM refunds WHERE project_id = ${projectId} AND id = ANY(${ids})`.pipe(
    Effect.flatMap(decodeRefunds),
    Effect.map((rows) => new Map(rows.map((r) => [r.id, refundOf(r)] as const)))
  )

/**
 * Inside a tracked commit's transaction, BEFORE its facts are written: marks what the batch changes
 * (DirtyTracking.marksOf against the rows stored now, read CHUNK ids at a time) — all but its replaced
 * subscriptions, which PaymentsFacts.replaceVersions marks once it has read their stored versions.
 */
export const markBatch = Effect.fnUntraced(
  function*(sql: SqlClient.SqlClient, projectId: string, batch: PaymentsBatch) {
    const upserted = splitVersions(batch).upserted
    const slice = {
      facts: { ...batch.facts, subscriptionVersions: upserted },
      removeRefunds: batch.removeRefunds ?? []
    }
    const versions: Array<SubscriptionVersion> = []
    for (const ids of chunks([...new Set(upserted.map((v) => v.subscriptionId))])) {
      const rows = yield* sql`SELECT * FROM subscription_versions
        WHERE project_id = ${projectId} AND subscription_id = ANY(${ids})`.pipe(Effect.flatMap(decodeVersions))
      for (const r of rows) versions.push(versionOf(r))
    }
    const charges = new Map<string, Charge>()
    for (const ids of chunks([...new Set((batch.facts?.charges ?? []).map((c) => c.id))])) {
      for (const [id, c] of yield* storedCharges(sql, projectId, ids)) charges.set(id, c)
    }
    const refunds = new Map<string, Refund>()
    const refundIds = [...(batch.facts?.refunds ?? []).map((r) => r.id), ...(batch.removeRefunds ?? [])]
    for (const ids of chunks([...new Set(refundIds)])) {
      for (const [id, r] of yield* storedRefunds(sql, projectId, ids)) refunds.set(id, r)
    }
    const marks = marksOf(slice, { versions, charge: (id) => charges.get(id), refund: (id) => refunds.get(id) })
    yield* keepMarks(sql, projectId, marks)
  }
)

// ---------------------------------------------------------------------------------------------------
// Taking the marks (inside the rollup's transaction)
// ---------------------------------------------------------------------------------------------------

/** The marks a rollup takes: the customers in order. */
export interface TakenMarks extends Omit<Marks, "customers"> {
  readonly customers: ReadonlyArray<string>
}

/** The marks the commits since the last rollup left, removed. */
export const takeMarks = Effect.fnUntraced(function*(sql: SqlClient.SqlClient, projectId: string) {
  const dirty = yield* sql`DELETE FROM payments_rollup_dirty WHERE project_id = ${projectId} RETURNING kind, key, old`
    .pipe(
      Effect.flatMap(decodeDirty)
    )
  const customers: Array<string> = []
  const charges: Array<FlowMark<Charge>> = []
  const refunds: Array<FlowMark<Refund>> = []
  for (const d of dirty) {
    if (d.kind === "customer") {
      customers.push(d.key)
      continue
    }
    let old: typeof OldFlow.Type | null = null
    if (d.old !== null) {
      const decoded = decodeOldFlow(d.old)
      if (Result.isFailure(decoded)) {
        return yield* Effect.die(new CorruptRow({ table: "payments_rollup_dirty", reason: decoded.failure.message }))
      }
      old = decoded.success
    }
    const at = old === null ? "" : new Date(old.at).toISOString()
    if (d.kind === "charge") {
      charges.push({
        id: d.key,
        old: old === null ? null : {
          id: d.key,
          customerId: "",
          at,
          amountMinor: old.amount_minor,
          currency: old.currency,
          status: old.status ?? "succeeded"
        }
      })
    } else {
      refunds.push({
        id: d.key,
        old: old === null
          ? null
          : { id: d.key, chargeId: "", at, amountMinor: old.amount_minor, currency: old.currency }
      })
    }
  }
  return { customers: customers.sort(), charges, refunds } satisfies TakenMarks
})

// ---------------------------------------------------------------------------------------------------
// The basis
// ---------------------------------------------------------------------------------------------------

export const storedBasis = (sql: SqlClient.SqlClient, projectId: string) =>
  sql`SELECT timezone, currency, rates FROM payments_rollup_basis WHERE project_id = ${projectId}`.pipe(
    Effect.flatMap(decodeBasis)
  )

export const saveBasis = (sql: SqlClient.SqlClient, projectId: string, basis: RollupBasis) =>
  sql`INSERT INTO payments_rollup_basis (project_id, timezone, currency, rates)
      VALUES (${projectId}, ${basis.timezone}, ${basis.currency}, ${basis.rates})
      ON CONFLICT (project_id) DO UPDATE SET timezone = EXCLUDED.timezone, currency = EXCLUDED.currency,
        rates = EXCLUDED.rates`

/** A commit that changes facts without marking them (DirtyTracking rule 1): the next rollup is a full one. */
export const forgetBasis = (sql: SqlClient.SqlClient, projectId: string) =>
  sql`DELETE FROM payments_rollup_basis WHERE project_id = ${projectId}`
