/** Handlers of the annotations group: days of a website marked with a note. */
import { ANNOTATION_LIST_MAX } from "@sitehealth/domain/Annotations"
import { AnnotationsApi, SiteHealthApi } from "@sitehealth/domain/Api"
import { notFound } from "@sitehealth/domain/Errors"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as Layer from "effect/Layer"
import { type AnnotationRecord, AnnotationsRepo } from "../annotations/AnnotationsRepo.ts"
import { withApiMiddlewaresOnly } from "../http/Middleware.ts"
import { requireProjectWith } from "../http/ProjectPolicy.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { newId } from "../store/Ids.ts"

type Request<Name extends keyof typeof AnnotationsApi.endpoints> = (typeof AnnotationsApi.endpoints)[Name]["~Request"]

/** An annotation as the API answers it. */
export const annotation = (a: AnnotationRecord) => ({
  id: a.id,
  projectId: a.projectId,
  date: a.date,
  note: a.note,
  category: a.category,
  createdAt: a.createdAt.toISOString(),
  updatedAt: a.updatedAt.toISOString()
})

/**
 * The group's operations, by endpoint name: /api/v1's handlers (AnnotationsHttp below) and the dashboard's
 * (dashboard/reports/Http.ts) are these same functions.
 */
export const annotationsOperations = Effect.gen(function*() {
  const projects = yield* ProjectsRepo
  const annotations = yield* AnnotationsRepo
  const requireProject = requireProjectWith(projects)
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
  return {
    listAnnotations: ({ params, query }: Pick<Request<"listAnnotations">, "params" | "query">) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        const rows = yield* annotations.list(project.id, {
          from: query.from ?? null,
          to: query.to ?? null,
          limit: ANNOTATION_LIST_MAX + 1
        })
        return {
          annotations: rows.slice(0, ANNOTATION_LIST_MAX).map(annotation),
          truncated: rows.length > ANNOTATION_LIST_MAX
        }
      }),
    createAnnotation: ({ params, payload }: Pick<Request<"createAnnotation">, "params" | "payload">) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        const at = yield* now
        const created = yield* annotations.insert({
          id: newId("ann"),
          projectId: project.id,
          date: payload.date,
          note: payload.note,
          category: payload.category ?? "other",
          createdAt: at,
          updatedAt: at,
          deletedAt: null
        })
        return { annotation: annotation(created) }
      }),
    updateAnnotation: ({ params, payload }: Pick<Request<"updateAnnotation">, "params" | "payload">) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        const changed = yield* annotations.update(project.id, params.annotationId, payload, yield* now)
        if (changed === null) return yield* Effect.fail(notFound("Annotation"))
        return { annotation: annotation(changed) }
      }),
    deleteAnnotation: ({ params }: Pick<Request<"deleteAnnotation">, "params">) =>
      Effect.gen(function*() {
        const project = yield* requireProject(params.id)
        const deleted = yield* annotations.softDelete(project.id, params.annotationId, yield* now)
        if (deleted === null) return yield* Effect.fail(notFound("Annotation"))
        return { deleted: true as const, annotation: annotation(deleted) }
      })
  }
})

export const AnnotationsHttp = Layer.unwrap(
  Effect.map(
    annotationsOperations,
    (operations) =>
      HttpApiBuilder.group(SiteHealthApi, "annotations", (handlers) => handlers.handleAll(operations)).pipe(
        withApiMiddlewaresOnly
      )
  )
)
