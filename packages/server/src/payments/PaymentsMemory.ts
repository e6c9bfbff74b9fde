/**
 * The payments repository in memory (tests only), the twin of the PostgreSQL one: raw facts and derived rows
 * in maps; revenue days go to MemoryDb, where MetricsRepo reads them. Its rollup keeps the same parts as the
 * SQL store's tables and follows the same dirty-tracking rule (DirtyTracking.ts), so a test of the incremental
 * rollup means the same on both stores.
 */
import * as Effect from "effect/Effect"
import { FxRepo } from "../fx/FxRepo.ts"
import { todayIn } from "../metrics/Dates.ts"
import { MemoryDb } from "../store/MemoryDb.ts"
import type { FailedCharge } from "../store/Series.ts"
import {
  applyFlowMarks,
  basisOf,
  commitTracking,
  isFullRollup,
  keepFirst,
  marksOf,
  type RollupBasis
} from "./DirtyTracking.ts"
import { groupDocs, type PaymentsBatch, type PaymentsRepoShape, type StagedDoc } from "./PaymentsShape.ts"
import {
  byDayThenCustomer,
  customerRollup,
  flowsAccumulator,
  type RollupOutput,
  type UnconvertedDay
} from "./Rollup.ts"
import {
  assembleDays,
  type CustomerMrrSpan,
  type CustomerRollup,
  type FlowDay,
  type UnconvertedFlow
} from "./RollupParts.ts"
import type { Charge, Customer, PaymentsData, Refund, SubscriptionVersion } from "./Types.ts"

interface Raw {
  readonly customers: Map<string, Customer>
  /** By `${subscriptionId}|${validFrom as ISO}`: the instant, as Postgres keys it. */
  readonly versions: Map<string, SubscriptionVersion>
  readonly charges: Map<string, Charge>
  readonly refunds: Map<string, Refund>
}

/** The parts of the rollup kept per project (as the SQL store's tables do: SqlParts.ts), and the marks. */
interface Parts {
  basis: RollupBasis | null
  readonly customers: Map<string, CustomerRollup>
  /** By `${source}|${day}`, and `${source}|${currency}|${day}`. */
  readonly flows: Map<string, FlowDay>
  readonly unconvertedFlows: Map<string, UnconvertedFlow>
  readonly dirtyCustomers: Set<string>
  /** Marked charges and refunds, with what they were at the last rollup (null: new). */
  readonly dirtyCharges: Map<string, Charge | null>
  readonly dirtyRefunds: Map<string, Refund | null>
}

const versionKey = (v: SubscriptionVersion) => `${v.subscriptionId}|${new Date(v.validFrom).toISOString()}`
const up = (s: string) => s.toUpperCase()
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

const byCustomerOf = (versions: Iterable<SubscriptionVersion>) => {
  const out = new Map<string, Array<SubscriptionVersion>>()
  for (const v of versions) {
    const list = out.get(v.customerId)
    if (list === undefined) out.set(v.customerId, [v])
    else list.push(v)
  }
  return out
}

/** Flow differences added to the kept flows; a row that no longer sums anything goes. */
const addFlows = (p: Parts, f: ReturnType<ReturnType<typeof flowsAccumulator>["finish"]>) => {
  for (const d of f.days) {
    const key = `${d.source}|${d.day}`
    const was = p.flows.get(key)
    const sum = was === undefined ? d : {
      ...d,
      grossMinor: was.grossMinor + d.grossMinor,
      refundsMinor: was.refundsMinor + d.refundsMinor,
      failedPayments: was.failedPayments + d.failedPayments,
      failedMinor: was.failedMinor + d.failedMinor,
      items: was.items + d.items
    }
    if (sum.items === 0) p.flows.delete(key)
    else p.flows.set(key, sum)
  }
  for (const u of f.unconverted) {
    const key = `${u.source}|${u.currency}|${u.day}`
    const was = p.unconvertedFlows.get(key)
    const sum = was === undefined ? u : {
      ...u,
      grossMinor: was.grossMinor + u.grossMinor,
      refundsMinor: was.refundsMinor + u.refundsMinor,
      failedMinor: was.failedMinor + u.failedMinor,
      items: was.items + u.items
    }
    if (sum.items === 0) p.unconvertedFlows.delete(key)
    else p.unconvertedFlows.set(key, sum)
  }
}

/** A synchronous method as a traced one, named as the SQL store's. */
const named = <Args extends Array<any>, A>(name: string, body: (...args: Args) => A) =>
  Effect.fn(name)(function*(...args: Args) {
    return yield* Effect.sync(() => body(...args))
  })

const spanAt = (spans: ReadonlyArray<CustomerMrrSpan>, customerId: string, day: string) =>
  spans.find((s) => s.customerId === customerId && s.fromDay <= day && (s.toDay === null || s.toDay > day))

export const makePaymentsMemory: Effect.Effect<PaymentsRepoShape, never, MemoryDb | FxRepo> = Effect.gen(function*() {
  const db = yield* MemoryDb
  const fx = yield* FxRepo
  const raw = new Map<string, Raw>()
  const derived = new Map<string, RollupOutput>()
  const staged = new Map<string, Map<string, StagedDoc>>() // project → `${kind}|${id}` → doc
  const progress = new Map<string, unknown>() // `${project}|${provider}` → progress
  const parts = new Map<string, Parts>()
  /**
   * Projects whose customers' names or emails changed since their last rollup. The SQL store's rollup bumps
   * data_version, which makes the stored answers (churn, revenue) stale; this twin has no data_version (the memory
   * JobsRepo fingerprints the reported rows instead, and contacts are not in them), so its rollup forgets the
   * project's stored answers when a contact changed.
   */
  const contactsChanged = new Set<string>()

  const rawOf = (projectId: string): Raw => {
    const r = raw.get(projectId) ??
      { customers: new Map(), versions: new Map(), charges: new Map(), refunds: new Map() }
    raw.set(projectId, r)
    return r
  }
  const partsOf = (projectId: string): Parts => {
    const p = parts.get(projectId) ?? {
      basis: null,
      customers: new Map(),
      flows: new Map(),
      unconvertedFlows: new Map(),
      dirtyCustomers: new Set(),
      dirtyCharges: new Map(),
      dirtyRefunds: new Map()
    }
    parts.set(projectId, p)
    return p
  }
  const upsert = (projectId: string, data: Partial<PaymentsData>) => {
    const r = rawOf(projectId)
    // As the SQL store keeps them: a name or email not given is stored as null.
    for (const c of data.customers ?? []) {
      const next = { ...c, name: c.name ?? null, email: c.email ?? null }
      const was = r.customers.get(c.id)
      if ((was?.name ?? null) !== next.name || (was?.email ?? null) !== next.email) contactsChanged.add(projectId)
      r.customers.set(c.id, next)
    }
    for (const v of data.subscriptionVersions ?? []) r.versions.set(versionKey(v), { ...v, currency: up(v.currency) })
    for (const c of data.charges ?? []) r.charges.set(c.id, { ...c, currency: up(c.currency) })
    for (const f of data.refunds ?? []) r.refunds.set(f.id, { ...f, currency: up(f.currency) })
  }
  const sortedGroups = (docs: Iterable<StagedDoc>, keep: (d: StagedDoc) => boolean) =>
    groupDocs(
      [...docs].filter(keep).sort((a, b) =>
        a.groupId !== b.groupId
          ? byText(a.groupId, b.groupId)
          : a.kind !== b.kind
          ? byText(a.kind, b.kind)
          : byText(a.id, b.id)
      )
    )

  /** DirtyTracking rules 1 and 2, against the facts as stored before the batch. */
  const track = (projectId: string, batch: PaymentsBatch) => {
    const p = partsOf(projectId)
    const tracking = commitTracking(batch)
    if (tracking === "forgetBasis") p.basis = null
    if (tracking !== "mark") return
    const r = rawOf(projectId)
    const stored = {
      versions: r.versions.values(),
      charge: (id: string) => r.charges.get(id),
      refund: (id: string) => r.refunds.get(id)
    }
    const marks = marksOf(batch, stored)
    for (const c of marks.customers) p.dirtyCustomers.add(c)
    keepFirst(p.dirtyCharges, marks.charges)
    keepFirst(p.dirtyRefunds, marks.refunds)
  }

  const commitNow = (projectId: string, batch: PaymentsBatch) => {
    track(projectId, batch)
    const r = rawOf(projectId)
    const replace = new Set(batch.replaceVersionsOf ?? [])
    if (replace.size > 0) {
      for (const [k, v] of r.versions) if (replace.has(v.subscriptionId)) r.versions.delete(k)
    }
    upsert(projectId, batch.facts ?? {})
    for (const id of batch.removeRefunds ?? []) r.refunds.delete(id)
    const docs = staged.get(projectId) ?? new Map<string, StagedDoc>()
    staged.set(projectId, docs)
    const removed = new Set<string>()
    const parents = new Set((batch.unstageParents ?? []).map((p) => `${p.kind}|${p.parentId}`))
    if (parents.size > 0) {
      for (const [k, d] of docs) {
        if (parents.has(`${d.kind}|${d.parentId}`)) {
          docs.delete(k)
          removed.add(d.groupId)
        }
      }
    }
    // Stored as JSON would be: the reader gets a copy, as from the database.
    for (const d of batch.staged ?? []) {
      docs.set(`${d.kind}|${d.id}`, { ...d, data: JSON.parse(JSON.stringify(d.data)) })
    }
    if (batch.progress !== undefined) {
      const key = `${projectId}|${batch.progress.provider}`
      if (batch.progress.value === null) progress.delete(key)
      else progress.set(key, JSON.parse(JSON.stringify(batch.progress.value)))
    }
    return [...removed]
  }

  /** The rollup from the kept parts: all recomputed when `full` or the basis changed, else the marked ones. */
  const rollUpParts = Effect.fnUntraced(function*(projectId: string, full: boolean) {
    const project = db.projects.get(projectId)
    if (project === undefined) return yield* Effect.die(new Error(`PaymentsRepo: no project ${projectId}`))
    const rates = yield* fx.all()
    const options = { timezone: project.timezone, currency: project.currency, rates }
    const basis = basisOf(project.timezone, project.currency, rates)
    const r = rawOf(projectId)
    const p = partsOf(projectId)
    const byCustomer = byCustomerOf(r.versions.values())
    const part = customerRollup(options)
    const acc = flowsAccumulator(options)
    if (isFullRollup(full, p.basis, basis)) {
      p.customers.clear()
      p.flows.clear()
      p.unconvertedFlows.clear()
      for (const [customerId, versions] of byCustomer) p.customers.set(customerId, part(customerId, versions))
      for (const c of r.charges.values()) acc.charge(c)
      for (const f of r.refunds.values()) acc.refund(f)
      p.basis = basis
    } else {
      for (const customerId of p.dirtyCustomers) {
        const versions = byCustomer.get(customerId)
        if (versions === undefined) p.customers.delete(customerId)
        else p.customers.set(customerId, part(customerId, versions))
      }
      applyFlowMarks(
        acc,
        [...p.dirtyCharges].map(([id, old]) => ({ id, old })),
        [...p.dirtyRefunds].map(([id, old]) => ({ id, old })),
        { charge: (id) => r.charges.get(id), refund: (id) => r.refunds.get(id) }
      )
    }
    addFlows(p, acc.finish())
    p.dirtyCharges.clear()
    p.dirtyRefunds.clear()
    p.dirtyCustomers.clear()
    const customers = [...p.customers].sort(([a], [b]) => byText(a, b)).map(([, c]) => c)
    const { revenueDays, unconverted } = assembleDays(
      customers.flatMap((c) => c.moves),
      p.flows.values(),
      customers.flatMap((c) => c.unconvertedMoves),
      p.unconvertedFlows.values()
    )
    const out: RollupOutput = {
      revenueDays,
      customerMrr: customers.flatMap((c) => c.spans),
      churnEvents: customers.flatMap((c) => c.churnEvents).sort(byDayThenCustomer),
      unconverted
    }
    derived.set(projectId, out)
    db.revenue.set(projectId, new Map(out.revenueDays.map((d) => [d.day, d] as const)))
    if (contactsChanged.delete(projectId)) {
      for (const key of db.answers.keys()) if (key.startsWith(`${projectId}|`)) db.answers.delete(key)
    }
  })

  return {
    write: Effect.fn("PaymentsRepo.write")(function*(projectId: string, data: Partial<PaymentsData>) {
      if (db.projects.get(projectId) === undefined) {
        return yield* Effect.die(new Error(`PaymentsRepo: no project ${projectId}`))
      }
      upsert(projectId, data)
      yield* rollUpParts(projectId, true)
    }),
    rebuild: Effect.fn("PaymentsRepo.rebuild")(function*(projectId: string) {
      yield* rollUpParts(projectId, true)
    }),
    rollUp: Effect.fn("PaymentsRepo.rollUp")(function*(projectId: string) {
      yield* rollUpParts(projectId, false)
    }),
    commit: named("PaymentsRepo.commit", commitNow),
    progress: named(
      "PaymentsRepo.progress",
      (projectId: string, provider: string) => progress.get(`${projectId}|${provider}`) ?? null
    ),
    stagedAfter: named(
      "PaymentsRepo.stagedAfter",
      (projectId: string, after: string | null, limit: number) =>
        sortedGroups(staged.get(projectId)?.values() ?? [], (d) => after === null || d.groupId > after).slice(0, limit)
    ),
    stagedOf: named("PaymentsRepo.stagedOf", (projectId: string, groups: ReadonlyArray<string>) => {
      const wanted = new Set(groups)
      return sortedGroups(staged.get(projectId)?.values() ?? [], (d) => wanted.has(d.groupId))
    }),
    projectsWithPaymentsIn: named("PaymentsRepo.projectsWithPaymentsIn", (currencies: ReadonlyArray<string>) => {
      const wanted = new Set(currencies.map(up))
      return [...raw.entries()]
        .filter(([, r]) => [...r.versions.values(), ...r.charges.values()].some((x) => wanted.has(x.currency)))
        .map(([id]) => id)
        .sort()
    }),
    cohort: named("PaymentsRepo.cohort", (projectId: string, startDay: string, endDay: string) => {
      const spans = derived.get(projectId)?.customerMrr ?? []
      return spans
        .filter((s) => s.fromDay <= startDay && (s.toDay === null || s.toDay > startDay))
        .map((s) => ({
          customerId: s.customerId,
          startMinor: s.mrrMinor,
          endMinor: spanAt(spans, s.customerId, endDay)?.mrrMinor ?? 0
        }))
        .sort((a, b) => (a.customerId < b.customerId ? -1 : 1))
    }),
    churnEvents: named(
      "PaymentsRepo.churnEvents",
      (projectId: string, fromDay: string, toDay: string) =>
        (derived.get(projectId)?.churnEvents ?? []).filter((e) => e.day >= fromDay && e.day <= toDay)
    ),
    contacts: named("PaymentsRepo.contacts", (projectId: string, customerIds: ReadonlyArray<string>) => {
      const customers = rawOf(projectId).customers
      return [...new Set(customerIds)].sort(byText).flatMap((id) => {
        const c = customers.get(id)
        return c === undefined ? [] : [{ customerId: id, name: c.name ?? null, email: c.email ?? null }]
      })
    }),
    failedCharges: named("PaymentsRepo.failedCharges", (
      projectId: string,
      window: { readonly fromDay: string; readonly toDay: string; readonly timezone: string },
      limit: number
    ) => {
      const r = rawOf(projectId)
      return [...r.charges.values()]
        .filter((c) => c.status === "failed")
        .map((c) => ({ c, at: Date.parse(c.at), day: todayIn(window.timezone, new Date(c.at)) }))
        .filter((x) => x.day >= window.fromDay && x.day <= window.toDay)
        .sort((a, b) => b.at - a.at || byText(b.c.id, a.c.id))
        .slice(0, limit)
        .map(({ c, day }): FailedCharge => {
          const customer = c.customerId === "" ? undefined : r.customers.get(c.customerId)
          return {
            chargeId: c.id,
            customerId: c.customerId === "" ? null : c.customerId,
            name: customer?.name ?? null,
            email: customer?.email ?? null,
            day,
            amountMinor: c.amountMinor,
            currency: c.currency
          }
        })
    }),
    unconverted: named("PaymentsRepo.unconverted", (projectId: string, fromDay: string, toDay: string) => {
      const rows = (derived.get(projectId)?.unconverted ?? []).filter((u) => u.day <= toDay)
      const lastBefore = new Map<string, UnconvertedDay>()
      for (const u of rows) if (u.day < fromDay) lastBefore.set(u.currency, u) // rows are by currency, day
      return rows.filter((u) => u.day >= fromDay || lastBefore.get(u.currency) === u)
    })
  }
})
