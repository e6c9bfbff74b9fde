/**
 * Revenue and churn (`/websites/:id/revenue?period=`) — a minimal version: MRR, ARR, ARPU, customers, the
 * MRR movements of the period, month-end MRR and the churned customers, as tables, from /api/v1's revenue
 * and churn reports. (The chart version of this page is built separately and replaces this file.)
 */
import { useAtomValue } from "@effect/atom-react"
import { useMemo } from "react"
import { churnAtom, revenueAtom } from "../../client.ts"
import { Link, websiteHref } from "../../router.tsx"
import { Busy, formatDay, formatMoney, formatNumber, formatPercent, Outcome, Panel, PeriodPicker, settled, usePeriod, type WebsitePageProps } from "./shared.tsx"

export default function RevenuePage({ website }: WebsitePageProps) {
  const period = usePeriod()
  const revenue = useMemo(() => revenueAtom(website.id, period), [website.id, period])
  const churn = useMemo(() => churnAtom(website.id, period), [website.id, period])
  const result = useAtomValue(revenue)
  return (
    <>
      <h1>Revenue and churn</h1>
      <PeriodPicker period={period} />
      <Busy busy={!settled(result)} />
      <Outcome atom={revenue} result={result} what="the revenue">
        {(r) =>
          r.mrr.amount === 0 && r.dataThrough === null
            ? <p className="panel">No payment data yet. <Link href={websiteHref(website.id, "integrations")}>Connect Stripe</Link> to see revenue, MRR and churn.</p>
            : (
              <>
                <section className="panel" aria-labelledby="now-heading">
                  <h2 id="now-heading">Today ({formatDay(r.asOf)}), in {r.currency}</h2>
                  <dl className="facts">
                    <dt>MRR</dt><dd data-testid="mrr">{formatMoney(r.mrr.amount, r.mrr.currency)}</dd>
                    <dt>ARR</dt><dd>{formatMoney(r.arr.amount, r.arr.currency)}</dd>
                    <dt>Customers</dt><dd>{formatNumber(r.customers)}</dd>
                    <dt>ARPU</dt><dd>{r.arpu === null ? "—" : formatMoney(r.arpu.amount, r.arpu.currency)}</dd>
                    <dt>Monthly churn</dt><dd>{formatPercent(r.monthlyChurnRate)}</dd>
                  </dl>
                  {r.unconverted.length > 0
                    ? <p className="alert warn">Not converted (no exchange rate): {r.unconverted.map((u) => formatMoney(u.mrr.amount, u.mrr.currency)).join(", ")} of MRR.</p>
                    : <p className="muted">Amounts in other currencies are converted into {r.currency} with the stored exchange rates.</p>}
                </section>
                <section className="panel" aria-labelledby="movements-heading">
                  <h2 id="movements-heading">MRR movements, {formatDay(r.window.from)}–{formatDay(r.window.to)}</h2>
                  <table className="cards">
                    <thead><tr><th scope="col">Movement</th><th scope="col">MRR</th></tr></thead>
                    <tbody>
                      {([["start", "At the start"], ["new", "New"], ["expansion", "Expansion"], ["contraction", "Contraction"], ["churned", "Churned"], ["reactivation", "Reactivation"], ["netNew", "Net new"], ["end", "At the end"]] as const).map(([k, label]) => (
                        <tr key={k}><th scope="row" data-label="Movement">{label}</th><td data-label="MRR">{formatMoney(r.movements[k].amount, r.movements[k].currency)}</td></tr>
                      ))}
                    </tbody>
                  </table>
                </section>
                <section className="panel" aria-labelledby="months-heading">
                  <h2 id="months-heading">Month-end MRR</h2>
                  <table className="cards">
                    <thead><tr><th scope="col">Month</th><th scope="col">MRR</th></tr></thead>
                    <tbody>{r.mrrSeries.map((m) => <tr key={m.month}><th scope="row" data-label="Month">{m.month}</th><td data-label="MRR">{formatMoney(m.mrr.amount, m.mrr.currency)}</td></tr>)}</tbody>
                  </table>
                </section>
              </>
            )}
      </Outcome>
      <Panel atom={churn} title="Churn" what="the churn">
        {(c) => (
          <>
            <p>
              Customer churn <strong>{formatPercent(c.customerChurnRate)}</strong> ({c.churnedCustomers} of {c.customersAtStart}); gross MRR churn {formatPercent(c.grossMrrChurnRate)}, net {formatPercent(c.netMrrChurnRate)}.
            </p>
            {c.churned.length === 0
              ? <p>No customer churned in this period.</p>
              : (
                <table className="cards">
                  <thead><tr><th scope="col">Customer</th><th scope="col">Day</th><th scope="col">MRR lost</th><th scope="col">Reason</th></tr></thead>
                  <tbody>
                    {c.churned.map((x, i) => (
                      <tr key={`${x.customerId}-${i}`}><th scope="row" data-label="Customer">{x.customerId}</th><td data-label="Day">{formatDay(x.date)}</td><td data-label="MRR lost">{formatMoney(x.mrrLost.amount, x.mrrLost.currency)}</td><td data-label="Reason">{x.reason ?? "—"}</td></tr>
                    ))}
                  </tbody>
                </table>
              )}
          </>
        )}
      </Panel>
    </>
  )
}
