/**
 * Where a webhook may be sent (SSRF): https only, and never to a private, loopback, link-local, shared, multicast
 * or reserved address — checked on the URL's host when it is an address, on every DNS answer at connection time
 * (the socket connects to the address that was checked, so a second answer cannot slip in), and redirects are not
 * followed. SITEHEALTH_WEBHOOKS_ALLOW_PRIVATE=1 lifts all of it, for development and tests.
 */
import * as Dns from "node:dns"
import * as Net from "node:net"

const blocked = new Net.BlockList()
for (
  const [net, prefix] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.0.2.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["198.51.100.0", 24],
    ["203.0.113.0", 24],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4]
  ] as const
) blocked.addSubnet(net, prefix, "ipv4")
for (
  const [net, prefix] of [
    ["::", 128],
    ["::1", 128],
    ["64:ff9b::", 96],
    ["100::", 64],
    ["2001:db8::", 32],
    ["fc00::", 7],
    ["fe80::", 10],
    ["fec0::", 10],
    ["ff00::", 8]
  ] as const
) blocked.addSubnet(net, prefix, "ipv6")

/** Whether an IP address is one a webhook must never reach. An IPv4-mapped IPv6 address is checked as IPv4. */
export const isBlockedAddress = (address: string): boolean => {
  const bare = address.replace(/^\[|\]$/g, "")
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)
  if (mapped) return blocked.check(mapped[1]!, "ipv4")
  const family = Net.isIP(bare)
  if (family === 0) return true
  return blocked.check(bare, family === 4 ? "ipv4" : "ipv6")
}

/** Why a webhook URL is refused, or null when it may be used. */
export const urlProblem = (raw: string, allowPrivate: boolean): string | null => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return "must be an absolute URL (https://…)"
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) return "must be an https:// URL"
  if (url.username !== "" || url.password !== "") return "must not carry a user name or password"
  if (allowPrivate) return null
  const host = url.hostname.replace(/^\[|\]$/g, "")
  if (Net.isIP(host) !== 0) {
    return isBlockedAddress(host) ? "must not be a private, loopback or link-local address" : null
  }
  if (host === "localhost" || host.endsWith(".localhost") || !host.includes(".")) {
    return "must be a public host name"
  }
  return null
}

export interface Resolved {
  readonly address: string
  readonly family: number
}

/** Resolves a host name; tests pass their own. */
export type Resolver = (host: string) => Promise<ReadonlyArray<Resolved>>

export const systemResolver: Resolver = (host) => Dns.promises.lookup(host, { all: true, verbatim: true })

export class RefusedTarget extends Error {
  readonly _tag = "RefusedTarget"
}

/**
 * A `lookup` for `http.request`: resolves with `resolve`, refuses when any answer is a blocked address (unless
 * private targets are allowed), and hands the socket the address it checked.
 */
export const guardedLookup =
  (resolve: Resolver, allowPrivate: boolean): Net.LookupFunction => (hostname, options, callback) => {
    resolve(hostname).then(
      (answers) => {
        const bad = answers.find((answer) => isBlockedAddress(answer.address))
        if (answers.length === 0) return callback(new Error(`${hostname} has no address`), "", 0)
        if (bad !== undefined && !allowPrivate) {
          return callback(
            new RefusedTarget(`${hostname} resolves to ${bad.address}: a private, loopback or link-local address`),
            "",
            0
          )
        }
        const first = answers[0]!
        if ((options as { all?: boolean }).all === true) {
          return (callback as unknown as (e: null, all: ReadonlyArray<Resolved>) => void)(null, answers)
        }
        callback(null, first.address, first.family)
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, "", 0)
    )
  }
