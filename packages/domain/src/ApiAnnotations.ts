/** /api/v1's `annotations` group: days of a website marked with a note (Api.ts composes it). */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import {
  AnnotationDeleted,
  AnnotationList,
  AnnotationSaved,
  AnnotationsQuery,
  CreateAnnotation,
  UpdateAnnotation
} from "./Annotations.ts"
import { op, projectParams, scoped } from "./ApiOperation.ts"
import { Idempotency } from "./Authentication.ts"
import { Envelope } from "./Envelope.ts"
import { BadRequest } from "./Errors.ts"

const annotationParams = { id: Schema.String, annotationId: Schema.String }

export class AnnotationsApi extends HttpApiGroup.make("annotations")
  .add(
    op(
      HttpApiEndpoint.get("listAnnotations", "/projects/:id/annotations", {
        params: projectParams,
        query: AnnotationsQuery,
        success: Envelope("AnnotationListResponse", AnnotationList),
        error: [...scoped, BadRequest]
      }),
      {
        permission: "annotations:read",
        summary: "A website's annotations (marked days), oldest first, optionally from/to",
        cli: ["annotations", "list"],
        mcp: "list_annotations"
      }
    ),
    op(
      HttpApiEndpoint.post("createAnnotation", "/projects/:id/annotations", {
        params: projectParams,
        payload: CreateAnnotation,
        success: Envelope("AnnotationCreatedResponse", AnnotationSaved, { status: 201 }),
        error: scoped
      }).middleware(Idempotency),
      {
        permission: "annotations:write",
        kind: "write",
        summary: "Mark a day with a note (a launch, a price change, a campaign)",
        cli: ["annotations", "add"],
        mcp: "create_annotation"
      }
    ),
    op(
      HttpApiEndpoint.patch("updateAnnotation", "/projects/:id/annotations/:annotationId", {
        params: annotationParams,
        payload: UpdateAnnotation,
        success: Envelope("AnnotationUpdatedResponse", AnnotationSaved),
        error: scoped
      }),
      {
        permission: "annotations:write",
        kind: "write",
        summary: "Change an annotation's day, note or category",
        cli: ["annotations", "update"],
        mcp: "update_annotation",
        idempotent: true
      }
    ),
    op(
      HttpApiEndpoint.delete("deleteAnnotation", "/projects/:id/annotations/:annotationId", {
        params: annotationParams,
        success: Envelope("AnnotationDeletedResponse", AnnotationDeleted),
        error: scoped
      }),
      {
        permission: "annotations:write",
        kind: "destructive",
        summary: "Delete an annotation (kept, marked deleted)",
        cli: ["annotations", "delete"],
        mcp: "delete_annotation",
        idempotent: true
      }
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Annotations", description: "Days of a website marked with a note" }))
{}
