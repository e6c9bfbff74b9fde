/**
 * Tokens: list, and the two confirm-gated operations. `create` and `revoke` always ask the API for its
 * preview first (which changes nothing). Then: `--yes` sends `confirm: true`; on a terminal the user is
 * asked; without a terminal and without `--yes` the preview is printed and the command exits 2, having
 * sent no confirming request. A minted secret goes to stdout once; the warning to stderr.
 */
import { PERMISSIONS } from "@sitehealth/domain/Permissions"
import { CreateTokenPayload } from "@sitehealth/domain/Tokens"
import { Effect, Option } from "effect"
import { Argument, Command, Flag, Prompt } from "effect/cli"
import { EXIT, localFailure, usage } from "../Failure.ts"
import * as Render from "../Render.ts"
import { emit, Json, printJson, style, validate, withApi, writeErr, writeOut } from "../Session.ts"
import { pagedList } from "./Reads.ts"

export const yesFlag = Flag.Boolean("yes").pipe(
  Flag.withAlias("y"),
  Flag.withDescription("Confirm without asking (sends confirm: true)"),
  Flag.withDefault(false)
)

const interactive = () => process.stdin.isTTY === true && process.stderr.isTTY === true

/**
 * Shows the preview and decides: true to go ahead. Without a terminal and without --yes this fails with
 * exit 2 after printing the preview (as JSON with --json), so scripts see what would have happened.
 */
export const confirmOrRefuse = (preview: unknown, text: string, question: string, yes: boolean) =>
  Effect.gen(function*() {
    const json: boolean = yield* Json
    if (yes) {
      if (!json) yield* writeErr(text)
      return
    }
    if (!interactive()) {
      // With --json, stdout carries one object: the error envelope, with the API's preview inside it.
      if (!json) yield* writeOut(text)
      const message = "confirmation required: nothing was changed; re-run with --yes to confirm"
      return yield* localFailure(EXIT.usage, "confirmation_required", message, { preview })
    }
    yield* writeErr(text)
    const ok = yield* Prompt.run(Prompt.Confirm({ message: question, initial: false })).pipe(
      Effect.orElseSucceed(() => false)
    )
    if (!ok) return yield* localFailure(EXIT.failure, "cancelled", "cancelled: nothing was changed")
  })

export const splitList = (raw: string) => raw.split(",").map((s) => s.trim()).filter((s) => s !== "")

export const createTokenCommand = (name: string) =>
  Command.make(
    name,
    {
      name: Flag.String("name").pipe(Flag.withDescription("A label for the token"), Flag.optional),
      projects: Flag.String("projects").pipe(
        Flag.withDescription("Comma-separated project ids, or \"all\" for every project (default: your own scope)"),
        Flag.optional
      ),
      permissions: Flag.String("permissions").pipe(
        Flag.withDescription(`Comma-separated permissions (default: your own): ${PERMISSIONS.join(", ")}`),
        Flag.optional
      ),
      expiresAt: Flag.String("expires-at").pipe(
        Flag.withDescription("ISO 8601 instant in the future, or \"never\" (default: your own expiry)"),
        Flag.optional
      ),
      yes: yesFlag
    },
    (input) =>
      withApi((api, call) =>
        Effect.gen(function*() {
          const json: boolean = yield* Json
          if (Option.isSome(input.permissions)) {
            const unknown = splitList(input.permissions.value).filter((p) =>
              !(PERMISSIONS as ReadonlyArray<string>).includes(p)
            )
            if (unknown.length > 0) {
              return yield* usage(
                `unknown permission ${unknown.map((p) => `"${p}"`).join(", ")}: allowed values are ${
                  PERMISSIONS.join(", ")
                }`
              )
            }
          }
          const draft = yield* validate(
            CreateTokenPayload,
            {
              ...(Option.isSome(input.name) ? { name: input.name.value } : {}),
              ...(Option.isSome(input.projects)
                ? { projects: input.projects.value.trim() === "all" ? null : splitList(input.projects.value) }
                : {}),
              ...(Option.isSome(input.permissions) ? { permissions: splitList(input.permissions.value) } : {}),
              ...(Option.isSome(input.expiresAt)
                ? { expiresAt: input.expiresAt.value.trim() === "never" ? null : input.expiresAt.value.trim() }
                : {})
            },
            "token"
          )
          const preview = yield* call(api.tokens.createToken({ payload: draft }))
          if (!("preview" in preview)) {
            return yield* localFailure(
              EXIT.failure,
              "unexpected_response",
              "the API minted a token without confirmation"
            )
          }
          yield* confirmOrRefuse(
            preview,
            `This would mint a token:\n${Render.tokenDraft(style(), preview.token)}\n${preview.message}`,
            "Mint this token?",
            input.yes
          )
          const minted = yield* call(api.tokens.createToken({ payload: { ...draft, confirm: true } }))
          if (!("secret" in minted)) {
            return yield* localFailure(
              EXIT.failure,
              "unexpected_response",
              "the API answered a preview to a confirmed request"
            )
          }
          if (minted.secret === null) {
            // A replay: the first attempt minted the token but its answer was lost, and the API keeps no secret.
            return yield* localFailure(
              EXIT.failure,
              "secret_lost",
              `minted ${minted.token.id} (${minted.token.name}), but its answer was lost in transit and the secret ` +
                `cannot be shown again: revoke it (sitehealth tokens revoke ${minted.token.id}) and mint another`
            )
          }
          if (json) yield* printJson(minted)
          else {
            yield* writeErr(`minted ${minted.token.id} (${minted.token.name})`)
            yield* writeOut(minted.secret)
          }
          yield* writeErr("This secret is shown only once and cannot be retrieved again: store it now.")
        })
      )
  ).pipe(
    Command.withDescription("Mint a token (shows the API's preview, then asks; --yes to skip the question)"),
    Command.withExamples([{
      command: "sitehealth tokens create --name ci --permissions projects:read,analytics:read --yes > ci-token",
      description: "A read-only token, its secret saved to a file"
    }])
  )

export const revokeTokenCommand = (name: string) =>
  Command.make(
    name,
    { id: Argument.String("token-id").pipe(Argument.withDescription("The token's id (tok_…)")), yes: yesFlag },
    ({ id, yes }) =>
      withApi((api, call) =>
        Effect.gen(function*() {
          const preview = yield* call(api.tokens.revokeToken({ params: { id }, query: {}, payload: {} }))
          if (!("preview" in preview)) {
            return yield* localFailure(
              EXIT.failure,
              "unexpected_response",
              "the API revoked a token without confirmation"
            )
          }
          const t = preview.token
          yield* confirmOrRefuse(
            preview,
            `This would revoke ${t.id} (${t.name}, ${t.prefix}, ${t.status})\n${preview.message}`,
            `Revoke ${t.id}?`,
            yes
          )
          const revoked = yield* call(api.tokens.revokeToken({ params: { id }, query: {}, payload: { confirm: true } }))
          yield* emit(revoked, (_s, d) => ("revoked" in d ? `revoked ${d.token.id} (${d.token.name})` : "not revoked"))
        })
      )
  ).pipe(
    Command.withDescription("Revoke a token (shows the API's preview, then asks; --yes to skip the question)"),
    Command.withExamples([{
      command: "sitehealth tokens revoke tok_4fQ… --yes",
      description: "Revoke without a question"
    }])
  )

export const listTokensCommand = (name: string) =>
  pagedList(name, (api, query) => api.tokens.listTokens({ query }), Render.tokens).pipe(
    Command.withDescription("List tokens (metadata only; a secret is never shown again)"),
    Command.withExamples([{ command: "sitehealth tokens list", description: "Every token of the account" }])
  )
