/**
 * What the sync queue's two stores share beside the queue itself (SyncQueue.ts): when an integration is due,
 * and, for the memory store (tests), the credentials and cursors kept beside MemoryDb's rows, which
 * IntegrationsRepo's memory twin reads too.
 */
import type { MemoryTables } from "../store/MemoryDb.ts"
import { intervalMinutesOf, nextSlot } from "./Schedule.ts"

/** Due now: its next_sync_at has come, or (never scheduled) its first slot after the connection. */
export const isDue = (
  i: {
    readonly projectId: string
    readonly provider: string
    readonly connectedAt: Date
    readonly nextSyncAt: Date | null
    readonly syncIntervalMinutes: number | null
  },
  defaultIntervalMinutes: number,
  now: Date
) =>
  (i.nextSyncAt ??
    nextSlot(
      i.projectId,
      i.provider,
      intervalMinutesOf(i.provider, i.syncIntervalMinutes, defaultIntervalMinutes),
      i.connectedAt
    ))
    .getTime() <= now.getTime()

/** Memory store only: credentials and cursors of integrations, beside MemoryDb's rows (one per MemoryDb). */
const sides = new WeakMap<
  MemoryTables,
  { credentials: Map<string, Uint8Array | null>; states: Map<string, unknown>; historyPending: Set<string> }
>()
export const memorySide = (db: MemoryTables) => {
  let side = sides.get(db)
  if (side === undefined) sides.set(db, side = { credentials: new Map(), states: new Map(), historyPending: new Set() })
  return side
}
