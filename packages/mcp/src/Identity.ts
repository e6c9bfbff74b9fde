/**
 * What the server says of itself in its `initialize` answer: name and version, capabilities, instructions.
 * No imports: both the SDK server (Server.ts) and the early answer (EarlyInitialize.ts), which is written
 * before the SDK is loaded, read them from here.
 */

export const SERVER_INFO = { name: "sitehealth", version: "0.1.0" } as const

export const CAPABILITIES = { tools: {}, prompts: {}, resources: {}, completions: {}, logging: {} } as const

/** Said once per session instead of in every tool: the envelope, errors, the gate, pagination. */
export const INSTRUCTIONS =
  "sitehealth: health, briefing, signals, analytics, revenue, churn, SEO, integrations, expenses and tokens of " +
  "websites. " +
  "Start with list_projects; every other project tool takes its `id` (prj_…). " +
  "A result is the API's `data` as compact JSON (also in structuredContent) followed by a one-line summary. " +
  "An error is a result with isError whose text is the API's envelope {status:'error', error:{code, type, message}} " +
  "— " +
  "`issues` on 400, `permission` on 403, `limit`/`remaining`/`reset` (epoch seconds) on 429: wait until reset. " +
  "Lists are paginated: pass `nextCursor` back as `cursor`. Tools with `confirm` only preview unless called with " +
  "confirm: true. " +
  "Field meanings: docs/api.md or GET /api/v1/openapi.json."
