/**
 * One rule for every page (docs/first-five-minutes.md, "No data is not zero"): a report whose data comes from a
 * provider that is not connected, or whose first sync has not finished, says so — with the way to connect it —
 * instead of showing its figures as zeros. Where the data stands is the server's own word: the briefing's
 * `sources` (metrics/Sources.ts), read with the same request the website's home makes. Until it has answered, or
 * when it cannot, the page shows what it has.
 */
import { useAtomValue } from "@effect/atom-react"
import { PROVIDER_NAMES } from "@sitehealth/domain/Integrations"
import type { DataSources } from "@sitehealth/domain/Projects"
import { AsyncResult } from "effect/reactivity"
import { type ReactNode, useMemo } from "react"
import { Link, websiteHref } from "../../navigation.tsx"
import { briefingAtom } from "../../reportsClient.ts"
import type { WebsitePageProps } from "./shared.tsx"

const PROVIDER: Record<keyof DataSources, string> = {
  analytics: PROVIDER_NAMES.plausible,
  payments: PROVIDER_NAMES.stripe,
  search: PROVIDER_NAMES["google-search-console"]
}

export const SourceGate = ({ website, kind, what, children }: {
  readonly website: WebsitePageProps["website"]
  readonly kind: keyof DataSources
  /** What the provider brings, as a phrase: "traffic", "revenue, MRR and churn". */
  readonly what: string
  readonly children: ReactNode
}) => {
  const result = useAtomValue(useMemo(() => briefingAtom(website.id), [website.id]))
  const state = AsyncResult.isSuccess(result) ? result.value.sources[kind] : "connected"
  if (state === "connected") return <>{children}</>
  const name = PROVIDER[kind]
  return (
    <section className="panel" data-testid="source-state" data-state={state}>
      {state === "syncing"
        ? (
          <p role="status">
            <strong>{name} is importing its first data.</strong> The {what} appear here as soon as it lands; the{" "}
            <Link href={websiteHref(website.id, "")}>briefing</Link> follows it as it happens.
          </p>
        )
        : (
          <p>
            <strong>{name} is not connected</strong>, so there is no {what} to show yet (not zero: no data).{" "}
            <Link href={websiteHref(website.id, "integrations")}>Connect {name}</Link>{" "}
            and the figures follow within a minute.
          </p>
        )}
    </section>
  )
}
