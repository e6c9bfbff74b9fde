/**
 * Bad input, on every endpoint of the contract (found by reflecting the HttpApi: a new endpoint is fuzzed
 * without touching this file). Valid requests are generated from the endpoint's own Effect schemas and then
 * mutated: wrong types, missing and extra fields (mass assignment), huge strings, deep nesting, odd unicode,
 * odd numbers, oversized and malformed bodies, wrong content types, bad query values and forged cursors,
 * hostile path segments, foreign ids, Idempotency-Keys (junk, reused, retried), odd headers and methods.
 *
 * Every response must be an envelope with a status below 500, leak nothing (stack, SQL, paths, internal
 * names) and quote input only in part; the database must change only by the request's legitimate effect —
 * a refused request or a replay changes nothing, a created expense lands in the path's project with a
 * server-chosen id, whatever the body said.
 *
 * Budget: FUZZ_RUNS generated requests per endpoint (default 200) after a fixed sweep of every named hostile
 * input on every endpoint. Seed: FUZZ_SEED, else a fixed one (printed) so `npm test` is reproducible.
 * `npm run fuzz` runs 5000 per endpoint (FUZZ_RUNS overrides) from a random seed and prints the counts.
 * FUZZ_DEBUG=1 prints each request before it is sent.
 */
import { afterAll, describe, expect, layer } from "@effect/vitest"
import { SiteHealthApi } from "@sitehealth/domain/Api"
import { operationByName } from "@sitehealth/domain/Api"
import type { ProjectId } from "@sitehealth/domain/Common"
import { clipInput } from "@sitehealth/domain/Errors"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { AnnotationsRepo } from "../../src/annotations/AnnotationsRepo.ts"
import { ExpensesRepo } from "../../src/expenses/ExpensesRepo.ts"
import { IntegrationsRepo } from "../../src/integrations/IntegrationsRepo.ts"
import { SyncQueue } from "../../src/integrations/SyncQueue.ts"
import { ProjectsRepo } from "../../src/projects/ProjectsRepo.ts"
import { TokensRepo } from "../../src/tokens/TokensRepo.ts"
import { WebhooksRepo } from "../../src/webhooks/WebhooksRepo.ts"
import {
  type Draft,
  draftFor,
  endpointsOf,
  type EndpointSpec,
  fieldNames,
  FOREIGN_METHODS,
  fromSchema,
  fuzzBudget,
  HOSTILE_BODIES,
  HOSTILE_CONTENT_TYPES,
  HOSTILE_QUERIES,
  HOSTILE_SEGMENTS,
  HOSTILE_VALUES,
  IDEMPOTENCY_KEYS,
  MASS_ASSIGNMENT,
  materialize,
  ODD_HEADERS,
  type Segment,
  type Sent,
  violation,
  type World
} from "../support/Fuzz.ts"
import { h, store, TestApp } from "../support/TestApp.ts"

/** FUZZ_RUNS and FUZZ_SEED (support/Fuzz.ts); the fixed seed keeps `npm test` reproducible. */
const { runs: RUNS, seed: SEED } = fuzzBudget(200, 20_261_120)
const MAX_BODY_BYTES = 64 * 1024
/** Generous: a large FUZZ_RUNS against Postgres takes minutes per endpoint. */
const TIMEOUT_MS = 60_000 + RUNS * 100

const ENDPOINTS = endpointsOf(SiteHealthApi)

const stats = {
  sent: 0,
  serverErrors: 0,
  leaks: 0,
  /** Bodies carrying a field a client must not set (accountId, id, permissions, status, createdAt…). */
  massAssignment: { sent: 0, refused: 0, ignored: 0 },
  replays: 0,
  /** The longest error message of each error type, and where: input echoed back without bound shows here. */
  longestMessage: new Map<string, { length: number; where: string }>(),
  statuses: new Map<number, number>(),
  /** Per endpoint: requests sent and how many succeeded (so a generator that never gets past validation shows). */
  endpoints: new Map<string, { sent: number; ok: number }>(),
  started: Date.now()
}

let secret: string
let ownAccount: string
let foreignAccount: string
let world: World
/** Live expenses per own project, kept current as the fuzz creates and deletes them. */
const expenses = new Map<string, Array<string>>()

// ---------------------------------------------------------------------------------------------------------
// The database, as far as a request through the API could change it

type Print = Record<string, ReadonlyArray<string>>

const fingerprint = (): Effect.Effect<Print, never, TestApp> =>
  h.run(Effect.gen(function*() {
    const projectsRepo = yield* ProjectsRepo
    const expensesRepo = yield* ExpensesRepo
    const tokensRepo = yield* TokensRepo
    const queue = yield* SyncQueue
    const webhooksRepo = yield* WebhooksRepo
    const annotationsRepo = yield* AnnotationsRepo
    const all = { limit: 100_000, after: null }
    const reads: Record<string, Effect.Effect<ReadonlyArray<string>>> = {}
    for (const account of [ownAccount, foreignAccount]) {
      reads[`projects:${account}`] = Effect.map(projectsRepo.list(account, null, all), (p) =>
        p.items.map((x) => x.id).sort())
      reads[`tokens:${account}`] = Effect.map(tokensRepo.list(account, all), (p) =>
        p.items
          .map((t) =>
            `${t.id}|${t.revokedAt?.toISOString() ?? "live"}|${t.permissions.join(",")}|${t.projects?.join(",") ?? "*"}`
          )
          .sort())
    }
    for (const project of [...world.projects, world.foreignProject]) {
      reads[`expenses:${project}`] = Effect.map(expensesRepo.list(project, all), (p) =>
        p.items.map((e) =>
          `${e.id}|${e.projectId}`
        ).sort())
      reads[`webhooks:${project}`] = Effect.map(webhooksRepo.list(project), (ws) =>
        ws.map((w) =>
          `${w.id}|${w.enabled}|${w.url}|${w.events.join(",")}|${w.description}`
        ).sort())
      reads[`annotations:${project}`] = Effect.map(
        annotationsRepo.list(project, { from: null, to: null, limit: 100_000 }),
        (as) =>
          as.map((a) => `${a.id}|${a.date}|${a.category}|${a.note}`).sort()
      )
      reads[`syncs:${project}`] = Effect.map(queue.latestRuns(project), (runs) =>
        runs.map((r) =>
          `${r.id}|${r.projectId}|${r.status}`
        ).sort())
    }
    // Concurrently: against Postgres these are ten round trips per checked request.
    return yield* Effect.all(reads, { concurrency: "unbounded" })
  }))

const changes = (before: Print, after: Print) =>
  Object.keys(after).filter((k) => before[k].join("\n") !== after[k].join("\n")).map((key) => ({
    key,
    added: after[key].filter((x) => !before[key].includes(x)),
    removed: before[key].filter((x) => !after[key].includes(x))
  }))

type Change = ReturnType<typeof changes>[number]

/** For the operations checked per run rather than per request: reads, and dashboard-only ones (always 403). */
const expectUnchangedSince = (before: Print) =>
  Effect.gen(function*() {
    return expect(changes(before, yield* fingerprint()), "a read (or a refused dashboard-only request) changes nothing")
      .toEqual([])
  })

/**
 * What a successful request of each writing operation may change — and nothing else. An operation that
 * writes but has no rule here fails the suite: deny by default.
 */
const legitimateEffect: Record<string, (sent: Sent, data: any, diff: ReadonlyArray<Change>, before: Print) => void> = {
  createExpense: (sent, data, diff) => {
    const project = sent.params.id
    expect(world.projects, "created in a project the caller owns").toContain(project)
    const expense = data.expense
    expect(diff).toEqual([{ key: `expenses:${project}`, added: [`${expense.id}|${project}`], removed: [] }])
    const body = JSON.parse(sent.bodyText!)
    // Whatever the body claimed, the server chose the id, the project, the time and the state.
    expect(expense.projectId).toBe(project)
    expect(expense.id).not.toBe(body.id)
    expect(expense.id).toMatch(/^exp_/)
    expect(expense.createdAt).toBe(world.nowIso)
    expect(expense.deletedAt).toBeNull()
    // …and stored what the body said, nothing else.
    expect(expense).toEqual({
      id: expense.id,
      projectId: project,
      amount: body.amount,
      currency: body.currency ?? "USD",
      category: body.category,
      description: body.description,
      vendor: body.vendor ?? null,
      incurredOn: body.incurredOn,
      recurrence: body.recurrence,
      createdAt: world.nowIso,
      deletedAt: null
    })
    expenses.get(project)!.push(expense.id)
  },
  deleteExpense: (sent, data, diff) => {
    const project = sent.params.id
    expect(data.expense.id).toBe(sent.params.expenseId)
    expect(diff).toEqual([{ key: `expenses:${project}`, added: [], removed: [`${sent.params.expenseId}|${project}`] }])
  },
  createToken: (_sent, data, diff) => {
    if (data.preview === true) return void expect(diff).toEqual([])
    expect(data.token.accountId).toBe(ownAccount)
    expect(diff.map((d) => d.key)).toEqual([`tokens:${ownAccount}`])
    expect(diff[0].removed).toEqual([])
    expect(diff[0].added.map((t) => t.split("|")[0])).toEqual([data.token.id])
  },
  revokeToken: (sent, data, diff, before) => {
    if (data.preview === true) return void expect(diff).toEqual([])
    expect(sent.params.id).not.toBe(world.selfToken)
    expect(data.token.id).toBe(sent.params.id)
    expect(data.token.status).toBe("revoked")
    if (diff.length === 0) {
      // Revoking a revoked token again changes nothing (its first revocation stands).
      const was = before[`tokens:${ownAccount}`].find((t) => t.startsWith(`${sent.params.id}|`))
      return void expect(was?.split("|")[1], "answered revoked without revoking").not.toBe("live")
    }
    expect(diff.map((d) => d.key)).toEqual([`tokens:${ownAccount}`])
    expect(diff[0].removed.map((t) => t.split("|")[0])).toEqual([sent.params.id])
    expect(diff[0].added.map((t) => t.split("|")[0])).toEqual([sent.params.id])
  },
  syncIntegration: (sent, data, diff) => {
    expect(data.sync.provider).toBe(sent.params.provider)
    for (const d of diff) expect(d.key).toBe(`syncs:${sent.params.id}`)
  },
  createWebhook: (sent, data, diff) => {
    if (data.preview === true) return void expect(diff).toEqual([])
    const project = sent.params.id
    expect(world.projects, "created in a project the caller owns").toContain(project)
    expect(data.webhook.projectId).toBe(project)
    expect(data.secret).toMatch(/^whsec_/)
    expect(diff.map((d) => [d.key, d.removed, d.added.map((w) => w.split("|")[0])])).toEqual([
      [`webhooks:${project}`, [], [data.webhook.id]]
    ])
  },
  updateWebhook: (sent, data, diff) => {
    expect(data.webhook.id).toBe(sent.params.webhookId)
    for (const d of diff) expect(d.key).toBe(`webhooks:${sent.params.id}`)
  },
  deleteWebhook: (sent, data, diff) => {
    expect(data.webhook.id).toBe(sent.params.webhookId)
    expect(diff.map((d) => [d.key, d.added, d.removed.map((w) => w.split("|")[0])])).toEqual([
      [`webhooks:${sent.params.id}`, [], [sent.params.webhookId]]
    ])
  },
  createAnnotation: (sent, data, diff) => {
    const project = sent.params.id
    expect(world.projects, "created in a project the caller owns").toContain(project)
    const body = JSON.parse(sent.bodyText!)
    const a = data.annotation
    // The server chose the id, the project and the times; it stored what the body said, nothing else.
    expect(a).toEqual({
      id: expect.stringMatching(/^ann_/),
      projectId: project,
      date: body.date,
      note: body.note,
      category: body.category ?? "other",
      createdAt: world.nowIso,
      updatedAt: world.nowIso
    })
    expect(diff).toEqual([{
      key: `annotations:${project}`,
      added: [`${a.id}|${a.date}|${a.category}|${a.note}`],
      removed: []
    }])
  },
  updateAnnotation: (sent, data, diff) => {
    expect(data.annotation.id).toBe(sent.params.annotationId)
    for (const d of diff) expect(d.key).toBe(`annotations:${sent.params.id}`)
  },
  deleteAnnotation: (sent, data, diff) => {
    expect(data.annotation.id).toBe(sent.params.annotationId)
    expect(diff.map((d) => [d.key, d.added, d.removed.map((x) => x.split("|")[0])])).toEqual([
      [`annotations:${sent.params.id}`, [], [sent.params.annotationId]]
    ])
  },
  testWebhook: (_sent, _data, diff) => expect(diff).toEqual([]),
  redeliverWebhook: (_sent, _data, diff) => expect(diff).toEqual([])
}

// ---------------------------------------------------------------------------------------------------------

const mutates = (spec: EndpointSpec) => {
  const kind = operationByName(spec.name)?.kind
  return kind === "write" || kind === "destructive"
}

/** Sends one request and checks everything a response and the database must satisfy. */
const exercise = (spec: EndpointSpec, draft: Draft) =>
  Effect.gen(function*() {
    const sent = materialize(spec, draft, world)
    if (process.env.FUZZ_DEBUG) console.error("[fuzz] >", sent.description.slice(0, 300))
    const first = yield* sendAndCheck(spec, sent)
    if (!draft.repeat) return
    // The same request again (a client retrying). When it is answered as a replay it is the first answer
    // again — minus a minted secret, which exists only in the first — and has no effect (checked inside).
    const again = yield* sendAndCheck(spec, sent)
    if (again.headers.get("idempotent-replayed") !== "true") return
    const context = [
      `${spec.name}: replay of ${sent.description}`,
      `→ ${first.status} ${first.text.slice(0, 300)}`,
      `→ ${again.status} ${again.text.slice(0, 300)}`
    ].join("\n")
    expect(again.status, context).toBe(first.status)
    const secretMinted = first.json?.data?.secret
    if (typeof secretMinted === "string") {
      expect(again.text.includes(secretMinted), `a replayed mint must not carry the secret\n${context}`).toBe(false)
      expect(again.json.data.token, context).toEqual(first.json.data.token)
    } else {
      expect(again.json, context).toEqual(first.json)
    }
  })

const sendAndCheck = (spec: EndpointSpec, sent: Sent) =>
  Effect.gen(function*() {
    const check = mutates(spec)
    const before = check ? (yield* fingerprint()) : undefined
    const r = yield* h.raw(sent.method, sent.path, {
      token: secret,
      headers: sent.headers,
      ...(sent.bodyText === undefined ? {} : { rawBody: sent.bodyText })
    })
    const replayed = r.headers.get("idempotent-replayed") === "true"
    stats.sent++
    stats.statuses.set(r.status, (stats.statuses.get(r.status) ?? 0) + 1)
    if (r.status >= 500) stats.serverErrors++
    if (replayed) stats.replays++
    const perEndpoint = stats.endpoints.get(spec.name) ?? { sent: 0, ok: 0 }
    stats.endpoints.set(spec.name, { sent: perEndpoint.sent + 1, ok: perEndpoint.ok + (r.status < 300 ? 1 : 0) })
    const context = () => `${spec.name}: ${sent.description}\n→ ${r.status} ${r.text.slice(0, 600)}`
    const message = r.json?.error?.message
    const type = String(r.json?.error?.type)
    if (typeof message === "string" && message.length > (stats.longestMessage.get(type)?.length ?? 0)) {
      stats.longestMessage.set(type, { length: message.length, where: `${spec.name}: ${message.slice(0, 60)}` })
    }
    const problem = violation(r.status, r.text, r.json)
    if (problem?.startsWith("leak")) stats.leaks++
    if (problem !== null) throw new Error(`${problem}\n${context()}`)
    // The token is valid, unexpired, unrestricted and has every permission; the rate limit is out of reach.
    if ([401, 402, 429].includes(r.status)) throw new Error(`unexpected ${r.status}\n${context()}`)
    const oversized = sent.bodyText !== undefined && Buffer.byteLength(sent.bodyText) > MAX_BODY_BYTES
    if (oversized && "content-length" in sent.headers && r.status !== 413) {
      throw new Error(`an oversized body with Content-Length must be refused before reading: 413\n${context()}`)
    }
    if (oversized && spec.payload !== undefined && r.status < 300) {
      throw new Error(`an oversized body was accepted\n${context()}`)
    }
    const body = sent.bodyValue
    const smuggled = MASS_ASSIGNMENT.some(([key]) => !spec.payloadFields.has(key) && Object.hasOwn(Object(body), key))
    if (typeof body === "object" && body !== null && smuggled) {
      stats.massAssignment.sent++
      // Refused, or (checked below against the database) ignored.
      if (r.status < 300) stats.massAssignment.ignored++
      else stats.massAssignment.refused++
    }
    if (sent.method !== spec.method && r.status < 400) {
      throw new Error(`a method the API does not use answered ${r.status}\n${context()}`)
    }
    if (check) {
      const diff = changes(before!, yield* fingerprint())
      try {
        if (r.status >= 300) expect(diff, "a refused request changes nothing").toEqual([])
        else if (replayed) expect(diff, "a replay has no second effect").toEqual([])
        else {
          const rule = legitimateEffect[spec.name]
          if (rule === undefined) throw new Error(`no legitimate-effect rule for the writing operation ${spec.name}`)
          rule(sent, r.json.data, diff, before!)
        }
      } catch (e) {
        throw new Error(`${(e as Error).message}\ndiff: ${JSON.stringify(diff)}\n${context()}`)
      }
    }
    return r
  })

/** The file's app, and the world the fuzz aims at: two accounts with projects, expenses, tokens, an integration. */
const FuzzWorld = Layer.effectDiscard(Effect.gen(function*() {
  const own = yield* h.newAccount({ projects: 2 })
  const foreign = yield* h.newAccount({ projects: 1 })
  secret = own.secret
  ownAccount = own.account.id
  foreignAccount = foreign.account.id
  const addExpense = (token: string, project: string, n: number) =>
    Effect.gen(function*() {
      const r = yield* h.api.expenses.createExpense({
        params: { id: project },
        payload: {
          amount: 100 + n,
          category: "hosting",
          description: `Seed ${n}`,
          incurredOn: "2026-11-01",
          recurrence: "monthly"
        }
      }, { token })
      expect(r.status, r.text).toBe(201)
      return r.json.data.expense.id as string
    })
  for (const project of own.projects) {
    const ids: Array<string> = []
    for (let n = 0; n < 5; n++) ids.push(yield* addExpense(own.secret, project.id, n))
    expenses.set(project.id, ids)
  }
  const foreignExpense = yield* addExpense(foreign.secret, foreign.projects[0].id, 0)
  const victims: Array<string> = []
  for (let n = 0; n < 6; n++) victims.push((yield* h.mint(ownAccount)).token.id)
  // A connected integration, so sync requests can succeed (and be checked) rather than only 404.
  yield* h.run(Effect.gen(function*() {
    const repo = yield* IntegrationsRepo
    return yield* repo.connect({
      projectId: own.projects[0].id,
      provider: "plausible",
      credentials: null,
      baseUrl: null,
      syncIntervalMinutes: null,
      now: new Date(yield* h.now)
    })
  }))
  world = {
    projects: own.projects.map((p) => p.id),
    foreignProject: foreign.projects[0].id,
    expenses,
    foreignExpense,
    victims,
    selfToken: own.token.id,
    foreignToken: foreign.token.id,
    nowIso: new Date(yield* h.now).toISOString()
  }
  console.log(
    `[fuzz] store=${store} seed=${SEED} runs/endpoint=${RUNS} endpoints=${ENDPOINTS.length} (FUZZ_SEED=${SEED} to ` +
      `replay)`
  )
})).pipe(Layer.provideMerge(TestApp.layer({ rateLimit: 1_000_000, maxBodyBytes: MAX_BODY_BYTES })))

afterAll(() => {
  const histogram = [...stats.statuses.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}:${n}`).join(" ")
  const seconds = ((Date.now() - stats.started) / 1000).toFixed(1)
  const perEndpoint = [...stats.endpoints.entries()].map(([name, e]) => `${name}:${e.ok}/${e.sent}`).join(" ")
  console.log(
    `[fuzz] store=${store} seed=${SEED} requests=${stats.sent} 5xx=${stats.serverErrors} leaks=${stats.leaks} ` +
      `statuses={${histogram}} ` +
      `idempotent-replays=${stats.replays} in ${seconds}s\n[fuzz] 2xx/sent by endpoint: ${perEndpoint}\n` +
      `[fuzz] mass-assignment bodies: ${stats.massAssignment.sent} sent, ${stats.massAssignment.refused} refused, ` +
      `${stats.massAssignment.ignored} accepted with the fields ignored\n` +
      `[fuzz] longest error message by type: ${
        [...stats.longestMessage.entries()].map(([t, m]) => `${t}=${m.length}`).join(" ")
      }`
  )
})

layer(FuzzWorld, { timeout: "120 seconds" })("Fuzz", (it) => {
  it("reflects every endpoint of the contract, each in the operation table", () => {
    expect(ENDPOINTS.length).toBeGreaterThanOrEqual(19)
    for (const spec of ENDPOINTS) expect(operationByName(spec.name), spec.name).toBeDefined()
    // Reflection sees the bodies (a regression here would silently stop the body fuzzing).
    expect(ENDPOINTS.filter((e) => e.payload !== undefined).map((e) => e.name))
      .toEqual(expect.arrayContaining(["createExpense", "createToken", "revokeToken", "syncIntegration"]))
  })

  /** A valid base request for the sweep: real ids in the path, a body generated from the payload schema. */
  const baseDraft = (spec: EndpointSpec): Draft => {
    const params: Record<string, Segment> = {}
    for (const p of spec.params) {
      params[p.name] = {
        kind: "ref",
        ref: p.collection === "expenses"
          ? "pathExpense"
          : p.collection === "tokens"
          ? "victim"
          : p.collection === "integrations"
          ? "provider"
          : "own",
        n: 0
      }
    }
    return {
      method: undefined,
      params,
      query: { kind: "pairs", pairs: [] },
      body: { kind: "none" },
      contentType: undefined,
      contentLength: false,
      idempotencyKey: undefined,
      headers: {},
      repeat: false
    }
  }

  /** The generated payload with the most fields (so the sweep's replacements reach as many fields as possible). */
  const fullestPayload = (spec: EndpointSpec): Record<string, unknown> => {
    const samples = fc.sample(fromSchema(spec.payload!), { numRuns: 50, seed: SEED })
    return samples
      .filter((s): s is Record<string, unknown> => typeof s === "object" && s !== null)
      .reduce((a, b) => (Object.keys(b).length > Object.keys(a).length ? b : a), {})
  }

  describe.each(ENDPOINTS.map((spec) => [spec.name, spec] as const))("%s", (_name, spec) => {
    it.effect("survives every named hostile input", () =>
      Effect.gen(function*() {
        const base = baseDraft(spec)
        const drafts: Array<Draft> = []
        for (const p of spec.params) {
          for (const text of HOSTILE_SEGMENTS) {
            drafts.push({ ...base, params: { ...base.params, [p.name]: { kind: "raw", text } } })
          }
          for (const ref of ["foreign", "own2"] as const) {
            drafts.push({ ...base, params: { ...base.params, [p.name]: { kind: "ref", ref, n: 1 } } })
          }
        }
        for (const text of HOSTILE_QUERIES) {
          drafts.push({ ...base, query: { kind: "raw", text } })
        }
        for (const method of FOREIGN_METHODS) drafts.push({ ...base, method })
        for (const headers of ODD_HEADERS) drafts.push({ ...base, headers })
        for (const idempotencyKey of IDEMPOTENCY_KEYS) drafts.push({ ...base, idempotencyKey })
        // A retried request under a fresh key: replayed, or run again if the first was not kept.
        drafts.push({ ...base, idempotencyKey: `sweep-${spec.name}-plain`, repeat: true })
        for (const [, text] of HOSTILE_BODIES) {
          drafts.push({ ...base, body: { kind: "raw", text } })
          drafts.push({ ...base, body: { kind: "raw", text }, contentLength: true })
        }
        if (spec.payload !== undefined) {
          const value = fullestPayload(spec)
          const body = { kind: "json", value, ops: [] } as const
          drafts.push({ ...base, body })
          drafts.push({ ...base, body, idempotencyKey: `sweep-${spec.name}-body`, repeat: true })
          for (const contentType of HOSTILE_CONTENT_TYPES) drafts.push({ ...base, body, contentType })
          for (const [key, extra] of MASS_ASSIGNMENT) {
            drafts.push({ ...base, body: { kind: "json", value, ops: [{ op: "extra", key, value: extra }] } })
          }
          const fields = Object.keys(value).length
          for (let i = 0; i < fields; i++) {
            drafts.push({ ...base, body: { kind: "json", value, ops: [{ op: "drop", i }] } })
          }
          // Every hostile value once, the fields taking turns (the generated runs try the other pairings).
          HOSTILE_VALUES.forEach(([, hostile], n) => {
            drafts.push({
              ...base,
              body: { kind: "json", value, ops: [{ op: "replace", i: n % Math.max(fields, 1), value: hostile }] }
            })
          })
        }
        const before = mutates(spec) ? undefined : (yield* fingerprint())
        for (const draft of drafts) yield* exercise(spec, draft)
        if (before !== undefined) yield* expectUnchangedSince(before)
      }), TIMEOUT_MS)

    it.effect(`holds for ${RUNS} generated requests`, () =>
      Effect.gen(function*() {
        const before = mutates(spec) ? undefined : (yield* fingerprint())
        // fast-check drives the runs (seed, no shrinking, its own report): each property run is an Effect
        // run on this test's context.
        const run = Effect.runPromiseWith(yield* Effect.context<TestApp>())
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(draftFor(spec), (draft) => run(exercise(spec, draft))),
            {
              numRuns: RUNS,
              seed: SEED + ENDPOINTS.indexOf(spec),
              // Requests have effects (and some inputs are megabytes): report the first failure as is, with
              // the request in short form, instead of shrinking or printing the whole generated draft.
              endOnFailure: true,
              reporter: (details) => {
                if (details.failed) {
                  const where = `seed ${details.seed}, path ${details.counterexamplePath}`
                  const error = (details.errorInstance as Error | undefined)?.message
                  throw new Error(`${spec.name}: failed after ${details.numRuns} requests (${where})\n${error}`)
                }
              }
            }
          )
        )
        if (before !== undefined) yield* expectUnchangedSince(before)
      }), TIMEOUT_MS)
  })

  /** Found by this fuzz: a forged cursor whose instant is no Date reached Postgres and answered 500. */
  describe("cursors name real instants", () => {
    const forged = (ms: number) => Buffer.from(JSON.stringify([ms, "tok_AAAAAAAAAAAAAAAA"])).toString("base64url")

    it.effect("a forged cursor outside 1970–9999 is a 400 on every list endpoint", () =>
      Effect.gen(function*() {
        const lists = ENDPOINTS.filter((e) =>
          e.method === "GET" && e.query !== undefined && fieldNames(e.query.ast).includes("cursor")
        )
        expect(lists.map((e) => e.name).sort()).toEqual([
          "listExpenses",
          "listProjects",
          "listSignals",
          "listTokens",
          "listWebhookDeliveries"
        ])
        const webhook = yield* h.raw("POST", `/api/v1/projects/${world.projects[0]}/webhooks`, {
          token: secret,
          body: { url: "https://hooks.example.com/fuzz", events: ["webhook.test"], confirm: true }
        })
        expect(webhook.status, webhook.text).toBe(201)
        for (const spec of lists) {
          const path = spec.path.replace(":id", world.projects[0]).replace(":webhookId", webhook.json.data.webhook.id)
          for (const ms of [Number.MAX_SAFE_INTEGER, 8_640_000_000_000_001, -1, Date.UTC(10_000, 0, 1)]) {
            const r = yield* h.raw("GET", `${path}?cursor=${forged(ms)}`, { token: secret })
            expect(violation(r.status, r.text, r.json), `${spec.name} ${ms}: ${r.text}`).toBeNull()
            // listSignals is not paged by these cursors in every store; what matters is that nothing fails.
            if (spec.name !== "listSignals") {
              expect([r.status, r.json.error?.type], `${spec.name} ${ms}`).toEqual([400, "invalid_cursor"])
            }
          }
        }
      }))

    it.effect("the last instant of 9999 is still a cursor", () =>
      Effect.gen(function*() {
        const r = yield* h.api.tokens.listTokens({ query: { cursor: forged(Date.UTC(10_000, 0, 1) - 1) } }, {
          token: secret
        })
        expect(r.status, r.text).toBe(200)
      }))
  })

  /**
   * Found by this fuzz: error messages quoted the caller's input whole — a 60 KB field in a 400, a 60 KB
   * project id in a 404, a megabyte path in the route 404. They now quote at most a few hundred characters.
   */
  describe("errors quote input, never all of it", () => {
    const small = (r: { status: number; text: string; json: any }, status: number) => {
      const problem = violation(r.status, r.text, r.json)
      expect(problem, r.text.slice(0, 300)).toBeNull()
      expect(r.status).toBe(status)
      expect(r.text.length).toBeLessThan(4_000)
    }

    it.effect("a 60 KB field in a 400", () =>
      Effect.gen(function*() {
        const r = yield* h.raw("POST", `/api/v1/projects/${world.projects[0]}/expenses`, {
          token: secret,
          body: {
            amount: 1,
            category: "hosting",
            description: "x",
            incurredOn: "x".repeat(60_000),
            recurrence: "monthly"
          }
        })
        small(r, 400)
        // The contract's own check quotes the value it refused ("… is not a calendar date"): cut, with its length.
        const quoted = r.json.error.issues.find((i: any) => i.message.startsWith("\"x"))
        expect(quoted.path).toBe("body.incurredOn")
        expect(quoted.message).toMatch(/^"x+… \(\d+ characters\)$/)
        expect(quoted.message.length).toBeLessThan(400)
      }))

    it.effect("a 60 KB unknown field name in a 400", () =>
      Effect.gen(function*() {
        const r = yield* h.raw("POST", "/api/v1/tokens", { token: secret, body: { ["k".repeat(60_000)]: 1 } })
        small(r, 400)
        expect(r.json.error.issues[0].message).toBe("Unknown field")
      }))

    it.effect("a 60 KB project id in a 404", () =>
      Effect.gen(function*() {
        const r = yield* h.api.tokens.createToken({ payload: { projects: ["p".repeat(60_000) as ProjectId] } }, {
          token: secret
        })
        small(r, 404)
        expect(r.json.error.message).toContain("(60008 characters) not found")
      }))

    it.effect("a megabyte path in the route 404", () =>
      Effect.gen(function*() {
        const r = yield* h.raw("GET", `/api/v1/${"z".repeat(1024 * 1024)}`, { token: secret })
        small(r, 404)
        expect(r.json.error.type).toBe("route_not_found")
        expect(r.json.error.message).toMatch(/^No route for GET \/api\/v1\/z+… \(\d+ characters\)$/)
      }))

    it("a clipped quote never ends in half a surrogate pair", () => {
      const clipped = clipInput("😀".repeat(300), 201)
      expect(clipped.isWellFormed()).toBe(true)
      expect(clipped).toBe(`${"😀".repeat(100)}… (600 characters)`)
    })
  })
})
