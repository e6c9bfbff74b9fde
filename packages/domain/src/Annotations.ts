/**
 * Annotations: a day of a website marked with a short note (a launch, a price change, a campaign), so that a
 * chart explains itself and the briefing and signals can name what the owner did as a likely cause.
 */
import * as Schema from "effect/Schema"
import { AnnotationId, DateOnly, ProjectId, Text, Timestamp } from "./Common.ts"
import { RealDate } from "./Expenses.ts"

export const ANNOTATION_CATEGORIES = ["launch", "price_change", "campaign", "release", "incident", "other"] as const
export const AnnotationCategory = Schema.Literals(ANNOTATION_CATEGORIES).annotate({
  identifier: "AnnotationCategory"
})
export type AnnotationCategory = typeof AnnotationCategory.Type

/** The longest note: a line on a chart, not a diary. */
export const ANNOTATION_NOTE_MAX = 280
/** The most annotations one list answers (oldest first); a wider range says `truncated`. */
export const ANNOTATION_LIST_MAX = 1_000

export const Annotation = Schema.Struct({
  id: AnnotationId,
  projectId: ProjectId,
  date: DateOnly.annotate({ description: "The day marked, in the website's time zone" }),
  note: Schema.String,
  category: AnnotationCategory,
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({ identifier: "Annotation" })
export type Annotation = typeof Annotation.Type

export const CreateAnnotation = Schema.Struct({
  date: RealDate.annotate({ description: "The day to mark, YYYY-MM-DD in the website's time zone" }),
  note: Text(ANNOTATION_NOTE_MAX).annotate({ description: "1 to 280 characters, trimmed" }),
  category: Schema.optionalKey(AnnotationCategory.annotate({ description: "Default other" }))
}).annotate({ identifier: "CreateAnnotation" })
export type CreateAnnotation = typeof CreateAnnotation.Type

export const UpdateAnnotation = Schema.Struct({
  date: Schema.optionalKey(RealDate),
  note: Schema.optionalKey(Text(ANNOTATION_NOTE_MAX)),
  category: Schema.optionalKey(AnnotationCategory)
}).annotate({
  identifier: "UpdateAnnotation",
  description: "What to change; an empty body changes nothing and answers the annotation as it is"
})
export type UpdateAnnotation = typeof UpdateAnnotation.Type

export const AnnotationsQuery = {
  from: Schema.optionalKey(RealDate.annotate({ description: "First day (inclusive); default: no lower bound" })),
  to: Schema.optionalKey(RealDate.annotate({ description: "Last day (inclusive); default: no upper bound" }))
}

export const AnnotationList = Schema.Struct({
  annotations: Schema.Array(Annotation),
  truncated: Schema.Boolean.annotate({
    description: "True when the range holds more than 1,000: the first 1,000 by date are listed; narrow the range"
  })
}).annotate({ identifier: "AnnotationList" })
export const AnnotationSaved = Schema.Struct({ annotation: Annotation }).annotate({ identifier: "AnnotationSaved" })
export const AnnotationDeleted = Schema.Struct({ deleted: Schema.Literal(true), annotation: Annotation }).annotate({
  identifier: "AnnotationDeleted"
})

/** How many days before a change an annotation may be and still be named its likely cause (the day itself too). */
export const CAUSE_WINDOW_DAYS = 3

/** An annotation named as the likely cause of a change: on the day it began or up to 3 days before. */
export const LikelyCause = Schema.Struct({
  annotationId: AnnotationId,
  date: DateOnly,
  note: Schema.String,
  category: AnnotationCategory
}).annotate({
  identifier: "LikelyCause",
  description: "The owner's annotation on the day the change began or up to 3 days before it (the latest such)"
})
export type LikelyCause = typeof LikelyCause.Type
