/**
 * Provider id → connector. The runner and the admin CLI find connectors here; tests may pass their own
 * lookup to the runner instead.
 */
import type { PaymentsRepo } from "../payments/PaymentsRepo.ts"
import type { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import type { SearchRepo } from "../search/SearchRepo.ts"
import type { TrafficRepo } from "../traffic/TrafficRepo.ts"
import type { Connector, ProviderId } from "./Connector.ts"
import { gscConnector } from "./gsc/GscConnector.ts"
import { plausibleConnector } from "./plausible/PlausibleConnector.ts"
import { stripeConnector } from "./stripe/StripeConnector.ts"

/** The repositories connectors write through (and ProjectsRepo); the runner's caller provides them. */
export type ConnectorServices = PaymentsRepo | TrafficRepo | SearchRepo | ProjectsRepo

export type AnyConnector = Connector<ConnectorServices>

export const CONNECTORS: ReadonlyMap<ProviderId, AnyConnector> = new Map<ProviderId, AnyConnector>([
  ["stripe", stripeConnector],
  ["plausible", plausibleConnector],
  ["google-search-console", gscConnector]
])

export type ConnectorLookup = (provider: string) => AnyConnector | undefined

export const connectorFor: ConnectorLookup = (provider) => CONNECTORS.get(provider as ProviderId)
