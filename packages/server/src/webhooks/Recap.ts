/**
 * A destination's recap (docs/alerts.md, Cadence): which period is due on a local day, and the `recap.ready`
 * data summing up the period's events — the largest gains and losses by money (MRR movements summed by customer;
 * signals with their money at stake, a traffic spike or a resolved signal as a gain; failed payments; health
 * score moves, provider failures and recoveries without an amount, after those with one). Pure.
 */
import type { Cadence, EventKind } from "@sitehealth/domain/Events"
import { addDays, addMonths, dayOfWeek, startOfMonth } from "../metrics/Dates.ts"

export const RECAP_ITEMS = 10

export type RecapCadence = Exclude<Cadence, "live">

/** The last complete period before the local day `today`: yesterday, last Monday–Sunday, last month. */
export const duePeriod = (cadence: RecapCadence, today: string): { readonly from: string; readonly to: string } => {
  switch (cadence) {
    case "daily":
      return { from: addDays(today, -1), to: addDays(today, -1) }
    case "weekly": {
      // dayOfWeek: 0 = Sunday. The Monday of this week, then the week before it.
      const monday = addDays(today, -((dayOfWeek(today) + 6) % 7))
      return { from: addDays(monday, -7), to: addDays(monday, -1) }
    }
    case "monthly": {
      const first = startOfMonth(today)
      return { from: addMonths(first, -1), to: addDays(first, -1) }
    }
  }
}

interface Money {
  readonly amount: number
  readonly currency: string
}

export interface RecapItem {
  readonly type: EventKind
  readonly title: string
  readonly amount: Money | null
  readonly at: string
}

const magnitude = (i: RecapItem) => i.amount === null ? -1 : Math.abs(i.amount.amount)
const largestFirst = (items: ReadonlyArray<RecapItem>) =>
  [...items].sort((a, b) => magnitude(b) - magnitude(a) || (a.at < b.at ? 1 : -1)).slice(0, RECAP_ITEMS)

const fmtMoney = (m: Money) => `${(m.amount / 100).toFixed(2)} ${m.currency}`

/** The period's gains and losses from its events' bodies (`{type, timestamp, data}`), largest first. */
export const composeRecap = (
  events: ReadonlyArray<{ readonly type: EventKind; readonly body: string }>
): { readonly gains: ReadonlyArray<RecapItem>; readonly losses: ReadonlyArray<RecapItem> } => {
  const gains: Array<RecapItem> = []
  const losses: Array<RecapItem> = []
  const byCustomer = new Map<string, { sum: number; currency: string; kinds: Set<string>; at: string }>()
  for (const e of events) {
    const { timestamp: at, data } = JSON.parse(e.body) as { timestamp: string; data: Record<string, any> }
    switch (e.type) {
      case "revenue.movement": {
        const key = `${data.customer}/${data.mrrChange.currency}`
        const c = byCustomer.get(key) ?? { sum: 0, currency: data.mrrChange.currency, kinds: new Set(), at }
        c.sum += data.mrrChange.amount
        c.kinds.add(data.kind)
        c.at = at > c.at ? at : c.at
        byCustomer.set(key, c)
        break
      }
      case "signal.opened":
      case "signal.resolved": {
        const s = data.signal
        const good = e.type === "signal.resolved" || String(s.kind).endsWith("spike")
        const item = {
          type: e.type,
          title: e.type === "signal.resolved" ? `Resolved: ${s.title}` : s.title,
          amount: s.moneyAtStake,
          at
        }
        ;(good ? gains : losses).push(item)
        break
      }
      case "payment.failed":
        losses.push({ type: e.type, title: `Payment failed: ${data.customer}`, amount: data.amount, at })
        break
      case "health.changed":
        ;(data.change > 0 ? gains : losses).push({
          type: e.type,
          title: `Health score ${data.previousScore} → ${data.score}`,
          amount: null,
          at
        })
        break
      case "traffic.anomaly":
        ;(data.direction === "spike" ? gains : losses).push({
          type: e.type,
          title: `${data.metric === "visitors" ? "Visitors" : "Pageviews"} ${data.direction} at ${data.localHour}` +
            `: ${data.actual} against a usual ${data.expected}`,
          amount: data.moneyAtStake,
          at
        })
        break
      case "integration.failed":
        losses.push({ type: e.type, title: `${data.provider} sync failed`, amount: null, at })
        break
      case "integration.recovered":
        gains.push({ type: e.type, title: `${data.provider} syncs again`, amount: null, at })
        break
      default:
        break
    }
  }
  for (const [key, c] of byCustomer) {
    if (c.sum === 0) continue
    const customer = key.slice(0, key.lastIndexOf("/"))
    const amount = { amount: c.sum, currency: c.currency }
    const item = {
      type: "revenue.movement" as const,
      title: `${customer}: MRR ${c.sum > 0 ? "+" : "−"}${fmtMoney({ ...amount, amount: Math.abs(c.sum) })} (${
        [...c.kinds].join(", ")
      })`,
      amount,
      at: c.at
    }
    ;(c.sum > 0 ? gains : losses).push(item)
  }
  return { gains: largestFirst(gains), losses: largestFirst(losses) }
}
