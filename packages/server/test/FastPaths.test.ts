/**
 * The fast paths are known by reference: each is its endpoint's `FastPath` annotation in the contract
 * (@sitehealth/domain/ApiOperation), read from the endpoint the request matched (http/Authentication.ts, one
 * lookup plan per endpoint) and from the endpoint object a handler names (access/StoredAnswers.ts), never from
 * a name written as a string. The reads the hot path serves by one statement are listed here by reference
 * (`ProjectsApi.endpoints.getHealth`): renaming one keeps its fast path (or, renamed here too, fails to
 * compile); dropping or changing its annotation fails this suite, and contract/HotPath.test.ts measures the
 * one statement of every annotated endpoint on PostgreSQL.
 */
import { endpointsOf, type FastPath, fastPathOf, operationOf, ProjectsApi, ReportsApi } from "@sitehealth/domain/Api"
import { PERIODS } from "@sitehealth/domain/Common"
import { Briefing } from "@sitehealth/domain/Projects"
import { HttpApiEndpoint } from "effect/http-api"
import { describe, expect, it } from "vitest"
import { answerKeyOf, servedStoredWith } from "../src/access/StoredAnswers.ts"
import type { AnswersRepoShape } from "../src/answers/AnswersRepo.ts"
import { lookupPlanFor, lookupPlanOf } from "../src/http/Authentication.ts"
import type { FreshnessShape } from "../src/recompute/Freshness.ts"

const p = ProjectsApi.endpoints
const r = ReportsApi.endpoints

/** Every read served fast, by reference, with the fast path it has. */
const EXPECTED: ReadonlyArray<readonly [{ readonly identifier: string }, FastPath]> = [
  [p.listProjects, { preRead: "projectList", storedAnswer: null }],
  [p.getHealth, { preRead: "health", storedAnswer: null }],
  [p.getBriefing, { preRead: null, storedAnswer: "whole" }],
  [p.listSignals, { preRead: "health", storedAnswer: "signalFilters" }],
  [r.getAnalytics, { preRead: null, storedAnswer: "period" }],
  [r.getRevenue, { preRead: null, storedAnswer: "period" }],
  [r.getChurn, { preRead: null, storedAnswer: "period" }],
  [r.getSeo, { preRead: null, storedAnswer: "period" }]
]

const contract = endpointsOf().map(({ endpoint }) => endpoint)
const byName = (name: string) => contract.find((e) => e.identifier === name)!

describe("fast paths, by reference", () => {
  it("the contract annotates exactly the reads served fast, each with its fast path", () => {
    const annotated = contract.flatMap((e) => {
      const fastPath = fastPathOf(e)
      return fastPath === undefined ? [] : [[e.identifier, fastPath] as const]
    })
    expect(annotated).toEqual(EXPECTED.map(([endpoint, fastPath]) => [endpoint.identifier, fastPath]))
    // The group's own endpoint object and the composed contract's carry the same annotation.
    for (const [endpoint, fastPath] of EXPECTED) {
      expect(fastPathOf(endpoint as HttpApiEndpoint.Top), endpoint.identifier).toEqual(fastPath)
    }
  })

  it("each annotation is coherent with its endpoint: a project read, but for the projects list", () => {
    for (const endpoint of contract) {
      const fastPath = fastPathOf(endpoint)
      if (fastPath === undefined) continue
      const operation = operationOf(endpoint)!
      expect([endpoint.method, operation.kind], endpoint.identifier).toEqual(["GET", "read"])
      expect(operation.permission, endpoint.identifier).not.toBeNull()
      // A projects list reads no project; every other fast path reads the project the path names.
      expect(operation.project, endpoint.identifier).toBe(fastPath.preRead !== "projectList")
      if (fastPath.preRead === "projectList") expect(fastPath.storedAnswer, endpoint.identifier).toBeNull()
    }
  })

  it("the authentication lookup reads, for each endpoint, what its annotations ask for and nothing else", () => {
    for (const endpoint of contract) {
      const plan = lookupPlanFor(endpoint)
      // Made once per endpoint: the same plan every request.
      expect(lookupPlanFor(endpoint)).toBe(plan)
      const fastPath = fastPathOf(endpoint)
      const operation = operationOf(endpoint)!
      const reachable = operation.permission !== null
      const expected = !reachable
        ? "token"
        : fastPath?.preRead === "projectList"
        ? "list"
        : operation.project
        ? "project"
        : "token"
      expect(plan.reads, endpoint.identifier).toBe(expected)
      expect(plan.withHealth, endpoint.identifier).toBe(expected === "project" && fastPath?.preRead === "health")
      expect(plan.answerKey !== null, endpoint.identifier).toBe(
        expected === "project" && (fastPath?.storedAnswer ?? null) !== null
      )
    }
    // Served fast as listed above (a read that loses its annotation loses its pre-read here).
    expect(lookupPlanFor(byName(p.listProjects.identifier)).reads).toBe("list")
    expect(lookupPlanFor(byName(p.getHealth.identifier)).withHealth).toBe(true)
    expect(lookupPlanFor(byName(p.listSignals.identifier)).withHealth).toBe(true)
    for (const endpoint of [p.getBriefing, p.listSignals, r.getAnalytics, r.getRevenue, r.getChurn, r.getSeo]) {
      expect(lookupPlanFor(byName(endpoint.identifier)).answerKey, endpoint.identifier).not.toBeNull()
    }
  })

  it("an endpoint outside the contract is planned from its own annotations: without them, the token alone", () => {
    const bare = HttpApiEndpoint.get("getHealth", "/projects/:id/health") as unknown as HttpApiEndpoint.Top
    expect(lookupPlanOf(bare)).toEqual({ reads: "token", withHealth: false, answerKey: null })
    expect(lookupPlanFor(bare)).toEqual({ reads: "token", withHealth: false, answerKey: null })
  })

  it("stored answers are keyed by the endpoint's name and its normalised query, as they are kept", () => {
    const key = (endpoint: { readonly identifier: string }, query: Record<string, string | Array<string>>) =>
      answerKeyOf(byName(endpoint.identifier))!(query)
    for (const report of [r.getAnalytics, r.getRevenue, r.getChurn, r.getSeo]) {
      const name = report.identifier
      expect(key(report, {})).toBe(`${name}?period=30d`)
      for (const period of PERIODS) expect(key(report, { period })).toBe(`${name}?period=${period}`)
      expect(key(report, { period: "bogus" })).toBeNull()
      expect(key(report, { period: ["7d", "30d"] })).toBeNull()
    }
    // The form the rows were kept under before the annotations (a migration of traffic/ deletes `getAnalytics?%`).
    expect(key(r.getAnalytics, { period: "7d" })).toBe("getAnalytics?period=7d")
    expect(key(p.getBriefing, {})).toBe(p.getBriefing.identifier)
    expect(key(p.getBriefing, { period: "7d" })).toBe(p.getBriefing.identifier)
    const signals = p.listSignals.identifier
    expect(key(p.listSignals, {})).toBe(`${signals}?`)
    expect(key(p.listSignals, { limit: "5", active: "true", severity: "high", dimension: "traffic" }))
      .toBe(`${signals}?dimension=traffic&severity=high&active=true&limit=5`)
    expect(key(p.listSignals, { active: "true", cursor: "abc" })).toBeNull()
    expect(key(p.listSignals, { active: ["true", "false"] })).toBeNull()
    for (const endpoint of [p.listProjects, p.getHealth]) {
      expect(answerKeyOf(byName(endpoint.identifier)), endpoint.identifier).toBeNull()
    }
  })

  it("a handler that serves stored answers for an endpoint that keeps none fails when its group is built", () => {
    // The services are only taken here, not used until a request.
    const served = servedStoredWith({} as FreshnessShape, {} as AnswersRepoShape)
    expect(() => served(p.getHealth, Briefing)).toThrow(/getHealth keeps no stored answers/)
    expect(() => served(p.getBriefing, Briefing)).not.toThrow()
  })
})
