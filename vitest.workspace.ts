/**
 * The test projects. The HTTP contract suite runs twice: against the in-memory repositories (fast) and
 * against real PostgreSQL (DATABASE_URL when set, else an embedded cluster started by the global setup).
 */
import { defineProject } from "vitest/config"

const contract = "packages/server/test/contract/**/*.test.ts"
/** The dashboard in a real browser (skipped, saying so, where /usr/bin/chromium is missing). */
const web = "packages/web/test/**/*.test.ts"

export const projects = [
  defineProject({
    test: {
      name: "unit",
      include: ["packages/*/test/**/*.test.ts"],
      exclude: [contract, web, "**/node_modules/**"],
      globalSetup: ["packages/server/test/support/bundleGlobalSetup.ts"],
      testTimeout: 60_000
    }
  }),
  defineProject({
    test: {
      name: "contract:memory",
      include: [contract],
      env: { SITEHEALTH_TEST_STORE: "memory" },
      testTimeout: 30_000
    }
  }),
  defineProject({
    test: {
      name: "web",
      include: [web],
      // A page test loads pages and runs axe two or three times: 5–15 s on a quiet machine, and it timed out at
      // 30 s on two cores with four other jobs beside the suite (load 8). The wait is a bound, not a budget.
      testTimeout: 60_000,
      hookTimeout: 90_000
    }
  }),
  defineProject({
    test: {
      name: "contract:postgres",
      include: [contract],
      env: { SITEHEALTH_TEST_STORE: "postgres" },
      globalSetup: ["packages/server/test/support/postgresGlobalSetup.ts"],
      testTimeout: 30_000,
      hookTimeout: 120_000
    }
  })
]

export default projects
