/**
 * The overview's narrow client API describes requests the server already answers: each of its endpoints is the
 * reports group's endpoint of the same name in DashboardApi (method, path with the prefix, schemas, errors,
 * middlewares: HttpApi's prefix and middlewares are carried by each endpoint). A change to the reports group that the
 * overview's copy missed fails here.
 */
import { describe, expect, it } from "@effect/vitest"
import { DashboardApi } from "@sitehealth/domain/DashboardApi"
import { DashboardOverviewHttpApi } from "@sitehealth/domain/DashboardOverview"

const endpointsOf = (
  api: { readonly groups: Record<string, { readonly endpoints: Record<string, unknown> }> },
  group: string
) =>
  api.groups[group]!.endpoints as Record<string, {
    readonly method: string
    readonly path: string
    readonly params: unknown
    readonly query: unknown
    readonly payload: unknown
    readonly success: unknown
    readonly error: ReadonlySet<unknown>
    readonly middlewares: ReadonlySet<unknown>
  }>

describe("DashboardOverviewHttpApi", () => {
  it("is three endpoints of DashboardApi's reports group, as the server serves them", () => {
    const overview = endpointsOf(DashboardOverviewHttpApi, "reports")
    const served = endpointsOf(DashboardApi, "reports")
    expect(Object.keys(overview).sort()).toEqual(["getBriefing", "listIntegrations", "listProjects"])
    for (const [name, endpoint] of Object.entries(overview)) {
      const twin = served[name]!
      expect(twin, name).toBeDefined()
      expect([endpoint.method, endpoint.path], name).toEqual([twin.method, twin.path])
      // The very schemas (not look-alikes): the copy is made from the same /api/v1 endpoint.
      expect(endpoint.params, name).toBe(twin.params)
      expect(endpoint.query, name).toBe(twin.query)
      expect(endpoint.payload, name).toBe(twin.payload)
      expect(endpoint.success, name).toBe(twin.success)
      expect([...endpoint.error], name).toEqual([...twin.error])
      expect([...endpoint.middlewares], name).toEqual([...twin.middlewares])
    }
  })
})
