/**
 * /api/v1's `projects` group: the websites in a token's scope, their health, briefing and signals (Api.ts composes
 * it). Every read has a fast path (`fastPath`, ApiOperation.ts): served by the hot path's one statement when what
 * is stored is current.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import {
  dashboardOnly,
  dashboardOnlyOptions,
  op,
  pagedList,
  projectGet,
  projectParams,
  scoped
} from "./ApiOperation.ts"
import { PageQuery } from "./Common.ts"
import { Envelope } from "./Envelope.ts"
import { BadRequest } from "./Errors.ts"
import { Briefing, Dimension, Health, ProjectList, Severity, SignalList } from "./Projects.ts"

export class ProjectsApi extends HttpApiGroup.make("projects")
  .add(
    op(pagedList("listProjects", "/projects", Envelope("ProjectListResponse", ProjectList)), {
      permission: "projects:read",
      summary: "Projects in the token's scope, each with a health snapshot",
      cli: ["projects", "list"],
      mcp: "list_projects",
      csv: ["projects"],
      fastPath: { preRead: "projectList" }
    }),
    op(projectGet("getHealth", "/projects/:id/health", Envelope("HealthResponse", Health)), {
      permission: "projects:read",
      summary: "Health score, confidence and dimensions of a project",
      cli: ["health"],
      mcp: "get_health",
      fastPath: { preRead: "health" }
    }),
    op(projectGet("getBriefing", "/projects/:id/briefing", Envelope("BriefingResponse", Briefing)), {
      permission: "projects:read",
      summary: "Morning briefing with priorities",
      cli: ["briefing"],
      mcp: "get_briefing",
      fastPath: { storedAnswer: "whole" }
    }),
    op(
      HttpApiEndpoint.get("listSignals", "/projects/:id/signals", {
        params: projectParams,
        query: {
          dimension: Schema.optionalKey(Dimension),
          severity: Schema.optionalKey(Severity),
          active: Schema.optionalKey(Schema.Literals(["true", "false"])),
          ...PageQuery
        },
        success: Envelope("SignalListResponse", SignalList),
        error: [...scoped, BadRequest]
      }),
      {
        permission: "projects:read",
        summary: "Signals, optionally filtered by dimension and severity",
        cli: ["signals"],
        mcp: "list_signals",
        // The signals are stored with the snapshot: read with the token to tell whether they are current.
        fastPath: { preRead: "health", storedAnswer: "signalFilters" },
        csv: ["signals"]
      }
    ),
    op(HttpApiEndpoint.delete("deleteProject", "/projects/:id", dashboardOnlyOptions(projectParams)), dashboardOnly)
  )
  .annotateMerge(
    OpenApi.annotations({ title: "Projects", description: "Websites, their health, briefing and signals" })
  )
{}
