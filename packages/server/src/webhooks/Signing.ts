/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the secret is `whsec_` + base64 of 32 random
 * bytes; the signature of a message is `v1,` + base64(HMAC-SHA256(secret bytes, `${id}.${timestamp}.${body}`)),
 * and `webhook-signature` lists one per valid secret (two during a rotation's overlap), space-separated.
 */
import * as Crypto from "node:crypto"
import { randomBase62 } from "../store/Ids.ts"

export const SECRET_PREFIX = "whsec_"

export const newWebhookSecret = (): string => `${SECRET_PREFIX}${Crypto.randomBytes(32).toString("base64")}`

/** A message id, `msg_…`: the `webhook-id` header, the same on every attempt of the event. */
export const newMessageId = (): string => `msg_${randomBase62(24)}`

const keyOf = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64")

export const signature = (secret: string, id: string, timestampSeconds: number, body: string): string =>
  `v1,${Crypto.createHmac("sha256", keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`

/** The three Standard Webhooks headers of one attempt. */
export const signedHeaders = (
  secrets: ReadonlyArray<string>,
  id: string,
  timestampSeconds: number,
  body: string
): Record<string, string> => ({
  "webhook-id": id,
  "webhook-timestamp": String(timestampSeconds),
  "webhook-signature": secrets.map((secret) => signature(secret, id, timestampSeconds, body)).join(" ")
})
