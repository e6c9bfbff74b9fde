/**
 * The Plausible connector suite (test/PlausibleConnector.test.ts: fake Stats API, hand-worked site, GET
 * /analytics) run again by the contract projects, so its writes and figures are checked on Postgres too.
 */
import "../PlausibleConnector.test.ts"
