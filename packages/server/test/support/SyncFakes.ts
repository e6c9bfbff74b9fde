/**
 * A scriptable connector for the sync-queue tests: it writes a small, hand-checkable traffic dataset
 * through TrafficRepo (day D of the month → visitors 10·D, pageviews 20·D, sessions 12·D, bounces D,
 * durationSeconds 100·D) for the days after its cursor up to yesterday, and can be told to fail or hang.
 */
import { Deferred, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import type { Connector } from "../../src/integrations/Connector.ts"
import { CredentialsCipher } from "../../src/integrations/Crypto.ts"
import { ProviderError, ProviderHttp } from "../../src/integrations/ProviderHttp.ts"
import { addDays, eachDay, todayIn } from "../../src/metrics/Dates.ts"
import type { TrafficDay } from "../../src/store/Series.ts"
import { TrafficRepo } from "../../src/traffic/TrafficRepo.ts"

export const TEST_KEY = new Uint8Array(32).map((_, i) => i + 1)
export const OTHER_KEY = new Uint8Array(32).map((_, i) => 200 - i)
export const SECRET = "pk_live_TOPSECRET_4242"

export const runnerLayer = (key: Uint8Array = TEST_KEY) =>
  Layer.mergeAll(CredentialsCipher.layer(key), ProviderHttp.layer({ maxAttempts: 1, timeoutMs: 2_000 }))

/** The fixed rows of a day (see the header). */
export const fakeDay = (day: string): TrafficDay => {
  const d = Number(day.slice(8, 10))
  return { day, visitors: 10 * d, pageviews: 20 * d, sessions: 12 * d, bounces: d, durationSeconds: 100 * d }
}

export type Behaviour =
  | { readonly kind: "ok" }
  | { readonly kind: "fail"; readonly error: ProviderError["kind"]; readonly message: string }
  /** Writes nothing until released; `started` resolves when it is inside the sync. */
  | { readonly kind: "hang"; readonly started: Deferred.Deferred<void>; readonly release: Deferred.Deferred<void> }

export interface FakeConnector {
  readonly connector: Connector<TrafficRepo>
  behaviour: Behaviour
  /** Every sync invocation: the state and mode it was given. */
  readonly calls: Array<
    { readonly projectId: string; readonly state: unknown; readonly mode: string; readonly apiKey: string | undefined }
  >
  /** How many syncs are inside `sync` right now, per project, and the most ever at once. */
  inFlight: Map<string, number>
  maxInFlight: number
}

export const makeFakeConnector = (options: { readonly slowMs?: number } = {}): FakeConnector => {
  const fake: FakeConnector = {
    behaviour: { kind: "ok" },
    calls: [],
    inFlight: new Map(),
    maxInFlight: 0,
    connector: undefined as any
  }
  const connector: Connector<TrafficRepo> = {
    provider: "plausible",
    kind: "analytics",
    defaultBaseUrl: "http://127.0.0.1:9",
    baseUrlEnv: null,
    credentialFields: ["apiKey"],
    validate: () => Effect.void,
    sync: (ctx) =>
      Effect.gen(function*() {
        fake.calls.push({ projectId: ctx.projectId, state: ctx.state, mode: ctx.mode, apiKey: ctx.credentials.apiKey })
        const n = (fake.inFlight.get(ctx.projectId) ?? 0) + 1
        fake.inFlight.set(ctx.projectId, n)
        fake.maxInFlight = Math.max(fake.maxInFlight, n)
        return yield* Effect.gen(function*() {
          if (ctx.credentials.apiKey !== SECRET) {
            return yield* Effect.fail(
              new ProviderError({ kind: "unauthorized", status: 401, message: "http://fake/api answered 401" })
            )
          }
          const b = fake.behaviour
          if (b.kind === "fail") {
            return yield* Effect.fail(new ProviderError({ kind: b.error, status: null, message: b.message }))
          }
          if (b.kind === "hang") {
            yield* Deferred.succeed(b.started, undefined)
            yield* Deferred.await(b.release)
          }
          // Real time even under a TestClock: the slowness is there to make two workers' connections contend.
          if (options.slowMs) yield* TestClock.withLive(Effect.sleep(options.slowMs))
          const today = todayIn(ctx.timezone, ctx.now)
          const last = (ctx.state as { lastDay?: string } | null)?.lastDay
          const from = last === undefined ? addDays(today, -6) : addDays(last, 1)
          const to = addDays(today, -1)
          const days = from <= to ? eachDay(from, to).map(fakeDay) : []
          yield* (yield* TrafficRepo).write(ctx.projectId, { days })
          return { counts: { days: days.length }, state: { lastDay: days.length > 0 ? to : last ?? null } }
        }).pipe(Effect.ensuring(Effect.sync(() =>
          void fake.inFlight.set(ctx.projectId, (fake.inFlight.get(ctx.projectId) ?? 1) - 1)
        )))
      })
  }
  ;(fake as { connector: Connector<TrafficRepo> }).connector = connector
  return fake
}

/** The traffic days stored for a project in [from, to]. */
export const storedDays = (projectId: string, from: string, to: string) =>
  Effect.map(
    Effect.flatMap(Effect.service(TrafficRepo), (t) =>
      t.read(projectId, {
        hoursFrom: `${from}T00:00:00Z`,
        hoursTo: `${to}T00:00:00Z`,
        from,
        to,
        topFrom: from,
        topTo: to,
        top: 1
      })),
    (w) => w.days
  )
