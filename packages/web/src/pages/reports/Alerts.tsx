/**
 * A website's alerts (`/websites/:id/alerts`): the account's morning email (on/off, hour, time zone, "Send
 * today's briefing now"), the website's destinations — signed webhooks, Slack and email — with their rules (event
 * kinds, minimum money at stake, minimum severity; editable), adding one (its signing secret shown once) and
 * removing one, and each destination's delivery log with redelivery. docs/alerts.md describes the rules.
 */
import { useAtomValue } from "@effect/atom-react"
import { type Cadence, CADENCES, EVENT_DESCRIPTIONS, EVENT_KINDS, type EventKind } from "@sitehealth/domain/Events"
import { SEVERITIES, type Severity } from "@sitehealth/domain/Projects"
import type { Webhook, WebhookFormat } from "@sitehealth/domain/Webhooks"
import { Exit } from "effect"
import { AsyncResult } from "effect/reactivity"
import { useMemo, useState } from "react"
import { briefingEmailAtom, sendBriefingNow, updateBriefingEmail } from "../../alertsClient.ts"
import { sessionAtom } from "../../client.ts"
import { CopyButton, Field, formValues } from "../../forms.tsx"
import { useMutation } from "../../hooks.ts"
import {
  createWebhook,
  deleteWebhook,
  deliveriesAtom,
  redeliverWebhook,
  ReportKeys,
  updateWebhook,
  webhooksAtom
} from "../../reportsClient.ts"
import { Can, useCan } from "../../roles.tsx"
import { MutationStatus } from "../../ui.tsx"
import { Busy, formatMoney, formatWhen, Outcome, settled, type WebsitePageProps } from "./shared.tsx"

const HOURS = Array.from({ length: 24 }, (_, h) => h)
const hourLabel = (h: number) => `${String(h).padStart(2, "0")}:00`
/** The kinds offered for a new destination: what costs money. */
const DEFAULT_KINDS: ReadonlyArray<EventKind> = ["signal.opened", "revenue.movement", "payment.failed"]
const SELECTABLE = EVENT_KINDS.filter((k) => k !== "webhook.test" && k !== "recap.ready")
const CADENCE_LABELS: Record<Cadence, string> = {
  live: "Live: each event as it happens",
  daily: "Daily recap",
  weekly: "Weekly recap (Monday)",
  monthly: "Monthly recap"
}

const EmailPanel = () => {
  const settings = useAtomValue(briefingEmailAtom)
  const [saved, save] = useMutation(updateBriefingEmail)
  const [sent, send] = useMutation(sendBriefingNow)
  const [notice, setNotice] = useState<string | null>(null)
  const [sentNotice, setSentNotice] = useState<string | null>(null)
  const admin = useCan("admin")
  return (
    <section className="panel" aria-labelledby="email-heading">
      <h2 id="email-heading">Morning email</h2>
      <p className="muted">One email a morning for all your websites, ranked by money at stake.</p>
      <Outcome atom={briefingEmailAtom} result={settings} what="the email settings">
        {(s) => (
          <form
            onSubmit={async (event) => {
              event.preventDefault()
              setNotice(null)
              const v = formValues(event.currentTarget)
              const zone = v.get("timezone").trim()
              const exit = await save({
                payload: { enabled: v.get("enabled") === "on", hour: Number(v.get("hour")), timezone: zone || null },
                reactivityKeys: [ReportKeys.briefingEmail]
              })
              if (Exit.isSuccess(exit)) setNotice("Saved.")
            }}
          >
            <MutationStatus result={saved} />
            {notice !== null ? <div className="alert ok" role="status">{notice}</div> : null}
            <div className="form-grid">
              <div className="field">
                <label className="check">
                  <input type="checkbox" name="enabled" defaultChecked={s.enabled} /> Send the morning email
                </label>
              </div>
              <Field label="Hour">
                <select name="hour" defaultValue={s.hour}>
                  {HOURS.map((h) => <option key={h} value={h}>{hourLabel(h)}</option>)}
                </select>
              </Field>
              <Field
                label="Time zone"
                hint={`Empty follows your first website's (${s.effectiveTimezone ?? "none yet"}). E.g. Europe/Paris`}
              >
                <input name="timezone" defaultValue={s.timezone ?? ""} maxLength={64} spellCheck={false} />
              </Field>
            </div>
            <div className="row" hidden={!admin}>
              <button type="submit" disabled={saved.waiting}>
                {saved.waiting ? "Saving…" : "Save email settings"}
              </button>
              <button
                type="button"
                className="secondary"
                disabled={sent.waiting}
                onClick={async () => {
                  setSentNotice(null)
                  const exit = await send({ reactivityKeys: [ReportKeys.briefingEmail] })
                  if (Exit.isSuccess(exit)) setSentNotice(exit.value.message)
                }}
              >
                {sent.waiting ? "Sending…" : "Send today's briefing now"}
              </button>
            </div>
            <MutationStatus result={sent} />
            {sentNotice !== null ? <div className="alert ok" role="status">{sentNotice}</div> : null}
            {s.lastSent !== null
              ? <p className="muted small">Today's email ({s.lastSent.localDate}) went {formatWhen(s.lastSent.at)}.</p>
              : null}
          </form>
        )}
      </Outcome>
    </section>
  )
}

/** The event kinds as checkboxes. */
const KindsField = ({ chosen }: { readonly chosen: ReadonlyArray<EventKind> }) => (
  <fieldset className="kinds">
    <legend>Events</legend>
    {SELECTABLE.map((k) => (
      <label className="check" key={k} title={EVENT_DESCRIPTIONS[k]}>
        <input type="checkbox" name="events" value={k} defaultChecked={chosen.includes(k)} /> <code>{k}</code>
      </label>
    ))}
  </fieldset>
)

/** Minimum money (major units, in the website's currency) and severity: the rules' inputs. */
const RuleFields = ({ minMoney, minSeverity, cadence, currency }: {
  readonly minMoney: number | null
  readonly minSeverity: Severity | null
  readonly cadence: Cadence
  readonly currency: string
}) => (
  <>
    <Field label="Cadence" hint="A recap lists the period's largest gains and losses, at 08:00">
      <select name="cadence" defaultValue={cadence}>
        {CADENCES.map((c) => <option key={c} value={c}>{CADENCE_LABELS[c]}</option>)}
      </select>
    </Field>
    <Field label={`Minimum money at stake (${currency})`} hint="Empty: no minimum. E.g. 50">
      <input
        name="minMoney"
        inputMode="decimal"
        pattern="[0-9]+([.,][0-9]{1,2})?"
        defaultValue={minMoney === null ? "" : String(minMoney / 100)}
      />
    </Field>
    <Field label="Minimum severity" hint="For signals; other events pass">
      <select name="minSeverity" defaultValue={minSeverity ?? ""}>
        <option value="">Any</option>
        {SEVERITIES.map((s) => <option key={s} value={s}>{s}</option>)}
      </select>
    </Field>
  </>
)

const rulesOf = (form: HTMLFormElement) => {
  const v = formValues(form)
  const money = v.get("minMoney").trim().replace(",", ".")
  const severity = v.get("minSeverity")
  return {
    events: v.all("events") as Array<EventKind>,
    minMoneyAtStake: money === "" ? null : Math.round(Number(money) * 100),
    minSeverity: severity === "" ? null : severity as Severity,
    cadence: (CADENCES as ReadonlyArray<string>).includes(v.get("cadence")) ? v.get("cadence") as Cadence : "live"
  }
}

const Deliveries = ({ websiteId, webhookId }: { readonly websiteId: string; readonly webhookId: string }) => {
  const atom = useMemo(() => deliveriesAtom(websiteId, webhookId), [websiteId, webhookId])
  const result = useAtomValue(atom)
  const [redelivered, redeliver] = useMutation(redeliverWebhook)
  const admin = useCan("admin")
  return (
    <Outcome atom={atom} result={result} what="the deliveries">
      {({ deliveries }) =>
        deliveries.length === 0
          ? <p className="muted">No deliveries yet.</p>
          : (
            <>
              <MutationStatus result={redelivered} />
              <table className="cards deliveries">
                <caption>Delivery log</caption>
                <thead>
                  <tr>
                    <th scope="col">Event</th>
                    <th scope="col">Status</th>
                    <th scope="col">Response</th>
                    <th scope="col">Attempts</th>
                    <th scope="col">Latency</th>
                    <th scope="col">Answer</th>
                    <th scope="col">When</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {deliveries.map((d) => (
                    <tr key={d.id} data-delivery={d.id}>
                      <th scope="row" data-label="Event">
                        <code>{d.type}</code>
                      </th>
                      <td data-label="Status">{d.status}</td>
                      <td data-label="Response">{d.responseStatus ?? "—"}</td>
                      <td data-label="Attempts" className="num">{d.attempts}</td>
                      <td data-label="Latency" className="num">{d.latencyMs === null ? "—" : `${d.latencyMs} ms`}</td>
                      <td data-label="Answer" className="small">{d.responseExcerpt ?? "—"}</td>
                      <td data-label="When">{formatWhen(d.lastAttemptAt ?? d.createdAt)}</td>
                      <td data-label="Actions">
                        <button
                          hidden={!admin}
                          type="button"
                          className="secondary"
                          disabled={redelivered.waiting}
                          aria-label={`Redeliver ${d.type} of ${formatWhen(d.createdAt)}`}
                          onClick={() =>
                            redeliver({
                              params: { id: websiteId, webhookId, deliveryId: d.id },
                              reactivityKeys: [ReportKeys.webhooks]
                            })}
                        >
                          Redeliver
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
    </Outcome>
  )
}

const Destination = ({ website, webhook }: WebsitePageProps & { readonly webhook: Webhook }) => {
  const [saved, save] = useMutation(updateWebhook)
  const [removed, remove] = useMutation(deleteWebhook)
  const [confirming, setConfirming] = useState(false)
  const [notice, setNotice] = useState<string | null>(null)
  const name = webhook.description ??
    (webhook.format === "email" ? webhook.url.slice("mailto:".length) : new URL(webhook.url).host)
  const admin = useCan("admin")
  return (
    <section className="panel" aria-labelledby={`dest-${webhook.id}`} data-webhook={webhook.id}>
      <h2 id={`dest-${webhook.id}`}>{FORMAT_NAMES[webhook.format]}: {name}</h2>
      <p className="muted small">
        {webhook.url} · {webhook.status}
        {webhook.disabledReason !== null ? ` (${webhook.disabledReason})` : ""}
      </p>
      <form
        aria-label={`Rules of ${name}`}
        onSubmit={async (event) => {
          event.preventDefault()
          setNotice(null)
          const exit = await save({
            params: { id: website.id, webhookId: webhook.id },
            payload: rulesOf(event.currentTarget),
            reactivityKeys: [ReportKeys.webhooks]
          })
          if (Exit.isSuccess(exit)) setNotice("Rules saved.")
        }}
      >
        <MutationStatus result={saved} />
        {notice !== null ? <div className="alert ok" role="status">{notice}</div> : null}
        <KindsField chosen={webhook.events} />
        <div className="form-grid">
          <RuleFields
            minMoney={webhook.minMoneyAtStake}
            minSeverity={webhook.minSeverity}
            cadence={webhook.cadence}
            currency={website.currency}
          />
        </div>
        <div className="row" hidden={!admin}>
          <button type="submit" disabled={saved.waiting}>{saved.waiting ? "Saving…" : "Save rules"}</button>
          {confirming
            ? (
              <>
                <button
                  type="button"
                  className="danger"
                  disabled={removed.waiting}
                  onClick={() =>
                    remove({
                      params: { id: website.id, webhookId: webhook.id },
                      reactivityKeys: [ReportKeys.webhooks]
                    })}
                >
                  Yes, remove
                </button>
                <button type="button" className="secondary" onClick={() => setConfirming(false)}>Cancel</button>
              </>
            )
            : (
              <button type="button" className="secondary" onClick={() => setConfirming(true)}>
                Remove destination
              </button>
            )}
        </div>
        <MutationStatus result={removed} />
      </form>
      <Deliveries websiteId={website.id} webhookId={webhook.id} />
    </section>
  )
}

const FORMAT_NAMES: Record<WebhookFormat, string> = { standard_webhooks: "Webhook", slack: "Slack", email: "Email" }

const AddDestination = ({ website }: WebsitePageProps) => {
  const [result, run] = useMutation(createWebhook)
  const [secret, setSecret] = useState<string | null>(null)
  const [added, setAdded] = useState<string | null>(null)
  const [format, setFormat] = useState<WebhookFormat>("standard_webhooks")
  const session = useAtomValue(sessionAtom)
  const me = AsyncResult.isSuccess(session) ? session.value.user.email : ""
  return (
    <section className="panel" aria-labelledby="add-destination-heading">
      <h2 id="add-destination-heading">Add a destination</h2>
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          setSecret(null)
          setAdded(null)
          const form = event.currentTarget
          const v = formValues(form)
          const rules = rulesOf(form)
          const exit = await run({
            params: { id: website.id },
            payload: {
              confirm: true,
              url: format === "email" ? `mailto:${v.get("address").trim()}` : v.get("url").trim(),
              format,
              ...rules,
              events: rules.events as [EventKind, ...Array<EventKind>]
            },
            reactivityKeys: [ReportKeys.webhooks]
          })
          if (Exit.isSuccess(exit) && "secret" in exit.value) {
            if (format === "email") setAdded(`Alerts for ${website.name} will be mailed to ${v.get("address").trim()}.`)
            else setSecret(exit.value.secret)
            form.reset()
            setFormat("standard_webhooks")
          }
        }}
      >
        <MutationStatus result={result} />
        {secret !== null
          ? (
            <div className="alert ok" role="status">
              <strong>Destination added.</strong> Its signing secret, shown once — store it now:
              <p>
                <code data-testid="webhook-secret">{secret}</code> <CopyButton text={secret} label="Copy secret" />
              </p>
            </div>
          )
          : null}
        {added !== null ? <div className="alert ok" role="status">{added}</div> : null}
        <div className="form-grid">
          <Field label="Kind">
            <select name="format" value={format} onChange={(e) => setFormat(e.target.value as WebhookFormat)}>
              <option value="standard_webhooks">Signed webhook</option>
              <option value="slack">Slack</option>
              <option value="email">Email</option>
            </select>
          </Field>
          {format === "email"
            ? (
              <Field label="Address" hint="A member of this account (the Team page invites others)">
                <input key="address" name="address" type="email" required maxLength={320} defaultValue={me} />
              </Field>
            )
            : (
              <Field label="URL" hint="https:// — a Slack incoming-webhook URL for Slack">
                <input key="url" name="url" type="url" required maxLength={2000} placeholder="https://" />
              </Field>
            )}
          <RuleFields minMoney={5000} minSeverity={null} cadence="live" currency={website.currency} />
        </div>
        <KindsField chosen={DEFAULT_KINDS} />
        <div className="row">
          <button type="submit" disabled={result.waiting}>{result.waiting ? "Adding…" : "Add destination"}</button>
        </div>
      </form>
    </section>
  )
}

export default function AlertsPage({ website }: WebsitePageProps) {
  const atom = useMemo(() => webhooksAtom(website.id), [website.id])
  const list = useAtomValue(atom)
  return (
    <>
      <h1>Alerts</h1>
      <Can level="admin" what="changing alerts">{null}</Can>
      <Busy busy={!settled(list)} />
      <EmailPanel />
      <Outcome atom={atom} result={list} what="the destinations">
        {({ webhooks }) => (
          <>
            {webhooks.length === 0
              ? <p className="muted">No webhook or Slack destination yet for {website.name}.</p>
              : webhooks.map((w) => <Destination key={w.id} website={website} webhook={w} />)}
          </>
        )}
      </Outcome>
      <Can level="admin">
        <AddDestination website={website} />
      </Can>
      <p className="muted small">
        Money at stake is compared in {website.currency} ({formatMoney(5000, website.currency)} is entered as 50).
      </p>
    </>
  )
}
