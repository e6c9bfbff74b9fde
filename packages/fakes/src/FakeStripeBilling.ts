/**
 * A local fake of the Stripe endpoints the service's own billing calls (docs/billing.md), a node:http server on
 * 127.0.0.1: POST /v1/customers, /v1/checkout/sessions, /v1/billing_portal/sessions, GET /v1/subscriptions/{id},
 * with bearer-key auth and Stripe's error bodies. A Checkout Session's `url` is a page here whose button pays
 * (the subscription starts) and sends the browser to `success_url`; a portal session's page cancels (now or at the
 * period's end) and returns to `return_url`. Each change sends its events to the webhook, signed with the real
 * Stripe-Signature scheme (`t=…,v1=HMAC-SHA256(secret, "t.body")`), through `deliver` (a POST to `webhookUrl`
 * unless a test replaces it). Time is `now()`, which a test may point at its clock.
 */
import { createHmac, randomBytes } from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { closeNow, readBody, send } from "./FakeHttp.ts"

type Obj = Record<string, any>

export interface Delivery {
  readonly event: Obj
  readonly status: number
}

export interface FakeStripeBilling {
  readonly url: string
  readonly secretKey: string
  readonly webhookSecret: string
  readonly prices: { readonly monthly: string; readonly yearly: string }
  readonly customers: Map<string, Obj>
  readonly sessions: Map<string, Obj>
  readonly subscriptions: Map<string, Obj>
  /** Every API call: method, path and form. */
  readonly calls: Array<{ readonly method: string; readonly path: string; readonly form: Record<string, string> }>
  /** Every event sent, in order. */
  readonly events: Array<Obj>
  /** Milliseconds; Date.now unless set. */
  now: () => number
  /** Where events go: the app's `/billing/webhook`. */
  webhookUrl: string | null
  /** Sends one signed delivery; answers the webhook's status. A test may replace it (an in-process app). */
  deliver: (body: string, signature: string) => Promise<number>
  /** The Stripe-Signature header for `body` at `t` (unix seconds; now by default), signed with `secret`. */
  readonly sign: (body: string, t?: number, secret?: string) => string
  /** Builds an event of `type` about `object` (copied as it is now) and delivers it. */
  readonly send: (type: string, object: Obj) => Promise<Delivery>
  /** Delivers an event sent before again, as is (Stripe's retries, a duplicate). */
  readonly redeliver: (eventId: string) => Promise<Delivery>
  /** What the Checkout page's button does: starts the subscription, sends the events. */
  readonly completeCheckout: (sessionId: string) => Promise<Obj>
  /** Changes a subscription (status, cancel_at_period_end…) and sends `customer.subscription.updated`. */
  readonly update: (subscriptionId: string, patch: Obj) => Promise<Obj>
  /** Cancels now: status canceled, `ended_at` now, `customer.subscription.deleted`. */
  readonly cancelNow: (subscriptionId: string) => Promise<Obj>
  readonly stop: () => Promise<void>
}

const DAY = 86_400

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>` +
  `<body><main><h1>${title}</h1>${body}</main></body></html>`

const stripeError = (res: Http.ServerResponse, status: number, message: string, type = "invalid_request_error") =>
  send(res, status, { error: { type, message } })

export const startFakeStripeBilling = async (
  options: { readonly secretKey?: string; readonly webhookSecret?: string } = {}
): Promise<FakeStripeBilling> => {
  const secretKey = options.secretKey ?? `sk_test_${randomBytes(12).toString("hex")}`
  const webhookSecret = options.webhookSecret ?? `whsec_${randomBytes(24).toString("base64url")}`
  const prices = { monthly: "price_monthly_fake", yearly: "price_yearly_fake" }
  const customers = new Map<string, Obj>()
  const sessions = new Map<string, Obj>()
  const portals = new Map<string, Obj>()
  const subscriptions = new Map<string, Obj>()
  const idempotent = new Map<string, Obj>()
  const calls: FakeStripeBilling["calls"] = []
  const events: Array<Obj> = []
  let counter = 0
  const id = (prefix: string) => `${prefix}_${randomBytes(6).toString("hex")}${++counter}`

  const fake = {} as FakeStripeBilling & { now: () => number; webhookUrl: string | null }
  const seconds = () => Math.floor(fake.now() / 1000)

  const sign = (body: string, t = seconds(), secret = webhookSecret) =>
    `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")}`

  const deliverEvent = async (event: Obj): Promise<Delivery> => {
    const body = JSON.stringify(event)
    return { event, status: await fake.deliver(body, sign(body)) }
  }
  const sendEvent = (type: string, object: Obj) => {
    const event = {
      id: id("evt"),
      object: "event",
      type,
      created: seconds(),
      livemode: false,
      data: { object: structuredClone(object) }
    }
    events.push(event)
    return deliverEvent(event)
  }

  const startSubscription = async (session: Obj) => {
    const now = seconds()
    const price = session.price as string
    const trialEnd = session.trial_end === undefined ? null : Number(session.trial_end)
    const end = trialEnd ?? now + (price === prices.yearly ? 365 : 30) * DAY
    const sub: Obj = {
      id: id("sub"),
      object: "subscription",
      customer: session.customer,
      status: trialEnd === null ? "active" : "trialing",
      cancel_at_period_end: false,
      current_period_end: end,
      ended_at: null,
      created: now,
      metadata: { account_id: session.client_reference_id },
      items: { data: [{ price: { id: price }, current_period_end: end }] }
    }
    subscriptions.set(sub.id, sub)
    Object.assign(session, { status: "complete", subscription: sub.id })
    await sendEvent("checkout.session.completed", {
      id: session.id,
      object: "checkout.session",
      mode: "subscription",
      customer: session.customer,
      client_reference_id: session.client_reference_id,
      subscription: sub.id,
      status: "complete"
    })
    await sendEvent("customer.subscription.created", sub)
    await sendEvent("invoice.paid", { id: id("in"), object: "invoice", customer: sub.customer, subscription: sub.id })
    return sub
  }

  const update = async (subscriptionId: string, patch: Obj) => {
    const sub = subscriptions.get(subscriptionId)
    if (sub === undefined) throw new Error(`no subscription ${subscriptionId}`)
    Object.assign(sub, patch)
    await sendEvent("customer.subscription.updated", sub)
    return sub
  }
  const cancelNow = async (subscriptionId: string) => {
    const sub = subscriptions.get(subscriptionId)
    if (sub === undefined) throw new Error(`no subscription ${subscriptionId}`)
    Object.assign(sub, { status: "canceled", ended_at: seconds(), cancel_at_period_end: false })
    await sendEvent("customer.subscription.deleted", sub)
    return sub
  }

  const api = async (
    req: Http.IncomingMessage,
    res: Http.ServerResponse,
    path: string,
    form: Record<string, string>
  ) => {
    if (req.headers.authorization !== `Bearer ${secretKey}`) {
      return stripeError(res, 401, "Invalid API Key provided", "authentication_error")
    }
    const key = req.headers["idempotency-key"]
    if (typeof key === "string" && idempotent.has(key)) return send(res, 200, idempotent.get(key))
    const remember = (obj: Obj) => {
      if (typeof key === "string") idempotent.set(key, obj)
      return send(res, 200, obj)
    }
    if (req.method === "POST" && path === "/v1/customers") {
      const customer = {
        id: id("cus"),
        object: "customer",
        email: form.email ?? null,
        metadata: { account_id: form["metadata[account_id]"] }
      }
      customers.set(customer.id, customer)
      return remember(customer)
    }
    if (req.method === "POST" && path === "/v1/checkout/sessions") {
      const price = form["line_items[0][price]"]
      if (form.mode !== "subscription") return stripeError(res, 400, "mode must be subscription here")
      if (!customers.has(form.customer ?? "")) return stripeError(res, 400, `No such customer: '${form.customer}'`)
      if (price !== prices.monthly && price !== prices.yearly) return stripeError(res, 400, `No such price: '${price}'`)
      if (!form.success_url || !form.cancel_url) return stripeError(res, 400, "success_url and cancel_url are required")
      const trialEnd = form["subscription_data[trial_end]"]
      if (trialEnd !== undefined && Number(trialEnd) < seconds() + 2 * DAY) {
        return stripeError(res, 400, "trial_end must be at least 48 hours in the future")
      }
      const session: Obj = {
        id: id("cs_test"),
        object: "checkout.session",
        mode: "subscription",
        customer: form.customer,
        client_reference_id: form.client_reference_id ?? null,
        price,
        success_url: form.success_url,
        cancel_url: form.cancel_url,
        status: "open",
        subscription: null,
        ...(trialEnd === undefined ? {} : { trial_end: trialEnd })
      }
      session.url = `${fake.url}/checkout/${session.id}`
      sessions.set(session.id, session)
      return remember(session)
    }
    if (req.method === "POST" && path === "/v1/billing_portal/sessions") {
      if (!customers.has(form.customer ?? "")) return stripeError(res, 400, `No such customer: '${form.customer}'`)
      const portal = {
        id: id("bps"),
        object: "billing_portal.session",
        customer: form.customer,
        return_url: form.return_url
      }
      portals.set(portal.id, { ...portal, url: `${fake.url}/portal/${portal.id}` })
      return remember(portals.get(portal.id)!)
    }
    const sub = /^\/v1\/subscriptions\/([^/]+)$/.exec(path)
    if (req.method === "GET" && sub !== null) {
      const found = subscriptions.get(decodeURIComponent(sub[1]!))
      return found === undefined
        ? stripeError(res, 404, `No such subscription: '${sub[1]}'`)
        : send(res, 200, found)
    }
    return stripeError(res, 404, `Unrecognized request URL (${req.method}: ${path})`)
  }

  const pages = async (req: Http.IncomingMessage, res: Http.ServerResponse, path: string) => {
    const html = (status: number, body: string) => {
      res.writeHead(status, { "content-type": "text/html; charset=utf-8" })
      res.end(body)
    }
    const redirect = (to: string) => {
      res.writeHead(303, { location: to })
      res.end()
    }
    const checkout = /^\/checkout\/([^/]+)(\/complete)?$/.exec(path)
    if (checkout !== null) {
      const session = sessions.get(checkout[1]!)
      if (session === undefined) return html(404, page("Unknown checkout", "<p>No such session.</p>"))
      if (req.method === "POST" && checkout[2] !== undefined) {
        if (session.status === "open") await startSubscription(session)
        return redirect(session.success_url)
      }
      const plan = session.price === prices.yearly ? "yearly" : "monthly"
      return html(
        200,
        page(
          "Fake Stripe Checkout",
          `<p>Subscribe to the ${plan} plan.</p>` +
            `<form method="post" action="/checkout/${session.id}/complete">` +
            `<button type="submit">Pay and subscribe</button></form>` +
            `<p><a href="${session.cancel_url}">Back</a></p>`
        )
      )
    }
    const portal = /^\/portal\/([^/]+)(\/cancel)?$/.exec(path)
    if (portal !== null) {
      const session = portals.get(portal[1]!)
      if (session === undefined) return html(404, page("Unknown portal session", "<p>No such session.</p>"))
      const live = [...subscriptions.values()].find((s) =>
        s.customer === session.customer && s.status !== "canceled" && s.status !== "incomplete_expired"
      )
      if (req.method === "POST" && portal[2] !== undefined) {
        const url = new URL(req.url ?? "/", fake.url)
        if (live !== undefined) {
          if (url.searchParams.get("now") === "1") await cancelNow(live.id)
          else await update(live.id, { cancel_at_period_end: true })
        }
        return redirect(session.return_url)
      }
      return html(
        200,
        page(
          "Fake Stripe customer portal",
          live === undefined
            ? `<p>No subscription.</p>`
            : `<p>Subscription ${live.status}.</p>` +
              `<form method="post" action="/portal/${session.id}/cancel">` +
              `<button type="submit">Cancel at period end</button></form>` +
              `<form method="post" action="/portal/${session.id}/cancel?now=1">` +
              `<button type="submit">Cancel now</button></form>`
        ) + `<p><a href="${session.return_url}">Return</a></p>`
      )
    }
    return html(404, page("Not found", ""))
  }

  const server = Http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", "http://127.0.0.1")
      const body = await readBody(req)
      const form = Object.fromEntries(new URLSearchParams(body))
      if (url.pathname.startsWith("/v1/")) {
        calls.push({ method: req.method ?? "GET", path: url.pathname, form })
        return await api(req, res, url.pathname, form)
      }
      return await pages(req, res, url.pathname)
    } catch (e) {
      send(res, 500, { error: { type: "api_error", message: String(e) } })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port

  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    secretKey,
    webhookSecret,
    prices,
    customers,
    sessions,
    subscriptions,
    calls,
    events,
    now: () => Date.now(),
    webhookUrl: null,
    deliver: async (body: string, signature: string) => {
      if (fake.webhookUrl === null) throw new Error("FakeStripeBilling: no webhookUrl to deliver to")
      const response = await fetch(fake.webhookUrl, {
        method: "POST",
        headers: { "content-type": "application/json", "stripe-signature": signature },
        body
      })
      await response.arrayBuffer()
      return response.status
    },
    sign,
    send: sendEvent,
    redeliver: (eventId: string) => {
      const event = events.find((e) => e.id === eventId)
      if (event === undefined) throw new Error(`no event ${eventId}`)
      return deliverEvent(event)
    },
    completeCheckout: async (sessionId: string) => {
      const session = sessions.get(sessionId)
      if (session === undefined) throw new Error(`no session ${sessionId}`)
      return session.status === "open" ? startSubscription(session) : subscriptions.get(session.subscription)!
    },
    update,
    cancelNow,
    stop: () => closeNow(server)
  })
}
