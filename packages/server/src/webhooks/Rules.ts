/**
 * A destination's rules (docs/alerts.md, Rules) over an event's facts (Outbox.eventFacts): its kinds, a minimum
 * money at stake, a minimum severity. A kind without an amount (or a severity) passes that rule. WebhooksRepo.sql
 * applies the same rules in its fan-out query; the memory twin and the recaps use this.
 */
import type { EventKind } from "@sitehealth/domain/Events"
import { SEVERITIES, type Severity } from "@sitehealth/domain/Projects"
import type { WebhookRecord } from "./Records.ts"

export interface EventFacts {
  readonly type: EventKind
  readonly money: number | null
  readonly severity: Severity | null
}

export const passesRules = (
  w: Pick<WebhookRecord, "events" | "minMoneyAtStake" | "minSeverity">,
  event: EventFacts
): boolean =>
  w.events.includes(event.type) &&
  (w.minMoneyAtStake === null || event.money === null || event.money >= w.minMoneyAtStake) &&
  (w.minSeverity === null || event.severity === null ||
    SEVERITIES.indexOf(event.severity) >= SEVERITIES.indexOf(w.minSeverity))
