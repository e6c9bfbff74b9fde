/**
 * Stopping the morning briefing email without logging in: the link in each email (GET: a page with one button, so
 * a mail scanner following links unsubscribes nobody) and the one-click POST of RFC 8058 that mail clients send
 * from the List-Unsubscribe header. The link carries the account and an HMAC of it (SITEHEALTH_SIGNING_KEY):
 * nothing is stored, and it cannot be made for another account.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Crypto from "node:crypto"
import { BriefingMailRepo } from "../alerts/BriefingMailRepo.ts"
import { Signing, type SigningShape } from "./Links.ts"

export const UNSUBSCRIBE_PATH = "/app/api/alerts/unsubscribe"

/** The account's unsubscribe token: an HMAC of its id, so nothing is stored. */
export const unsubscribeToken = (signing: SigningShape, accountId: string) =>
  signing.mac(`unsubscribe:${accountId}`).toString("base64url")

const isUnsubscribeToken = (signing: SigningShape, accountId: string, token: string) => {
  const expected = Buffer.from(unsubscribeToken(signing, accountId))
  const given = Buffer.from(token)
  return given.length === expected.length && Crypto.timingSafeEqual(given, expected)
}

const page = (status: number, title: string, body: string) =>
  HttpServerResponse.text(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>` +
      `<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto">` +
      `<h1>${title}</h1>${body}</body></html>`,
    { status, contentType: "text/html; charset=utf-8" }
  )

const refused = page(
  400,
  "This link does not work",
  "<p>It is incomplete or was changed. Use the link of a recent email.</p>"
)

export const UnsubscribeRoutes = Layer.unwrap(
  Effect.map(
    Effect.context<BriefingMailRepo | Signing>(),
    (context) => {
      const params = (request: HttpServerRequest.HttpServerRequest) => {
        const url = new URL(request.url, "http://localhost")
        return { account: url.searchParams.get("account") ?? "", token: url.searchParams.get("token") ?? "" }
      }
      const valid = (account: string, token: string) =>
        Effect.map(
          Signing,
          (signing) => /^acc_[0-9A-Za-z]{1,64}$/.test(account) && isUnsubscribeToken(signing, account, token)
        )
      return Layer.mergeAll(
        HttpRouter.add(
          "GET",
          UNSUBSCRIBE_PATH,
          (request: HttpServerRequest.HttpServerRequest) =>
            Effect.gen(function*() {
              const { account, token } = params(request)
              if (!(yield* valid(account, token))) return refused
              const action = `${UNSUBSCRIBE_PATH}?account=${encodeURIComponent(account)}&amp;token=${
                encodeURIComponent(token)
              }`
              return page(
                200,
                "Stop the morning briefing email?",
                `<form method="post" action="${action}"><button type="submit">Stop these emails</button></form>` +
                  "<p>You can turn it on again in the dashboard, under Alerts.</p>"
              )
            }).pipe(Effect.provideContext(context))
        ),
        HttpRouter.add(
          "POST",
          UNSUBSCRIBE_PATH,
          (request: HttpServerRequest.HttpServerRequest) =>
            Effect.gen(function*() {
              const { account, token } = params(request)
              if (!(yield* valid(account, token))) return refused
              yield* (yield* BriefingMailRepo).setEmail(account, false, new Date(yield* Clock.currentTimeMillis))
              return page(200, "Unsubscribed", "<p>No more morning briefing emails will be sent to you.</p>")
            }).pipe(Effect.provideContext(context))
        )
      )
    }
  )
)
