/**
 * Migration 0021_payments_staged_fillfactor: room on every page of `payments_staged` for the new version of a
 * row it holds. An incremental sync re-stages each changed subscription (its document updated in place): with
 * full pages the new version goes to another page and into all three indexes (primary key, group, parent);
 * with a page's 20 % left free it stays on the page as a heap-only tuple (HOT: the indexed columns do not change)
 * and no index is written. Only a storage parameter: pages already full stay so until rewritten, new pages
 * (every page of a new account's full sync) keep the room.
 */
import { ddlMigration } from "../db/Ddl.ts"

export const paymentsStagedFillMigration = ddlMigration(`ALTER TABLE payments_staged SET (fillfactor = 80);`)
