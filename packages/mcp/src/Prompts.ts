/** Prompts for the common agent jobs; each names the tools to call, so the agent fetches live data. */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import { PERIODS } from "@sitehealth/domain/Common"
import { toolNameOf } from "./Names.ts"
import { pathParamOf } from "./PathParams.ts"

interface PromptDefinition {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly arguments: ReadonlyArray<{ readonly name: string; readonly description: string; readonly required: boolean }>
}

const PROJECT = { name: "project", description: "Project id (prj_…); see list_projects", required: true }
const PERIOD = {
  name: "period",
  description: "today, yesterday, 7d, 30d, 3m, 12m or all (default 7d)",
  required: false
}

export const PROMPTS: ReadonlyArray<
  { readonly definition: PromptDefinition; readonly text: (args: Record<string, string>) => string }
> = [
  {
    definition: {
      name: "morning_briefing",
      title: "Morning briefing",
      description: "The briefing of one project with its top signals, or of every website the token may see",
      arguments: [{ ...PROJECT, description: "Project id (prj_…); omit for every website", required: false }]
    },
    text: (a) =>
      a.project === undefined
        ? `Give me the morning briefing across all my websites. Call ${toolNameOf("listProjects")} (follow ` +
          `nextCursor until it is null), then ${
            toolNameOf("getBriefing")
          } with the id of each. Rank the websites by the money at stake ` +
          `their briefings name (largest first), then by health. ` +
          `For each: one line of what changed and the one thing ` +
          `to do today. Quote figures exactly as the tools return them; say so when a website has no data yet.`
        : `Give me the morning briefing of project ${a.project}. Call ${
          toolNameOf("getBriefing")
        } with id "${a.project}" and ` +
          `${
            toolNameOf("listSignals")
          } with id "${a.project}", active "true". Summarise the priorities first, then the ` +
          `three most severe active signals with what to do about each. Quote figures exactly as the tools return them.`
  },
  {
    definition: {
      name: "diagnose_traffic",
      title: "Diagnose traffic",
      description: "Analytics and traffic signals of a project for a period",
      arguments: [PROJECT, PERIOD]
    },
    text: (a) =>
      `Diagnose the traffic of project ${a.project} over ${a.period ?? "7d"}. Call ${
        toolNameOf("getAnalytics")
      } with id ` +
      `"${a.project}" and period "${a.period ?? "7d"}", and ${toolNameOf("listSignals")} with id "${a.project}" and ` +
      `dimension "traffic". Explain what changed, the likely causes the data supports, and what to check next. ` +
      `Say so when a figure is null (not enough data) rather than guessing.`
  }
]

/**
 * The prompt's messages. An unknown prompt, a missing or unknown argument, a project that is not a project id
 * or a period that does not exist is the caller's mistake: JSON-RPC -32602 (invalid params), naming it.
 */
export const promptMessages = (name: string, args: Record<string, string>) => {
  const prompt = PROMPTS.find((p) => p.definition.name === name)
  if (prompt === undefined) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Unknown prompt ${name}; prompts: ${PROMPTS.map((p) => p.definition.name).join(", ")}`
    )
  }
  const missing = prompt.definition.arguments.filter((a) => a.required && !args[a.name])
  if (missing.length > 0) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Prompt ${name} needs ${missing.map((a) => a.name).join(", ")}`
    )
  }
  const known = new Set(prompt.definition.arguments.map((a) => a.name))
  const unknown = Object.keys(args).filter((key) => !known.has(key))
  if (unknown.length > 0) {
    throw new McpError(ErrorCode.InvalidParams, `Prompt ${name} takes no argument ${unknown.join(", ")}`)
  }
  const projectProblem = args.project === undefined ? null : pathParamOf("/projects/:id", "id").problem(args.project)
  if (projectProblem !== null) throw new McpError(ErrorCode.InvalidParams, `Prompt ${name}: project: ${projectProblem}`)
  if (args.period !== undefined && !PERIODS.some((p) => p === args.period)) {
    throw new McpError(ErrorCode.InvalidParams, `Prompt ${name}: period must be one of ${PERIODS.join(", ")}`)
  }
  return {
    description: prompt.definition.description,
    messages: [{ role: "user" as const, content: { type: "text" as const, text: prompt.text(args) } }]
  }
}
