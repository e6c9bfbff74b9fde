/** What the OpenAPI documents say: an endpoint's summary and description, and the settings both HttpApis share. */
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"

// any: only the method is asked for; a precise bound would restate HttpApiEndpoint's eleven type parameters,
// and `annotateMerge` keeps the endpoint's own type, which `E` carries through.
export const doc = <E extends { annotateMerge: (a: any) => any }>(
  endpoint: E,
  summary: string,
  description?: string
): E => endpoint.annotateMerge(OpenApi.annotations({ summary, ...(description ? { description } : {}) }))

/**
 * What /api/v1 and the dashboard's /app/api declare alike: an unknown body field is an error, not silently
 * dropped (a typo like "permisions" must not mint a token with the caller's full permissions); every invalid
 * field of a request is reported at once, not just the first; and the document's server is relative — the API
 * is wherever the document was fetched from (any host, behind any proxy that keeps the path), and the paths
 * already carry their prefix, so the server root is "/".
 */
export const documentedApi = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  document: { readonly title: string; readonly description: string }
): HttpApi.HttpApi<Id, Groups> =>
  api
    .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
    .annotate(HttpApi.QueryParseOptions, { errors: "all" })
    .annotateMerge(
      OpenApi.annotations({
        ...document,
        version: "1.0.0",
        servers: [{ url: "/", description: "The host that served this document" }]
      })
    )
