/** Summary and description of a dashboard endpoint in its OpenAPI document. */
import { OpenApi } from "effect/http-api"

// any: only the method is asked for; a precise bound would restate HttpApiEndpoint's eleven type parameters,
// and `annotateMerge` keeps the endpoint's own type, which `E` carries through.
export const doc = <E extends { annotateMerge: (a: any) => any }>(endpoint: E, summary: string, description?: string): E =>
  endpoint.annotateMerge(OpenApi.annotations({ summary, ...(description ? { description } : {}) }))
