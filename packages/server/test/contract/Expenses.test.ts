/**
 * Expenses: create (201, defaults, validation), list (newest first, keyset pagination), delete (soft,
 * scoped to the project), and the expenses:write permission.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { createProject } from "../../src/accounts/Provisioning.ts"
import { MemoryDb } from "../../src/store/MemoryDb.ts"
import { expensesPath, VALID_EXPENSE as valid } from "../fixtures/expenses.ts"
import { expectError } from "../support/Expect.ts"
import { type CallResult, h, TestApp } from "../support/TestApp.ts"

layer(TestApp.layer())("Expenses", (it) => {
  const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

  /** `pages` requests through the list at one expense a page, following nextCursor: each page's data (200 checked). */
  const pagesOfOne = (path: string, token: string, pages: number) =>
    Effect.gen(function*() {
      const out: Array<{ readonly expenses: Array<any>; readonly nextCursor: string | null }> = []
      let cursor: string | null = null
      for (let page = 0; page < pages; page++) {
        const query: string = cursor === null ? "?limit=1" : `?limit=1&cursor=${encodeURIComponent(cursor)}`
        const r = yield* h.raw("GET", `${path}${query}`, { token })
        expect(r.status, r.text).toBe(200)
        out.push(r.json.data)
        cursor = r.json.data.nextCursor
      }
      return out
    })

  /** A 400 invalid_request whose issues name `path`. */
  const expectInvalid = (r: CallResult, path: string) => {
    expectError(r, 400, "invalid_request")
    expect(Array.isArray(r.json.error.issues), r.text).toBe(true)
    const paths = r.json.error.issues.map((i: any) => i.path)
    expect(paths, r.text).toContain(path)
    for (const issue of r.json.error.issues) {
      expect(issue.message).toBeTypeOf("string")
      expect(issue.message.length).toBeGreaterThan(0)
    }
  }

  const listIds = (projectId: string, token: string, query = "") =>
    Effect.gen(function*() {
      const r = yield* h.raw("GET", `${expensesPath(projectId)}${query}`, { token })
      expect(r.status, r.text).toBe(200)
      return r.json.data.expenses.map((e: any) => e.id)
    })

  /** What the store holds for an expense, deleted or not (null when there is no row at all). */
  const storedDeletedAt = (id: string) =>
    Effect.gen(function*() {
      if (h.store === "postgres") {
        const rows = (yield* h.run(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT deleted_at FROM expenses WHERE id = ${id}`)
        )) as ReadonlyArray<any>
        return rows.length === 0
          ? null
          : { deletedAt: rows[0].deleted_at === null ? null : new Date(rows[0].deleted_at) }
      }
      const record = yield* h.run(Effect.map(MemoryDb, (db) => db.expenses.get(id)))
      return record === undefined ? null : { deletedAt: record.deletedAt }
    })

  describe("POST /projects/{id}/expenses", () => {
    it.effect("answers 201 with the created expense in the envelope, currency defaulting to the project's and vendor null", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const r = yield* h.api.expenses.createExpense({ params: { id: projects[0].id }, payload: valid }, {
          token: secret
        })
        expect(r.status, r.text).toBe(201)
        expect(r.headers.get("content-type")).toContain("application/json")
        expect(Object.keys(r.json).sort()).toEqual(["data", "status"])
        expect(r.json.status).toBe("success")
        expect(Object.keys(r.json.data)).toEqual(["expense"])
        const e = r.json.data.expense
        expect(e).toEqual({
          id: expect.stringMatching(/^exp_/),
          projectId: projects[0].id,
          amount: 4999,
          currency: "USD",
          category: "hosting",
          description: "VPS for November",
          vendor: null,
          incurredOn: "2026-11-01",
          recurrence: "monthly",
          createdAt: new Date(yield* h.now).toISOString(),
          deletedAt: null
        })
      }))

    it.effect("takes the project's own currency as the default, and keeps an explicit currency and vendor", () =>
      Effect.gen(function*() {
        const { account, secret } = yield* h.newAccount({ projects: 0 })
        const eur = yield* h.run(
          createProject({ accountId: account.id, name: "Euro site", domain: "euro.example", currency: "EUR" })
        )
        const byDefault = yield* h.api.expenses.createExpense({ params: { id: eur.id }, payload: valid }, {
          token: secret
        })
        expect(byDefault.status, byDefault.text).toBe(201)
        expect(byDefault.json.data.expense.currency).toBe("EUR")

        const explicit = yield* h.api.expenses.createExpense({
          params: { id: eur.id },
          payload: { ...valid, currency: "GBP", vendor: "Hetzner", recurrence: "one_off", amount: 100_000_000_000 }
        }, { token: secret })
        expect(explicit.status, explicit.text).toBe(201)
        expect(explicit.json.data.expense).toMatchObject({
          currency: "GBP",
          vendor: "Hetzner",
          recurrence: "one_off",
          amount: 100_000_000_000
        })
        const nullVendor = yield* h.api.expenses.createExpense({
          params: { id: eur.id },
          payload: { ...valid, vendor: null }
        }, { token: secret })
        expect(nullVendor.status, nullVendor.text).toBe(201)
        expect(nullVendor.json.data.expense.vendor).toBeNull()
      }))

    it.effect("rejects each invalid field with 400 invalid_request naming the field, and creates nothing", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const path = expensesPath(projects[0].id)
        const post = (body: unknown) => h.raw("POST", path, { token: secret, body })
        const { amount: _amount, ...withoutAmount } = valid

        expectInvalid(yield* post({ ...valid, amount: 0 }), "body.amount")
        expectInvalid(yield* post({ ...valid, amount: -100 }), "body.amount")
        expectInvalid(yield* post({ ...valid, amount: 1.5 }), "body.amount")
        expectInvalid(yield* post({ ...valid, amount: "100" }), "body.amount")
        expectInvalid(yield* post(withoutAmount), "body.amount")
        expectInvalid(yield* post({ ...valid, amount: 100_000_000_001 }), "body.amount")
        expectInvalid(yield* post({ ...valid, currency: "ABC" }), "body.currency")
        expectInvalid(yield* post({ ...valid, currency: "usd" }), "body.currency")
        expectInvalid(yield* post({ ...valid, category: "food" }), "body.category")
        expectInvalid(yield* post({ ...valid, recurrence: "weekly" }), "body.recurrence")
        expectInvalid(yield* post({ ...valid, incurredOn: "2026-02-30" }), "body.incurredOn")
        expectInvalid(yield* post({ ...valid, incurredOn: "yesterday" }), "body.incurredOn")
        expectInvalid(yield* post({ ...valid, description: "" }), "body.description")
        expectInvalid(yield* post({ ...valid, description: "  padded  " }), "body.description")
        expectInvalid(yield* post({ ...valid, vendor: "" }), "body.vendor")

        const extra = yield* post({ ...valid, note: "typo'd field" })
        expectInvalid(extra, "body.note")
        expect(extra.json.error.issues).toContainEqual({ path: "body.note", message: "Unknown field" })

        const malformed = yield* h.raw("POST", path, { token: secret, rawBody: "{\"amount\": 12," })
        expectError(malformed, 400, "invalid_json")

        const list = yield* h.raw("GET", path, { token: secret })
        expect(list.status).toBe(200)
        expect(list.json.data).toEqual({ expenses: [], nextCursor: null })
      }))

    it.effect("needs expenses:write: 403 naming the permission, and nothing is created", () =>
      Effect.gen(function*() {
        const { account, projects, secret } = yield* h.newAccount()
        const readOnly = yield* h.mint(account.id, { permissions: ["projects:read", "expenses:read"] })
        const r = yield* h.api.expenses.createExpense({ params: { id: projects[0].id }, payload: valid }, {
          token: readOnly.secret
        })
        expectError(r, 403, "missing_permission")
        expect(r.json.error.permission).toBe("expenses:write")
        // Reading is still allowed with expenses:read, and shows nothing was stored.
        expect(yield* listIds(projects[0].id, readOnly.secret)).toEqual([])
        expect(yield* listIds(projects[0].id, secret)).toEqual([])
      }))

    it.effect("answers 404 for a project of another account and 403 for a project outside the token's scope", () =>
      Effect.gen(function*() {
        const other = yield* h.newAccount()
        const { account, projects, secret } = yield* h.newAccount({ projects: 2 })
        expectError(
          yield* h.api.expenses.createExpense({ params: { id: other.projects[0].id }, payload: valid }, {
            token: secret
          }),
          404
        )
        const scoped = yield* h.mint(account.id, { projects: [projects[0].id] })
        expectError(
          yield* h.api.expenses.createExpense({ params: { id: projects[1].id }, payload: valid }, {
            token: scoped.secret
          }),
          403,
          "project_out_of_scope"
        )
        expect(yield* listIds(other.projects[0].id, other.secret)).toEqual([])
        expect(yield* listIds(projects[1].id, secret)).toEqual([])
      }))
  })

  describe("input the store cannot hold: a 400, never a 500, and the same answer in both stores", () => {
    /** Either rejected as the caller's mistake (400 naming `field`) or stored and echoed back exactly. */
    const expectRejectedOrKept = (r: CallResult, field: string, sent: unknown) => {
      expect(r.status, r.text).not.toBe(500)
      if (r.status === 400) {
        expectInvalid(r, field)
      } else {
        expect(r.status, r.text).toBe(201)
        expect(r.json.data.expense[field.replace("body.", "")]).toBe(sent)
      }
    }

    it.effect("incurredOn in year 0000", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const r = yield* h.raw("POST", `/api/v1/projects/${projects[0].id}/expenses`, {
          token: secret,
          body: { ...valid, incurredOn: "0000-01-01" }
        })
        expectRejectedOrKept(r, "body.incurredOn", "0000-01-01")
      }))

    it.effect("a NUL character in description or vendor", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const path = expensesPath(projects[0].id)
        const description = "VPS\u0000November"
        expectRejectedOrKept(
          yield* h.raw("POST", path, { token: secret, body: { ...valid, description } }),
          "body.description",
          description
        )
        const vendor = "Hetz\u0000ner"
        expectRejectedOrKept(
          yield* h.raw("POST", path, { token: secret, body: { ...valid, vendor } }),
          "body.vendor",
          vendor
        )
      }))

    it.effect("a lone UTF-16 surrogate in description", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const description = "VPS \ud800 November"
        const r = yield* h.raw("POST", `/api/v1/projects/${projects[0].id}/expenses`, {
          token: secret,
          rawBody: JSON.stringify({ ...valid, description })
        })
        expectRejectedOrKept(r, "body.description", description)
      }))
  })

  describe("GET /projects/{id}/expenses", () => {
    it.effect("lists the project's expenses newest first, and pages through them with ?limit and nextCursor", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const path = expensesPath(projects[0].id)
        const ids: Array<string> = []
        for (const description of ["first", "second", "third"]) {
          const r = yield* h.raw("POST", path, { token: secret, body: { ...valid, description } })
          expect(r.status, r.text).toBe(201)
          ids.push(r.json.data.expense.id)
          yield* TestClock.adjust(1_000)
        }
        const newestFirst = [...ids].reverse()

        const all = yield* h.raw("GET", path, { token: secret })
        expect(all.status).toBe(200)
        expect(Object.keys(all.json).sort()).toEqual(["data", "status"])
        expect(all.json.status).toBe("success")
        expect(all.json.data.nextCursor).toBeNull()
        expect(all.json.data.expenses.map((e: any) => e.id)).toEqual(newestFirst)
        expect(all.json.data.expenses.map((e: any) => e.description)).toEqual(["third", "second", "first"])
        for (const e of all.json.data.expenses) {
          expect(e.deletedAt).toBeNull()
          expect(e.createdAt).toMatch(ISO)
        }

        const pages = yield* pagesOfOne(path, secret, 3)
        for (const page of pages) expect(page.expenses).toHaveLength(1)
        for (const page of pages.slice(0, 2)) expect(page.nextCursor).toBeTypeOf("string")
        expect(pages[2].nextCursor).toBeNull()
        expect(pages.map((page) => page.expenses[0].id)).toEqual(newestFirst)

        const two = yield* h.raw("GET", `${path}?limit=2`, { token: secret })
        expect(two.json.data.expenses.map((e: any) => e.id)).toEqual(newestFirst.slice(0, 2))
        const rest = yield* h.raw("GET", `${path}?limit=2&cursor=${encodeURIComponent(two.json.data.nextCursor)}`, {
          token: secret
        })
        expect(rest.json.data).toEqual({ expenses: [expect.objectContaining({ id: ids[0] })], nextCursor: null })
      }))

    it.effect("pages without skipping or repeating expenses created at the same instant", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const path = expensesPath(projects[0].id)
        const ids = new Set<string>()
        for (let i = 0; i < 4; i++) {
          const r = yield* h.raw("POST", path, { token: secret, body: { ...valid, description: `same instant ${i}` } })
          ids.add(r.json.data.expense.id)
        }
        const pages = yield* pagesOfOne(path, secret, 4)
        expect(pages[3].nextCursor).toBeNull()
        const seen = pages.flatMap((page) => page.expenses.map((e: any) => e.id))
        expect(seen).toHaveLength(4)
        expect(new Set(seen)).toEqual(ids)
      }))

    it.effect("answers 400 in the error envelope for a bad limit or cursor", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const path = expensesPath(projects[0].id)
        for (const limit of ["0", "101", "abc", "1.5", "-1"]) {
          const r = yield* h.raw("GET", `${path}?limit=${limit}`, { token: secret })
          expectInvalid(r, "query.limit")
        }
        expect((yield* h.raw("GET", `${path}?limit=100`, { token: secret })).status).toBe(200)
        expectError(yield* h.raw("GET", `${path}?cursor=garbage`, { token: secret }), 400, "invalid_cursor")
        expectError(
          yield* h.raw("GET", `${path}?cursor=${Buffer.from("[1,2]").toString("base64url")}`, { token: secret }),
          400
        )
      }))

    it.effect("lists only the project's own expenses", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount({ projects: 2 })
        const a = yield* h.api.expenses.createExpense({ params: { id: projects[0].id }, payload: valid }, {
          token: secret
        })
        const b = yield* h.api.expenses.createExpense({ params: { id: projects[1].id }, payload: valid }, {
          token: secret
        })
        expect(yield* listIds(projects[0].id, secret)).toEqual([a.json.data.expense.id])
        expect(yield* listIds(projects[1].id, secret)).toEqual([b.json.data.expense.id])
      }))
  })

  describe("DELETE /projects/{id}/expenses/{expenseId}", () => {
    it.effect("marks the expense deleted (200 with deletedAt), hides it from the list, keeps the row, and 404s a second time", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const path = expensesPath(projects[0].id)
        const keep =
          (yield* h.raw("POST", path, { token: secret, body: { ...valid, description: "keep" } })).json.data.expense
        const created =
          (yield* h.raw("POST", path, { token: secret, body: { ...valid, description: "drop" } })).json.data.expense
        yield* TestClock.adjust(5_000)

        const r = yield* h.raw("DELETE", `${path}/${created.id}`, { token: secret })
        expect(r.status, r.text).toBe(200)
        expect(Object.keys(r.json).sort()).toEqual(["data", "status"])
        expect(r.json.status).toBe("success")
        expect(r.json.data.deleted).toBe(true)
        const deletedAt = new Date(yield* h.now).toISOString()
        expect(r.json.data.expense).toEqual({ ...created, deletedAt })

        expect(yield* listIds(projects[0].id, secret)).toEqual([keep.id])

        // Soft delete: the row is still stored, marked with the deletion time.
        const stored = yield* storedDeletedAt(created.id)
        expect(stored).not.toBeNull()
        expect(stored!.deletedAt?.toISOString()).toBe(deletedAt)
        expect((yield* storedDeletedAt(keep.id))!.deletedAt).toBeNull()

        expectError(yield* h.raw("DELETE", `${path}/${created.id}`, { token: secret }), 404, "not_found")
        expectError(yield* h.raw("DELETE", `${path}/exp_doesnotexist`, { token: secret }), 404, "not_found")
        // The failed repeat did not move the deletion time.
        expect((yield* storedDeletedAt(created.id))!.deletedAt?.toISOString()).toBe(deletedAt)
      }))

    it.effect("answers 404 for an expense of another project of the same account, and leaves it alone", () =>
      Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount({ projects: 2 })
        const [a, b] = projects
        const ofB =
          (yield* h.api.expenses.createExpense({ params: { id: b.id }, payload: valid }, { token: secret })).json.data
            .expense
        expectError(
          yield* h.api.expenses.deleteExpense({ params: { id: a.id, expenseId: ofB.id } }, { token: secret }),
          404,
          "not_found"
        )
        expect(yield* listIds(b.id, secret)).toEqual([ofB.id])
        expect((yield* storedDeletedAt(ofB.id))!.deletedAt).toBeNull()
      }))

    it.effect("answers 404 for an expense of a project of another account", () =>
      Effect.gen(function*() {
        const other = yield* h.newAccount()
        const theirs = (yield* h.api.expenses.createExpense({ params: { id: other.projects[0].id }, payload: valid }, {
          token: other.secret
        })).json.data.expense
        const { projects, secret } = yield* h.newAccount()
        expectError(
          yield* h.api.expenses.deleteExpense({ params: { id: projects[0].id, expenseId: theirs.id } }, {
            token: secret
          }),
          404
        )
        expectError(
          yield* h.api.expenses.deleteExpense({ params: { id: other.projects[0].id, expenseId: theirs.id } }, {
            token: secret
          }),
          404
        )
        expect(yield* listIds(other.projects[0].id, other.secret)).toEqual([theirs.id])
      }))

    it.effect("needs expenses:write: 403 naming the permission, and the expense stays", () =>
      Effect.gen(function*() {
        const { account, projects, secret } = yield* h.newAccount()
        const created =
          (yield* h.api.expenses.createExpense({ params: { id: projects[0].id }, payload: valid }, { token: secret }))
            .json.data.expense
        const readOnly = yield* h.mint(account.id, { permissions: ["expenses:read"] })
        const r = yield* h.api.expenses.deleteExpense({ params: { id: projects[0].id, expenseId: created.id } }, {
          token: readOnly.secret
        })
        expectError(r, 403, "missing_permission")
        expect(r.json.error.permission).toBe("expenses:write")
        expect(yield* listIds(projects[0].id, secret)).toEqual([created.id])
        expect((yield* storedDeletedAt(created.id))!.deletedAt).toBeNull()
      }))
  })
})
