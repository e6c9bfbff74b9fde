/**
 * A local fake of the Stripe endpoints the connector calls (a node:http server on 127.0.0.1, port 0):
 * GET /v1/customers, /v1/subscriptions, /v1/invoices, /v1/invoices/{id}/lines, /v1/charges, /v1/refunds,
 * /v1/events (`types[]`, `created[gt]`/`[gte]`; served from `data.events`, empty when absent) and each
 * object by id (`/v1/customers/{id}`…, 404 when unknown), with Stripe's paging (`limit` ≤ 100,
 * `starting_after` — 400 for an unknown id, `has_more`, newest first), `created[gte]`, the
 * subscriptions list leaving canceled ones out unless `status=all`, invoices embedding their first 10
 * lines, bearer-key auth (401 with Stripe's error body), and injectable faults (429 + Retry-After, 5xx,
 * a body that is not JSON). Lists are sources read by index, so the benchmark can serve 100,000
 * subscriptions generated on demand instead of held as JSON.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

/** A Stripe object as a test or the bench writes it: any JSON (any: the fixtures read fields of every type). */
export type Obj = Record<string, any>

/** A list read by index (newest first), with a way to find an id's position. */
export interface ListSource {
  readonly size: number
  readonly get: (i: number) => Obj
  readonly indexOf: (id: string) => number | undefined
}

export const fromArray = (items: ReadonlyArray<Obj>): ListSource => {
  // Stripe lists newest first; ties keep the given order.
  const sorted = [...items].map((o, i) => [o, i] as const).sort((a, b) => b[0].created - a[0].created || a[1] - b[1])
    .map(([o]) => o)
  const index = new Map(sorted.map((o, i) => [o.id as string, i]))
  return { size: sorted.length, get: (i) => sorted[i]!, indexOf: (id) => index.get(id) }
}

export interface FakeStripeData {
  readonly customers: ListSource
  readonly subscriptions: ListSource
  readonly invoices: ListSource
  readonly charges: ListSource
  readonly refunds: ListSource
  /** Events, newest first as Stripe lists them (`event(...)` builds one). */
  readonly events?: ListSource
}

export interface Fault {
  /** Requests whose path starts with this. */
  readonly path: string
  readonly status: number
  readonly headers?: Record<string, string>
  /** Sent as is (not JSON when the test wants a malformed body). */
  readonly body?: string
}

export interface FakeStripe {
  readonly url: string
  /** Valid keys; delete one to revoke it. */
  readonly keys: Set<string>
  /**
   * Restricted keys: key → the resources it may read (`customers`, `subscriptions`…); a key not in this map
   * reads everything. Another resource answers 403 with Stripe's permission error, as Stripe does.
   */
  readonly permissions: Map<string, ReadonlySet<string>>
  /** Served once each, first match first. */
  readonly faults: Array<Fault>
  /** Every request: path with query, and the Stripe-Version it carried. */
  readonly requests: Array<{ readonly url: string; readonly version: string | null }>
  data: FakeStripeData
  readonly stop: () => Promise<void>
}

const EMBEDDED_LINES = 10

const send = (res: Http.ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(body)
}

const stripeError = (type: string, message: string) => JSON.stringify({ error: { type, message } })

/** An invoice as listed: its first lines embedded, the list's url for the rest. */
const asListed = (invoice: Obj): Obj => {
  const lines: Array<Obj> = invoice.lines?.data ?? []
  return {
    ...invoice,
    lines: {
      object: "list",
      data: lines.slice(0, EMBEDDED_LINES),
      has_more: lines.length > EMBEDDED_LINES,
      url: `/v1/invoices/${invoice.id}/lines`
    }
  }
}

/** A subscription as Stripe renders it: the first 10 items embedded, the rest from /v1/subscription_items. */
const asListedSubscription = (sub: Obj): Obj => {
  const items: Array<Obj> = sub.items?.data ?? []
  if (items.length <= EMBEDDED_LINES) return sub
  return {
    ...sub,
    items: {
      object: "list",
      data: items.slice(0, EMBEDDED_LINES),
      has_more: true,
      url: `/v1/subscription_items?subscription=${sub.id}`
    }
  }
}

/** A filtered view of a source, built once per distinct filter. */
const filtered = (source: ListSource, keep: (o: Obj) => boolean): ListSource => {
  const items: Array<Obj> = []
  for (let i = 0; i < source.size; i++) if (keep(source.get(i))) items.push(source.get(i))
  const index = new Map(items.map((o, i) => [o.id as string, i]))
  return { size: items.length, get: (i) => items[i]!, indexOf: (id) => index.get(id) }
}

export const startFakeStripe = async (
  data: FakeStripeData,
  options: { readonly keys?: ReadonlyArray<string>; readonly maxPageSize?: number } = {}
): Promise<FakeStripe> => {
  const keys = options.keys ?? ["sk_test_fake"]
  // Stripe's own cap is 100; tests lower it to get several pages out of a small dataset.
  const maxPageSize = options.maxPageSize ?? 100
  // Per source object: a test that replaces `fake.data` gets fresh views.
  const views = new WeakMap<ListSource, Map<string, ListSource>>()
  const fake: FakeStripe = {
    url: "",
    keys: new Set(keys),
    permissions: new Map(),
    faults: [],
    requests: [],
    data,
    stop: async () => undefined
  }

  const page = (
    res: Http.ServerResponse,
    source: ListSource,
    query: URLSearchParams,
    map: (o: Obj) => Obj = (o) => o
  ) => {
    const limit = Math.min(maxPageSize, Math.max(1, Number(query.get("limit") ?? "10")))
    const after = query.get("starting_after")
    let from = 0
    if (after !== null) {
      const at = source.indexOf(after)
      if (at === undefined) return send(res, 400, stripeError("invalid_request_error", `No such object: '${after}'`))
      from = at + 1
    }
    const items: Array<Obj> = []
    for (let i = from; i < Math.min(source.size, from + limit); i++) items.push(map(source.get(i)))
    send(res, 200, JSON.stringify({ object: "list", data: items, has_more: from + limit < source.size, url: "" }))
  }

  const view = (
    name: string,
    source: ListSource,
    query: URLSearchParams,
    keep: ((o: Obj) => boolean) | null,
    keepKey = "k"
  ) => {
    const gte = query.get("created[gte]")
    const gt = query.get("created[gt]")
    if (keep === null && gte === null && gt === null) return source
    const key = `${name}|${gte}|${gt}|${keep === null ? "" : keepKey}`
    let bySource = views.get(source)
    if (bySource === undefined) views.set(source, bySource = new Map())
    let v = bySource.get(key)
    if (v === undefined) {
      const since = gte === null ? Number.NEGATIVE_INFINITY : Number(gte)
      const after = gt === null ? Number.NEGATIVE_INFINITY : Number(gt)
      bySource.set(
        key,
        v = filtered(source, (o) => o.created >= since && o.created > after && (keep === null || keep(o)))
      )
    }
    return v
  }
  const noEvents: ListSource = { size: 0, get: () => ({}), indexOf: () => undefined }
  const retrievable: Record<string, (d: FakeStripeData) => ListSource> = {
    customers: (d) => d.customers,
    subscriptions: (d) => d.subscriptions,
    invoices: (d) => d.invoices,
    charges: (d) => d.charges,
    refunds: (d) => d.refunds,
    events: (d) => d.events ?? noEvents
  }

  const server = Http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    const version = (req.headers["stripe-version"] as string | undefined) ?? null
    fake.requests.push({ url: `${url.pathname}${url.search}`, version })
    const fault = fake.faults.findIndex((f) => url.pathname.startsWith(f.path))
    if (fault >= 0) {
      const [f] = fake.faults.splice(fault, 1)
      return send(res, f!.status, f!.body ?? stripeError("api_error", "injected fault"), f!.headers)
    }
    const auth = req.headers.authorization ?? ""
    if (!auth.startsWith("Bearer ") || !fake.keys.has(auth.slice(7))) {
      return send(res, 401, stripeError("invalid_request_error", "Invalid API Key provided: sk_****"))
    }
    if (req.method !== "GET") return send(res, 405, stripeError("invalid_request_error", "GET only"))
    const allowed = fake.permissions.get(auth.slice(7))
    const resource = url.pathname.split("/")[2] ?? ""
    if (allowed !== undefined && !allowed.has(resource)) {
      return send(
        res,
        403,
        stripeError(
          "invalid_request_error",
          "The provided key 'rk_test_***' does not have the required permissions for this endpoint on account " +
            `'acct_fake'. Having the 'rak_${
              resource.replace(/s$/, "")
            }_read' permission would allow this request to continue.`
        )
      )
    }
    const q = url.searchParams
    const d = fake.data
    const lines = /^\/v1\/invoices\/([^/]+)\/lines$/.exec(url.pathname)
    if (lines !== null) {
      const at = d.invoices.indexOf(decodeURIComponent(lines[1]!))
      if (at === undefined) return send(res, 404, stripeError("invalid_request_error", "No such invoice"))
      const all: Array<Obj> = d.invoices.get(at).lines?.data ?? []
      const index = new Map(all.map((l, i) => [l.id as string, i]))
      return page(res, { size: all.length, get: (i) => all[i]!, indexOf: (id) => index.get(id) }, q)
    }
    const one = /^\/v1\/([a-z_]+)\/([^/]+)$/.exec(url.pathname)
    if (one !== null && retrievable[one[1]!] !== undefined) {
      const source = retrievable[one[1]!]!(d)
      const at = source.indexOf(decodeURIComponent(one[2]!))
      if (at === undefined) {
        return send(
          res,
          404,
          stripeError("invalid_request_error", `No such ${one[1]!.replace(/s$/, "")}: '${one[2]!}'`)
        )
      }
      const o = source.get(at)
      return send(
        res,
        200,
        JSON.stringify(one[1] === "invoices" ? asListed(o) : one[1] === "subscriptions" ? asListedSubscription(o) : o)
      )
    }
    switch (url.pathname) {
      case "/v1/events": {
        const types = q.getAll("types[]")
        const type = q.get("type")
        const wanted = types.length > 0 ? new Set(types) : null
        const keep = wanted !== null
          ? (o: Obj) => wanted.has(o.type)
          : type !== null
          ? (o: Obj) => o.type === type
          : null
        return page(res, view("events", d.events ?? noEvents, q, keep, `${types.join(",")}|${type}`), q)
      }
      case "/v1/customers":
        return page(res, view("customers", d.customers, q, null), q)
      case "/v1/subscriptions": {
        const status = q.get("status")
        // Stripe leaves canceled subscriptions out unless asked for them.
        const keep = status === "all"
          ? null
          : status === null
          ? (o: Obj) => o.status !== "canceled"
          : (o: Obj) => o.status === status
        return page(res, view(`subscriptions:${status}`, d.subscriptions, q, keep), q, asListedSubscription)
      }
      case "/v1/subscription_items": {
        // Stripe requires the subscription; its items in order.
        const id = q.get("subscription")
        if (id === null) {
          return send(res, 400, stripeError("invalid_request_error", "Missing required param: subscription."))
        }
        const at = d.subscriptions.indexOf(id)
        if (at === undefined) {
          return send(res, 400, stripeError("invalid_request_error", `No such subscription: '${id}'`))
        }
        const all: Array<Obj> = (d.subscriptions.get(at).items?.data ?? []).map((it: Obj) => ({
          ...it,
          object: "subscription_item",
          subscription: id
        }))
        const index = new Map(all.map((it, i) => [it.id as string, i]))
        return page(res, { size: all.length, get: (i) => all[i]!, indexOf: (id) => index.get(id) }, q)
      }
      case "/v1/invoices":
        return page(res, view("invoices", d.invoices, q, null), q, asListed)
      case "/v1/charges":
        return page(res, view("charges", d.charges, q, null), q)
      case "/v1/refunds":
        return page(res, view("refunds", d.refunds, q, null), q)
      case "/v1/balance":
        return send(res, 200, JSON.stringify({ object: "balance", available: [], pending: [] }))
      default:
        return send(res, 404, stripeError("invalid_request_error", `Unrecognized request URL (GET: ${url.pathname})`))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const { port } = server.address() as AddressInfo
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve()))
  })
}

// ---------------------------------------------------------------------------------------------------
// Builders of Stripe-shaped objects (API 2024-06-20), shared by the tests and the benchmark.
// ---------------------------------------------------------------------------------------------------

/** Unix seconds of an ISO instant. */
export const ts = (iso: string): number => Math.floor(Date.parse(iso) / 1000)

export const price = (
  id: string,
  unitAmount: number,
  interval: "day" | "week" | "month" | "year" = "month",
  intervalCount = 1,
  currency = "usd"
): Obj => ({
  id,
  object: "price",
  currency,
  unit_amount: unitAmount,
  recurring: { interval, interval_count: intervalCount }
})

/** A customer; like Stripe's, it has `name` and `email` always, null when the account holds none. */
export const customer = (
  id: string,
  created: number,
  details: { readonly name?: string | null; readonly email?: string | null } = {}
): Obj => ({ id, object: "customer", created, name: details.name ?? null, email: details.email ?? null })

export const subscription = (s: {
  id: string
  customer: string
  status: string
  created: number
  currentPeriodStart: number
  items: ReadonlyArray<{ price: Obj; quantity?: number }>
  trialStart?: number
  trialEnd?: number
  endedAt?: number
  canceledAt?: number
  cancellation?: { reason?: string; feedback?: string }
  coupon?: { percent_off?: number; amount_off?: number }
}): Obj => ({
  id: s.id,
  object: "subscription",
  customer: s.customer,
  status: s.status,
  created: s.created,
  start_date: s.created,
  current_period_start: s.currentPeriodStart,
  trial_start: s.trialStart ?? null,
  trial_end: s.trialEnd ?? null,
  ended_at: s.endedAt ?? null,
  canceled_at: s.canceledAt ?? s.endedAt ?? null,
  cancellation_details: {
    reason: s.cancellation?.reason ?? null,
    feedback: s.cancellation?.feedback ?? null,
    comment: null
  },
  discount: s.coupon === undefined
    ? null
    : {
      object: "discount",
      coupon: { percent_off: s.coupon.percent_off ?? null, amount_off: s.coupon.amount_off ?? null }
    },
  discounts: [],
  items: {
    object: "list",
    data: s.items.map((it, i) => ({ id: `si_${s.id}_${i}`, price: it.price, quantity: it.quantity ?? 1 })),
    has_more: false
  }
})

/** A subscription line: a renewal, or a proration when `proration` (amount prorated by the caller). */
export const line = (l: {
  id: string
  subscription: string
  price: Obj
  start: number
  end: number
  quantity?: number
  amount?: number
  proration?: boolean
  discount?: number
}): Obj => ({
  id: l.id,
  object: "line_item",
  type: l.proration === true ? "invoiceitem" : "subscription",
  subscription: l.subscription,
  proration: l.proration === true,
  period: { start: l.start, end: l.end },
  price: l.price,
  quantity: l.quantity ?? 1,
  amount: l.amount ?? l.price.unit_amount * (l.quantity ?? 1),
  currency: l.price.currency,
  discount_amounts: l.discount === undefined ? [] : [{ amount: l.discount, discount: `di_${l.id}` }]
})

export const invoice = (
  id: string,
  subscriptionId: string | null,
  created: number,
  lines: ReadonlyArray<Obj>,
  status = "paid"
): Obj => ({
  id,
  object: "invoice",
  subscription: subscriptionId,
  created,
  status,
  lines: { object: "list", data: lines, has_more: false }
})

export const charge = (
  id: string,
  customerId: string | null,
  created: number,
  amount: number,
  status = "succeeded",
  currency = "usd"
): Obj => ({
  id,
  object: "charge",
  customer: customerId,
  created,
  amount,
  currency,
  status
})

export const refund = (id: string, chargeId: string, created: number, amount: number, currency = "usd"): Obj => ({
  id,
  object: "refund",
  charge: chargeId,
  created,
  amount,
  currency,
  status: "succeeded"
})

/**
 * An event as GET /v1/events lists it: `object` is the snapshot (rendered in `apiVersion`, the pinned
 * 2024-06-20 unless a test says otherwise).
 */
export const event = (id: string, type: string, created: number, object: Obj, apiVersion = "2024-06-20"): Obj => ({
  id,
  object: "event",
  type,
  created,
  api_version: apiVersion,
  data: { object }
})
