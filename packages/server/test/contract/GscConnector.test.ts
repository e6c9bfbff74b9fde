/**
 * The Search Console connector suite (test/GscConnector.test.ts: fake Google, hand-worked property, GET
 * /seo) run again by the contract projects, so its writes and figures are checked on Postgres too.
 */
import "../GscConnector.test.ts"
