/** The state behind the in-memory repositories (tests only): plain maps, one instance per layer build. */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import type {
  AccountRecord,
  AnnotationRecord,
  ExpenseRecord,
  IntegrationRecord,
  ProjectRecord,
  StoredAnswer,
  SyncRunRecord,
  TokenRecord
} from "./Records.ts"
import type { RevenueDay, SearchDay, TrafficDay } from "./Series.ts"

export interface MemoryTables {
  readonly accounts: Map<string, AccountRecord>
  readonly projects: Map<string, ProjectRecord>
  readonly tokens: Map<string, TokenRecord>
  readonly expenses: Map<string, ExpenseRecord>
  readonly annotations: Map<string, AnnotationRecord>
  readonly integrations: Map<string, IntegrationRecord> // key project/provider
  readonly syncRequests: Map<string, SyncRunRecord> // sync runs by id
  readonly traffic: Map<string, Map<string, TrafficDay>> // project → day → row
  readonly revenue: Map<string, Map<string, RevenueDay>>
  readonly search: Map<string, Map<string, SearchDay>>
  readonly answers: Map<string, StoredAnswer> // project|key (answers/AnswersRepo.ts)
}

export class MemoryDb extends Context.Service<MemoryDb, MemoryTables>()("sitehealth/MemoryDb") {
  static readonly layer = Layer.sync(MemoryDb, () => ({
    accounts: new Map(),
    projects: new Map(),
    tokens: new Map(),
    expenses: new Map(),
    annotations: new Map(),
    integrations: new Map(),
    syncRequests: new Map(),
    traffic: new Map(),
    revenue: new Map(),
    search: new Map(),
    answers: new Map()
  }))
}
