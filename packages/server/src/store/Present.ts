/** Records → the contract's shapes. */
import type { Expense } from "@sitehealth/domain/Expenses"
import type { TokenMetadata } from "@sitehealth/domain/Tokens"
import type { ExpenseRecord, TokenRecord } from "./Records.ts"
import { displayPrefix } from "./TokenSecret.ts"

export const iso = (d: Date): string => d.toISOString()
export const isoOrNull = (d: Date | null): string | null => (d === null ? null : d.toISOString())

export const tokenMetadata = (t: TokenRecord, now: Date): TokenMetadata => ({
  id: t.id,
  accountId: t.accountId,
  name: t.name,
  prefix: displayPrefix(t.last4),
  projects: t.projects === null ? null : [...t.projects],
  permissions: [...t.permissions],
  createdAt: iso(t.createdAt),
  lastUsedAt: isoOrNull(t.lastUsedAt),
  expiresAt: isoOrNull(t.expiresAt),
  revokedAt: isoOrNull(t.revokedAt),
  status: t.revokedAt !== null ? "revoked" : t.expiresAt !== null && t.expiresAt <= now ? "expired" : "active"
})

export const expense = (e: ExpenseRecord): Expense => ({
  id: e.id,
  projectId: e.projectId,
  amount: e.amountMinor,
  currency: e.currency,
  category: e.category as Expense["category"],
  description: e.description,
  vendor: e.vendor,
  incurredOn: e.incurredOn,
  recurrence: e.recurrence,
  createdAt: iso(e.createdAt),
  deletedAt: isoOrNull(e.deletedAt)
})
