/** Annotations (list, add, update, delete): days of a website marked with a note. */
import { ANNOTATION_CATEGORIES, CreateAnnotation, UpdateAnnotation } from "@sitehealth/domain/Annotations"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Render from "../Render.ts"
import { emit, validate, withApi } from "../Session.ts"
import { projectArg } from "./Reads.ts"

const annotationArg = Argument.String("annotation").pipe(Argument.withDescription("The annotation's id (ann_…)"))
const category = Flag.Literals("category", ANNOTATION_CATEGORIES).pipe(
  Flag.withDescription(`One of: ${ANNOTATION_CATEGORIES.join(", ")}`),
  Flag.optional
)
const some = <A>(key: string, value: Option.Option<A>) => (Option.isSome(value) ? { [key]: value.value } : {})

export const listAnnotationsCommand = (name: string) =>
  Command.make(
    name,
    {
      project: projectArg,
      from: Flag.String("from").pipe(Flag.withDescription("First day, YYYY-MM-DD"), Flag.optional),
      to: Flag.String("to").pipe(Flag.withDescription("Last day, YYYY-MM-DD"), Flag.optional)
    },
    ({ from, project, to }) =>
      withApi((api, call) =>
        Effect.gen(function*() {
          const query = { ...some("from", from), ...some("to", to) }
          const data = yield* call(api.annotations.listAnnotations({ params: { id: project }, query }))
          yield* emit(data, Render.annotations)
        })
      )
  ).pipe(
    Command.withDescription("List a project's annotations (marked days), oldest first"),
    Command.withExamples([{
      command: "sitehealth annotations list prj_3kTMd9qXyVbN2LwP --from 2026-11-01",
      description: "This month's"
    }])
  )

export const createAnnotationCommand = (name: string) =>
  Command.make(
    name,
    {
      project: projectArg,
      note: Flag.String("note").pipe(Flag.withDescription("What happened (1–280 characters)")),
      date: Flag.String("date").pipe(Flag.withDescription("The day, YYYY-MM-DD (default: today, UTC)"), Flag.optional),
      category
    },
    (input) =>
      withApi((api, call) =>
        Effect.gen(function*() {
          const payload = yield* validate(
            CreateAnnotation,
            {
              note: input.note,
              date: Option.getOrElse(input.date, () => new Date().toISOString().slice(0, 10)),
              ...some("category", input.category)
            },
            "annotation"
          )
          const data = yield* call(api.annotations.createAnnotation({ params: { id: input.project }, payload }))
          yield* emit(data, (s, d) => `added\n${Render.annotation(s, d.annotation)}`)
        })
      )
  ).pipe(
    Command.withDescription("Mark a day with a note (a launch, a price change, a campaign)"),
    Command.withExamples([{
      command: "sitehealth annotations add prj_3kTMd9qXyVbN2LwP --date 2026-11-20 --note \"Raised Pro to €29\" " +
        "--category price_change",
      description: "A price change"
    }])
  )

export const updateAnnotationCommand = (name: string) =>
  Command.make(
    name,
    {
      project: projectArg,
      annotation: annotationArg,
      note: Flag.String("note").pipe(Flag.withDescription("The new note"), Flag.optional),
      date: Flag.String("date").pipe(Flag.withDescription("The new day, YYYY-MM-DD"), Flag.optional),
      category
    },
    (input) =>
      withApi((api, call) =>
        Effect.gen(function*() {
          const payload = yield* validate(
            UpdateAnnotation,
            { ...some("note", input.note), ...some("date", input.date), ...some("category", input.category) },
            "annotation"
          )
          const data = yield* call(
            api.annotations.updateAnnotation({
              params: { id: input.project, annotationId: input.annotation },
              payload
            })
          )
          yield* emit(data, (s, d) => `updated\n${Render.annotation(s, d.annotation)}`)
        })
      )
  ).pipe(
    Command.withDescription("Change an annotation's day, note or category"),
    Command.withExamples([{
      command: "sitehealth annotations update prj_3kTMd9qXyVbN2LwP ann_9aB… --date 2026-11-21",
      description: "Move it a day later"
    }])
  )

export const deleteAnnotationCommand = (name: string) =>
  Command.make(
    name,
    { project: projectArg, annotation: annotationArg },
    ({ annotation, project }) =>
      withApi((api, call) =>
        Effect.flatMap(
          call(api.annotations.deleteAnnotation({ params: { id: project, annotationId: annotation } })),
          (data) => emit(data, (s, d) => `deleted\n${Render.annotation(s, d.annotation)}`)
        )
      )
  ).pipe(
    Command.withDescription("Delete an annotation (kept, marked deleted)"),
    Command.withExamples([{
      command: "sitehealth annotations delete prj_3kTMd9qXyVbN2LwP ann_9aB…",
      description: "Delete one annotation"
    }])
  )
