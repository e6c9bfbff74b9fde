/**
 * The success envelope: on the wire `{"status":"success","data":{…}}`, in code the plain `data` value, so
 * handlers return plain values and the typed client gets them back unwrapped.
 */
import { Schema, SchemaTransformation } from "effect"

export const Envelope = <S extends Schema.Top & { readonly Encoded: object }>(
  identifier: string,
  data: S,
  options?: { readonly status?: number; readonly description?: string }
) =>
  Schema.Struct({ status: Schema.Literal("success"), data }).pipe(
    Schema.decodeTo(
      Schema.toType(data),
      SchemaTransformation.transform({
        decode: (wire: { readonly data: S["Type"] }) => wire.data,
        encode: (value: S["Type"]) => ({ status: "success" as const, data: value })
      }) as any
    ),
    (schema) =>
      schema.annotate({
        identifier,
        ...(options?.description ? { description: options.description } : {}),
        ...(options?.status ? { httpApiStatus: options.status } : {})
      } as any)
  ) as unknown as Schema.Codec<S["Type"], { readonly status: "success"; readonly data: S["Encoded"] }, S["DecodingServices"], S["EncodingServices"]>
