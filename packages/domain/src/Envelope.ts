/**
 * The envelope every /api/v1 response travels in, both sides of it, in one module.
 *
 * Success: on the wire `{"status":"success","data":{…}}`, in code the plain `data` value, so handlers return
 * plain values and the typed client gets them back unwrapped.
 *
 * Error: on the wire `{"status":"error","error":{"code":…,"message":…,"type":…,…}}`. `errorBody` is the one
 * function that writes it: the error classes of Errors.ts encode through it, and so does every answer given
 * outside the HttpApi (unknown routes, Node's own parser errors, the MCP route, the CLI's local failures).
 */
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaTransformation from "effect/SchemaTransformation"

export const Envelope = <S extends Schema.Top & { readonly Encoded: object }>(
  identifier: string,
  data: S,
  options?: { readonly status?: number; readonly description?: string }
): Schema.Codec<S["Type"], SuccessEnvelope<S["Encoded"]>, S["DecodingServices"], S["EncodingServices"]> => {
  const wire = Schema.Struct({ status: Schema.Literal("success"), data })
  // Built on the AST, like the error classes: the transformation is written once for any `data`, which the
  // typed `Schema.decodeTo` cannot check for a generic `S`; `Schema.make` then restores the declared types.
  const ast = SchemaAST.decodeTo(
    wire.ast,
    Schema.toType(data).ast,
    SchemaTransformation.transform<unknown, { readonly data: unknown }>({
      decode: (envelope) => envelope.data,
      encode: (value) => ({ status: "success", data: value })
    })
  )
  return Schema.make<
    Schema.Codec<S["Type"], SuccessEnvelope<S["Encoded"]>, S["DecodingServices"], S["EncodingServices"]>
  >(
    ast
  ).annotate({
    identifier,
    ...(options?.description ? { description: options.description } : {}),
    ...(options?.status ? { httpApiStatus: options.status } : {})
  })
}

export interface SuccessEnvelope<Data> {
  readonly status: "success"
  readonly data: Data
}

/**
 * The success envelope's text around `data` that is already JSON text (stored answers are kept encoded, so
 * a hot read writes them without decoding): what `Envelope` encodes `{status: "success", data}` to.
 */
export const successText = (encodedData: string): string => SUCCESS_TEXT_HEAD + encodedData + SUCCESS_TEXT_TAIL

/** successText's text before and after `data` (the access lookup wraps a stored answer in SQL with them). */
export const SUCCESS_TEXT_HEAD = `{"status":"success","data":`
export const SUCCESS_TEXT_TAIL = "}"

/** The inside of an error envelope: `code` (the HTTP status, or a string for a few), `message`, `type`, extras. */
export interface ErrorBody {
  readonly code?: number | string
  readonly message: string
  readonly type: string
  readonly [extra: string]: unknown
}

export interface ErrorEnvelope {
  readonly status: "error"
  readonly error: ErrorBody
}

/**
 * Writes an error envelope. `code` is the HTTP status for the API's answers (a string for a few, e.g.
 * `trial_expired`); null leaves it out (the admin tool's output has none). `extra` follows `type`, in its
 * own key order.
 */
export const errorBody = (
  code: number | string | null,
  message: string,
  type: string,
  extra?: Readonly<Record<string, unknown>>
): ErrorEnvelope => ({
  status: "error",
  error: code === null ? { message, type, ...extra } : { code, message, type, ...extra }
})

/** True when `body` is an error envelope (what a client checks before trusting its fields). */
export const isErrorEnvelope = (body: unknown): body is ErrorEnvelope =>
  typeof body === "object" && body !== null && "status" in body && body.status === "error" &&
  "error" in body && typeof body.error === "object" && body.error !== null
