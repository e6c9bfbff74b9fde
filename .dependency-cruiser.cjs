/**
 * The server's layers, and no import cycle in any package (docs/architecture.md, "Layers"). `npm run lint`
 * runs it with scripts/folders.ts, which adds what a rule on modules cannot say: no two folders of the
 * server import each other.
 *
 *   platform (store, platform) → data (each feature's repository, migration and pure code) → logic
 *   (integrations, recompute, access, billing) → application (http, api, reports, oauth, dashboard, worker) → entry points
 *   (the server's root modules, admin, demo)
 *
 * A folder may import its own layer and the layers before it, never a later one.
 */
const SRC = "^packages/server/src/"
const folders = (names) => `${SRC}(${names.join("|")})/`
const PLATFORM = ["store", "platform"]
const DATA = ["accounts", "projects", "tokens", "expenses", "fx", "metrics", "traffic", "search", "answers", "snapshots", "payments", "webhooks", "alerts", "annotations"]
const LOGIC = ["integrations", "recompute", "access", "billing"]
const APPLICATION = ["http", "api", "reports", "oauth", "dashboard", "worker"]
const ENTRY = `(${SRC}[^/]+\\.ts$|${folders(["admin", "demo"])})`

const above = (name, from, to) => ({
  name,
  severity: "error",
  comment: "Layers import downwards only: platform → data → logic → application → entry points",
  from: { path: from },
  to: { path: to }
})

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "No import cycle in any package",
      from: {},
      to: { circular: true }
    },
    above("platform-imports-up", folders(PLATFORM), `${SRC}(?!(${PLATFORM.join("|")})/)`),
    above("data-imports-up", folders(DATA), `(${folders([...LOGIC, ...APPLICATION])}|${ENTRY})`),
    above("logic-imports-up", folders(LOGIC), `(${folders(APPLICATION)}|${ENTRY})`),
    above("application-imports-entry", folders(APPLICATION), ENTRY),
    {
      name: "every-folder-has-a-layer",
      severity: "error",
      comment: "A new folder of packages/server/src is given a layer here (and in docs/architecture.md)",
      from: { path: SRC },
      to: {
        path: `${SRC}[^/]+/`,
        pathNot: folders([...PLATFORM, ...DATA, ...LOGIC, ...APPLICATION, "admin", "demo"])
      }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|dist)/" },
    includeOnly: "^packages/[^/]+/src/",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js"] }
  }
}
