/**
 * The tests that start the server or the worker as `npm start` / `npm run worker` do (bin/server.js,
 * bin/worker.js) run the bundle. The launcher rebuilds a stale one itself, but several test files starting it
 * at once would each build it, and its report on stderr would mix with what those tests read: built here once,
 * before any test, when a source is newer than it.
 */
import { isFresh } from "../../bin/launch.js"
import { buildServer } from "../../scripts/build.ts"

export default async function setup() {
  if (!isFresh("server") || !isFresh("worker")) await buildServer({ clean: false })
}
