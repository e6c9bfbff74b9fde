/** 403 vs 404: other accounts' projects do not exist; restricted tokens get 403; permissions are named. */
import { describe, expect, layer } from "@effect/vitest"
import { operationByName } from "@sitehealth/domain/Api"
import { PERMISSIONS } from "@sitehealth/domain/Permissions"
import { Effect } from "effect"
import { h, projectRoutes, TestApp } from "../support/TestApp.ts"

layer(TestApp.layer())("Scope", (it) => {
  describe("project scope", () => {
    it.effect("a project of another account is 404 on every project route, as if it did not exist", () =>
      Effect.gen(function*() {
        const a = yield* h.newAccount()
        const b = yield* h.newAccount()
        for (const [method, path] of projectRoutes(b.projects[0].id)) {
          const r = yield* h.raw(method, path, { token: a.secret })
          expect(r.status, `${method} ${path}`).toBe(404)
          expect(r.json.error.type).toBe("not_found")
        }
        const create = yield* h.api.expenses.createExpense({
          params: { id: b.projects[0].id },
          payload: { amount: 100, category: "other", description: "x", incurredOn: "2026-11-01", recurrence: "one_off" }
        }, { token: a.secret })
        expect(create.status).toBe(404)
        const list = yield* h.api.projects.listProjects({ query: {} }, { token: a.secret })
        expect(list.json.data.projects.map((p: any) => p.id)).toEqual([a.projects[0].id])
      }))

    it.effect("a token restricted away from one of its account's projects gets 403 there and sees only its own", () =>
      Effect.gen(function*() {
        const { account, projects } = yield* h.newAccount({ projects: 2 })
        const [allowed, other] = projects
        const restricted = yield* h.mint(account.id, { projects: [allowed.id] })
        for (const [method, path] of projectRoutes(other.id)) {
          const r = yield* h.raw(method, path, { token: restricted.secret })
          expect(r.status, `${method} ${path}`).toBe(403)
          expect(r.json.error.type).toBe("project_out_of_scope")
        }
        expect((yield* h.api.projects.getHealth({ params: { id: allowed.id } }, { token: restricted.secret })).status)
          .toBe(200)
        const list = yield* h.api.projects.listProjects({ query: {} }, { token: restricted.secret })
        expect(list.json.data.projects.map((p: any) => p.id)).toEqual([allowed.id])
      }))

    it.effect("a token for every project (projects: null) also covers projects created later", () =>
      Effect.gen(function*() {
        const { account, secret } = yield* h.newAccount({ projects: 1 })
        const { createProject } = yield* Effect.promise(() => import("../../src/accounts/Provisioning.ts"))
        const later = yield* h.run(createProject({ accountId: account.id, name: "Later", domain: "later.example" }))
        expect((yield* h.api.projects.getHealth({ params: { id: later.id } }, { token: secret })).status).toBe(200)
      }))
  })

  describe("permissions", () => {
    it.effect("each endpoint needs its permission, and the 403 names it", () =>
      Effect.gen(function*() {
        const { account, projects } = yield* h.newAccount()
        const id = projects[0].id
        const routes: Record<string, readonly [string, string]> = {
          listProjects: ["GET", "/api/v1/projects"],
          getHealth: ["GET", `/api/v1/projects/${id}/health`],
          getBriefing: ["GET", `/api/v1/projects/${id}/briefing`],
          listSignals: ["GET", `/api/v1/projects/${id}/signals`],
          getAnalytics: ["GET", `/api/v1/projects/${id}/analytics`],
          getRevenue: ["GET", `/api/v1/projects/${id}/revenue`],
          getChurn: ["GET", `/api/v1/projects/${id}/churn`],
          getSeo: ["GET", `/api/v1/projects/${id}/seo`],
          listIntegrations: ["GET", `/api/v1/projects/${id}/integrations`],
          syncIntegration: ["POST", `/api/v1/projects/${id}/integrations/stripe/sync`],
          listExpenses: ["GET", `/api/v1/projects/${id}/expenses`],
          createExpense: ["POST", `/api/v1/projects/${id}/expenses`],
          deleteExpense: ["DELETE", `/api/v1/projects/${id}/expenses/exp_x`],
          listTokens: ["GET", "/api/v1/tokens"],
          createToken: ["POST", "/api/v1/tokens"],
          revokeToken: ["DELETE", "/api/v1/tokens/tok_x"]
        }
        for (const [name, [method, path]] of Object.entries(routes)) {
          const needed = operationByName(name)?.permission
          if (needed === undefined || needed === null || needed === "authenticated") {
            throw new Error(`${name}: no permission in its Operation annotation`)
          }
          // A token with every permission but the needed one.
          const token = yield* h.mint(account.id, { permissions: PERMISSIONS.filter((p) => p !== needed) })
          const r = yield* h.raw(method, path, { token: token.secret })
          expect(r.status, name).toBe(403)
          expect(r.json.error).toMatchObject({ type: "missing_permission", permission: needed })
          expect(r.json.error.message).toContain(needed)
          // And with only that permission, it is not a 403.
          const only = yield* h.mint(account.id, { permissions: [needed] })
          const ok = yield* h.raw(method, path, { token: only.secret })
          expect(ok.status, `${name} with ${needed}`).not.toBe(403)
        }
      }))

    it.effect("dashboard-only actions are 403 dashboard_only even with every permission, and change nothing", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const id = projects[0].id
        for (
          const [method, path] of [
            ["DELETE", `/api/v1/projects/${id}`],
            ["POST", `/api/v1/projects/${id}/integrations/stripe`],
            ["DELETE", `/api/v1/projects/${id}/integrations/stripe`]
          ] as const
        ) {
          const r = yield* h.raw(method, path, { token: secret })
          expect(r.status).toBe(403)
          expect(r.json.error.type).toBe("dashboard_only")
        }
        expect((yield* h.api.projects.getHealth({ params: { id: id } }, { token: secret })).status).toBe(200)
      }))
  })
})
