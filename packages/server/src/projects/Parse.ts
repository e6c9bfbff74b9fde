/**
 * What a website's time zone, currency and domain may be, in their canonical spelling: shared by the admin CLI
 * (admin/Commands.ts, whose errors name its flags) and the dashboard (dashboard/Http.ts, whose errors name the
 * body's fields). Pure: null (or the problem) when the text is not one.
 */

let timeZones: ReadonlyMap<string, string> | null = null
const supportedTimeZones = (): ReadonlyMap<string, string> => {
  if (timeZones === null) {
    const all = [...Intl.supportedValuesOf("timeZone"), "UTC"]
    timeZones = new Map(all.map((z) => [z.toLowerCase(), z]))
  }
  return timeZones
}

/** An IANA time zone Node knows (or UTC), in its canonical spelling; null otherwise. */
export const canonicalTimezone = (raw: string): string | null =>
  supportedTimeZones().get(raw.trim().toLowerCase()) ?? null

/** An ISO 4217 currency code Node knows, upper case; null otherwise. */
export const canonicalCurrency = (raw: string): string | null => {
  const code = raw.trim().toUpperCase()
  return Intl.supportedValuesOf("currency").includes(code) ? code : null
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** A bare host name (`shop.example.com`), lower case; or why not: a scheme, path or port, or not a host name. */
export const canonicalDomain = (
  raw: string
): { readonly domain: string } | { readonly problem: "not_bare" | "not_host" } => {
  const domain = raw.trim().toLowerCase().replace(/\.$/, "")
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(domain) || /[/:?#@\s]/.test(domain)) return { problem: "not_bare" }
  if (domain.length === 0 || domain.length > 253 || !domain.split(".").every((label) => LABEL.test(label))) {
    return { problem: "not_host" }
  }
  return { domain }
}
