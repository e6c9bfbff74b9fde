/**
 * Revenue and churn of one website: MRR over the last 12 months, its movements over the period (`?period=`),
 * ARR, ARPU, customers; churn rates against the previous window and the churned customers. All in the
 * website's reporting currency, as the API converted them (the conversion is noted, unconverted amounts
 * listed). Churned customers and recent failed payments name the customer as the payment provider holds it
 * (its name, else its email address, else its id), with the id beside it in muted type. Figures are the
 * dashboard's `reports.revenue` and `reports.churn`: GET /api/v1/projects/{id}/revenue and /churn for the same
 * period.
 */
import type { Money } from "@sitehealth/domain/Common"
import type { Churn, Revenue } from "@sitehealth/domain/Revenue"
import { useMemo } from "react"
import { TimeSeries } from "../../charts/TimeSeries.tsx"
import { useChartAnnotations } from "./Annotations.tsx"
import {
  Change,
  churnAtom,
  Figure,
  formatInteger,
  formatMoney,
  formatMoneyIn,
  formatPercent,
  majorUnits,
  Panel,
  PERIOD_LABELS,
  PeriodPicker,
  revenueAtom,
  usePageReport,
  usePeriod,
  useReport
} from "./charted.tsx"
import { CsvDownloads } from "./Downloads.tsx"
import type { WebsitePageProps } from "./shared.tsx"
import { SourceGate } from "./SourceGate.tsx"

const noPayments = (r: Revenue) => r.dataThrough === null

/** A customer as the report names it: `customerId` null is a charge without a customer (a guest checkout). */
interface Named {
  readonly customerId: string | null
  readonly name: string | null
  readonly email: string | null
}

/** The name, else the email address, else the id; the id as a muted detail under a name or an address. */
const Customer = ({ c }: { readonly c: Named }) => {
  const label = c.name ?? c.email
  if (c.customerId === null) {
    return label === null ? <span className="muted">Guest checkout</span> : <span data-customer>{label}</span>
  }
  if (label === null) return <code data-customer>{c.customerId}</code>
  return (
    <>
      <span data-customer>{label}</span>
      <br />
      <code className="muted" data-customer-id>{c.customerId}</code>
    </>
  )
}

const Headline = ({ r }: { readonly r: Revenue }) => (
  <ul className="reports-figures">
    <Figure name="mrr" raw={r.mrr} label="MRR" value={formatMoney(r.mrr)} />
    <Figure name="arr" raw={r.arr} label="ARR" value={formatMoney(r.arr)} />
    <Figure name="customers" raw={r.customers} label="Paying customers" value={formatInteger(r.customers)} />
    <Figure name="arpu" raw={r.arpu} label="ARPU" value={r.arpu === null ? "—" : formatMoney(r.arpu)} />
    <Figure name="ltv" raw={r.ltv} label="LTV" value={r.ltv === null ? "—" : formatMoney(r.ltv)} />
    <Figure
      name="monthlyChurnRate"
      raw={r.monthlyChurnRate}
      label="Churn, last 30 days"
      value={formatPercent(r.monthlyChurnRate)}
    />
    <Figure name="nrr" raw={r.nrr} label="Net revenue retention" value={formatPercent(r.nrr)} />
    <Figure
      name="quickRatio"
      raw={r.quickRatio}
      label="Quick ratio"
      value={r.quickRatio === null ? "—" : r.quickRatio.toLocaleString(undefined, { maximumFractionDigits: 2 })}
    />
  </ul>
)

const MrrChart = ({ id, r }: { readonly id: string; readonly r: Revenue }) => {
  const annotations = useChartAnnotations(id)
  const labels = useMemo(() => r.mrrSeries.map((p) => p.month), [r])
  const values = useMemo(() => r.mrrSeries.map((p) => majorUnits(p.mrr.amount, p.mrr.currency)), [r])
  // This month has not closed: its point is MRR as of today, drawn as "so far", not as a month-end.
  const last = r.mrrSeries.length - 1
  const partial = last >= 0 && r.mrrSeries[last]!.month === r.asOf.slice(0, 7)
    ? { from: last, label: "so far", note: `dashed: this month so far, MRR as of ${r.asOf}` }
    : undefined
  return (
    <TimeSeries
      annotations={annotations}
      title={`MRR (${r.currency})`}
      labels={labels}
      values={values}
      partial={partial}
      format={formatMoneyIn(r.currency)}
      currentName="Month-end MRR"
      empty={noPayments(r)
        ? <p>No payment data yet. Connect Stripe on the Integrations tab to see revenue.</p>
        : undefined}
    />
  )
}

/** Where revenue is heading: MRR 3, 6 and 12 months ahead with its range, and the profit run-rate. */
const Forecast = ({ r }: { readonly r: Revenue }) => {
  const f = r.forecast
  const run = r.profitRunRate
  return (
    <>
      {f === null
        ? (
          <p className="muted" data-forecast="none">
            No MRR forecast yet: it needs at least 3 complete months of movements after MRR first went above zero.
          </p>
        )
        : (
          <>
            <table data-table="forecast">
              <caption className="muted">
                Fitted on the {f.basis.months} months {f.basis.from} – {f.basis.to}: on average{" "}
                {formatMoney(f.basis.averageChange)} a month (give or take{" "}
                {formatMoney(f.basis.standardDeviation)}). The range is where MRR lands {formatPercent(f.level)}{" "}
                of the time if the months ahead move as those did.
              </caption>
              <thead>
                <tr>
                  <th scope="col">Ahead</th>
                  <th scope="col" className="num">Expected MRR</th>
                  <th scope="col" className="num">Range</th>
                </tr>
              </thead>
              <tbody>
                {f.points.map((p) => (
                  <tr key={p.months} data-forecast={p.months} data-value={p.mrr.amount}>
                    <th scope="row">{p.months} months ({p.month})</th>
                    <td className="num">{formatMoney(p.mrr)}</td>
                    <td className="num">{formatMoney(p.low)} – {formatMoney(p.high)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      <ul className="reports-figures">
        <Figure
          name="profitRunRate.perMonth"
          raw={run.perMonth}
          label="Profit run-rate, per month"
          value={formatMoney(run.perMonth)}
        />
        <Figure
          name="profitRunRate.profit"
          raw={run.profit}
          label="Profit, last 90 days"
          value={formatMoney(run.profit)}
        />
      </ul>
      <p className="muted">
        {run.window.from} – {run.window.to}: net revenue {formatMoney(run.revenueNet)} − expenses{" "}
        {formatMoney(run.expenses)}; per month = 90 days' profit × 30.4375 ÷ 90.
      </p>
    </>
  )
}

const MOVEMENTS = [
  ["start", "MRR at the start", null],
  ["new", "New", "newCustomers"],
  ["expansion", "Expansion", null],
  ["reactivation", "Reactivation", "reactivatedCustomers"],
  ["contraction", "Contraction", null],
  ["churned", "Churn", "churnedCustomers"],
  ["netNew", "Net new MRR", null],
  ["end", "MRR at the end", null]
] as const

const Movements = ({ r }: { readonly r: Revenue }) => (
  <>
    <p className="muted">{r.window.from} – {r.window.to} ({r.timezone})</p>
    <table data-table="movements">
      <thead>
        <tr>
          <th scope="col">Movement</th>
          <th scope="col" className="num">MRR</th>
          <th scope="col" className="num">Customers</th>
        </tr>
      </thead>
      <tbody>
        {MOVEMENTS.map(([key, label, count]) => {
          const m = r.movements[key] as Money
          const sign = key === "contraction" || key === "churned" ? "−" : ""
          return (
            <tr key={key} data-movement={key} data-value={m.amount}>
              <th scope="row">{label}</th>
              <td className="num">{sign}{formatMoney(m)}</td>
              <td className="num">{count === null ? "" : formatInteger(r.movements[count])}</td>
            </tr>
          )
        })}
      </tbody>
    </table>
    <p className="muted">
      Gross revenue retention {formatPercent(r.grr)} · net revenue retention {formatPercent(r.nrr)} over the period.
    </p>
  </>
)

const Cash = ({ r }: { readonly r: Revenue }) => (
  <>
    <table data-table="cash">
      <thead>
        <tr>
          <th scope="col" />
          <th scope="col" className="num">Last 30 days</th>
          <th scope="col" className="num">30 days before</th>
        </tr>
      </thead>
      <tbody>
        <tr>
          <th scope="row">Charges</th>
          <td className="num">{formatMoney(r.last30Days.gross)}</td>
          <td className="num">{formatMoney(r.previous30Days.gross)}</td>
        </tr>
        <tr>
          <th scope="row">Refunds</th>
          <td className="num">{formatMoney(r.last30Days.refunds)}</td>
          <td className="num">{formatMoney(r.previous30Days.refunds)}</td>
        </tr>
        <tr data-value={r.last30Days.net.amount}>
          <th scope="row">Net</th>
          <td className="num">
            {formatMoney(r.last30Days.net)} <Change value={r.change.net} />
          </td>
          <td className="num">{formatMoney(r.previous30Days.net)}</td>
        </tr>
      </tbody>
    </table>
    <p>
      Failed payments, last 30 days: <strong>{formatInteger(r.failedPayments.count)}</strong>
      {r.failedPayments.count > 0 ? <>({formatMoney(r.failedPayments.amount)})</> : null}
    </p>
    <FailedPayments r={r} />
  </>
)

const FailedPayments = ({ r }: { readonly r: Revenue }) => {
  const recent = r.failedPayments.recent
  if (recent.length === 0) return null
  return (
    <div className="table-scroll" tabIndex={0} role="region" aria-label="Recent failed payments, table">
      <table className="cards" data-table="failedPayments">
        <caption className="muted">
          {recent.length < r.failedPayments.count
            ? `The newest ${formatInteger(recent.length)}, newest first`
            : "Newest first"}; amounts in the charge's currency
        </caption>
        <thead>
          <tr>
            <th scope="col">Customer</th>
            <th scope="col">Day</th>
            <th scope="col" className="num">Amount</th>
          </tr>
        </thead>
        <tbody>
          {recent.map((f) => (
            <tr key={f.chargeId}>
              <td data-label="Customer">
                <Customer c={f} />
              </td>
              <td data-label="Day">{f.day}</td>
              <td data-label="Amount" className="num">{formatMoney(f.amount)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

const CurrencyNote = ({ r }: { readonly r: Revenue }) => (
  <div className={r.unconverted.length > 0 ? "alert warn" : "muted"} data-currency={r.currency}>
    <p>
      All amounts are in{" "}
      {r.currency}, the website's reporting currency. Amounts in other currencies are converted with the stored exchange
      rate of their day.
      {r.dataThrough !== null ? ` Payment data through ${r.dataThrough}.` : ""}
    </p>
    {r.unconverted.length > 0
      ? (
        <p>
          Left out for want of an exchange rate:{" "}
          {r.unconverted.map((u) =>
            `${formatMoney(u.mrr)} MRR, ${formatMoney(u.gross)} charges, ${formatMoney(u.refunds)} refunds`
          ).join("; ")}.
        </p>
      )
      : null}
  </div>
)

const ChurnRates = ({ c }: { readonly c: Churn }) => (
  <>
    <ul className="reports-figures">
      <Figure
        name="customerChurnRate"
        raw={c.customerChurnRate}
        label="Customer churn"
        value={formatPercent(c.customerChurnRate)}
        before={formatPercent(c.previous.customerChurnRate)}
      />
      <Figure
        name="grossMrrChurnRate"
        raw={c.grossMrrChurnRate}
        label="Gross MRR churn"
        value={formatPercent(c.grossMrrChurnRate)}
        before={formatPercent(c.previous.grossMrrChurnRate)}
      />
      <Figure
        name="netMrrChurnRate"
        raw={c.netMrrChurnRate}
        label="Net MRR churn"
        value={formatPercent(c.netMrrChurnRate)}
        before={formatPercent(c.previous.netMrrChurnRate)}
      />
      <Figure
        name="churnedCustomers"
        raw={c.churnedCustomers}
        label="Churned customers"
        value={`${formatInteger(c.churnedCustomers)} of ${formatInteger(c.customersAtStart)}`}
      />
      <Figure name="churnedMrr" raw={c.churnedMrr} label="MRR lost to churn" value={formatMoney(c.churnedMrr)} />
    </ul>
    <p className="muted">
      {c.window.from} – {c.window.to}, against {c.previous.window.from} – {c.previous.window.to}.
    </p>
  </>
)

const Churned = ({ c }: { readonly c: Churn }) =>
  c.churned.length === 0
    ? <p className="muted">No customer churned in this period.</p>
    : (
      <div className="table-scroll tall" tabIndex={0} role="region" aria-label="Churned customers, table">
        <table className="cards" data-table="churned">
          <thead>
            <tr>
              <th scope="col">Customer</th>
              <th scope="col">Day</th>
              <th scope="col" className="num">MRR lost</th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            {c.churned.map((x, i) => (
              <tr key={`${x.customerId}-${x.date}-${i}`}>
                <td data-label="Customer">
                  <Customer c={x} />
                </td>
                <td data-label="Day">{x.date}</td>
                <td data-label="MRR lost" className="num">{formatMoney(x.mrrLost)}</td>
                <td data-label="Reason">{x.reason ?? <span className="muted">none given</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )

export default function RevenuePage({ website: w }: WebsitePageProps) {
  const id = w.id
  const period = usePeriod()
  const revenue = usePageReport(() => revenueAtom(id, period), [id, period])
  const churn = useReport(() => churnAtom(id, period), [id, period])
  const span = PERIOD_LABELS[period].toLowerCase()
  return (
    <>
      <h1>Revenue and churn</h1>
      <PeriodPicker period={period} />
      <CsvDownloads
        id={id}
        report="revenue"
        period={period}
        tables={[
          { table: "mrr", label: "MRR by month" },
          { table: "failed_payments", label: "Failed payments" },
          { table: "forecast", label: "MRR forecast" }
        ]}
      />
      <CsvDownloads
        id={id}
        report="churn"
        period={period}
        tables={[{ table: "churned", label: "Churned customers" }]}
      />
      <SourceGate website={w} kind="payments" what="revenue, MRR and churn">
        <Panel id="mrr" title="Recurring revenue" what="the revenue" result={revenue.result} retry={revenue.retry}>
          {(r) => (
            <>
              <Headline r={r} />
              <p className="muted">
                MRR, ARR, customers and ARPU as of{" "}
                {r.asOf}; the chart shows each month's closing MRR over the last 12 months. The period applies to the
                movements and the churn below.
              </p>
              <MrrChart id={w.id} r={r} />
              <CurrencyNote r={r} />
            </>
          )}
        </Panel>
        <div className="reports-grid">
          <Panel
            id="movements"
            title={`MRR movements, ${span}`}
            what="the MRR movements"
            result={revenue.result}
            retry={revenue.retry}
          >
            {(r) => <Movements r={r} />}
          </Panel>
          <Panel id="cash" title="Cash collected" what="the payments" result={revenue.result} retry={revenue.retry}>
            {(r) => <Cash r={r} />}
          </Panel>
        </div>
        <Panel
          id="forecast"
          title="Where revenue is heading"
          what="the forecast"
          result={revenue.result}
          retry={revenue.retry}
        >
          {(r) => <Forecast r={r} />}
        </Panel>
        <Panel id="churn" title={`Churn, ${span}`} what="the churn" result={churn.result} retry={churn.retry}>
          {(c) => <ChurnRates c={c} />}
        </Panel>
        <Panel
          id="churned"
          title="Churned customers"
          what="the churned customers"
          result={churn.result}
          retry={churn.retry}
        >
          {(c) => <Churned c={c} />}
        </Panel>
      </SourceGate>
    </>
  )
}
