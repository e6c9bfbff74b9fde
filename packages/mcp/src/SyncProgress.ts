/**
 * `sync_integration` followed: when the client asked for it (it set a logging level with `logging/setLevel`, or
 * the call carries a `progressToken`), the tool does not answer at once with the queued run. It reads the run's
 * state through the API (`read`: the contract's `listIntegrations`, the run is that integration's `lastRun`) every
 * `intervalMs` and tells each change as a `notifications/message` (logger `sync`): queued, running, then
 * succeeded with what it fetched, or failed with why (level `error`). After `boundMs` it stops following and
 * says that the run goes on in the background. The reads are the server following its own action: no rate-limit
 * unit (as tools/list's discovery); the call itself was charged.
 */
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js"
import type { ApiAnswer } from "./Dispatch.ts"

/** How a followed sync is read: every `intervalMs`, for at most `boundMs`. */
export interface FollowPolicy {
  readonly intervalMs: number
  readonly boundMs: number
}

export const DEFAULT_FOLLOW: FollowPolicy = { intervalMs: 1_000, boundMs: 60_000 }

/** What a tool call may tell its client while it runs (Server.ts makes it per request). */
export interface CallProgress {
  /** The client asked to hear of progress (a logging level set, or a progress token on the call). */
  readonly follow: boolean
  /** A `notifications/message` related to this call, unless below the client's level. */
  readonly log: (level: LoggingLevel, data: Record<string, unknown>) => Promise<void>
  /** A `notifications/progress` for the call's progress token (nothing without one). */
  readonly progress: (progress: number, total: number, message: string) => Promise<void>
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

interface RunState {
  readonly id: string
  readonly status: string
  readonly counts: Record<string, unknown> | null
  readonly error: string | null
}

const runOf = (body: unknown, provider: string): RunState | null => {
  if (!isObject(body) || !isObject(body.data) || !Array.isArray(body.data.integrations)) return null
  const integration = body.data.integrations.find((i) => isObject(i) && i.provider === provider)
  const run = isObject(integration) ? integration.lastRun : null
  if (!isObject(run) || typeof run.id !== "string" || typeof run.status !== "string") return null
  return {
    id: run.id,
    status: run.status,
    counts: isObject(run.counts) ? run.counts : null,
    error: typeof run.error === "string" ? run.error : null
  }
}

const STEP: Record<string, number> = { queued: 1, running: 2, succeeded: 3, failed: 3 }

const sentence = (provider: string, run: RunState): string => {
  switch (run.status) {
    case "queued":
      return `${provider} sync ${run.id} queued: waiting for a worker`
    case "running":
      return `${provider} sync ${run.id} running`
    case "succeeded": {
      const counts = Object.entries(run.counts ?? {}).map(([kind, n]) => `${kind} ${String(n)}`).join(", ")
      return `${provider} sync ${run.id} succeeded${counts === "" ? "" : `: ${counts}`}`
    }
    default:
      return `${provider} sync ${run.id} failed: ${run.error ?? "no reason given"}`
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Follows run `syncId` of `provider` on project `projectId` until it finishes or `policy.boundMs` passes, telling
 * each change through `call`; `read` answers the project's integrations. Answers the last state seen (null when
 * the run could not be read at all).
 */
export const followSync = async (
  read: () => Promise<ApiAnswer>,
  target: { readonly projectId: string; readonly provider: string; readonly syncId: string },
  call: CallProgress,
  policy: FollowPolicy = DEFAULT_FOLLOW
): Promise<RunState | null> => {
  const { projectId, provider, syncId } = target
  const deadline = Date.now() + policy.boundMs
  let last: RunState | null = null
  for (;;) {
    const answer = await read()
    const run = answer.status === 200 ? runOf(answer.body, provider) : null
    if (run !== null && run.id !== syncId) {
      // A later run replaced ours as the integration's latest: ours finished before we saw how.
      await call.log("notice", {
        syncId,
        projectId,
        provider,
        message: `${provider} sync ${syncId} was followed by ${run.id}; read list_integrations for both`
      })
      return last
    }
    if (run !== null && run.status !== last?.status) {
      last = run
      const message = sentence(provider, run)
      await call.log(run.status === "failed" ? "error" : "info", {
        syncId,
        projectId,
        provider,
        status: run.status,
        ...(run.counts === null ? {} : { counts: run.counts }),
        ...(run.error === null ? {} : { error: run.error }),
        message
      })
      await call.progress(STEP[run.status] ?? 0, 3, message)
      if (run.status === "succeeded" || run.status === "failed") return run
    }
    if (Date.now() + policy.intervalMs > deadline) break
    await sleep(policy.intervalMs)
  }
  await call.log("notice", {
    syncId,
    projectId,
    provider,
    status: last?.status ?? "unknown",
    message: `${provider} sync ${syncId} still ${last?.status ?? "unread"} after ${
      Math.round(policy.boundMs / 1000)
    } s; it continues in the background (list_integrations shows it)`
  })
  return last
}
