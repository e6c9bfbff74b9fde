/**
 * Each API error class is its own wire schema: encoding one gives the exact envelope bytes the API has
 * always sent, decoding those bytes gives the class back, and its HTTP status is its annotation.
 */
import { describe, expect, it } from "@effect/vitest"
import { errorBody } from "@sitehealth/domain/Envelope"
import {
  API_ERRORS,
  BadRequest,
  Conflict,
  encodeApiError,
  Forbidden,
  httpStatusOf,
  IdempotencyKeyReused,
  InternalError,
  NotFound,
  notFound,
  PayloadTooLarge,
  RateLimited,
  TrialExpired,
  Unauthorized,
  Unavailable
} from "@sitehealth/domain/Errors"
import { Schema } from "effect"

const cases = [
  [
    new BadRequest({
      message: "Invalid request",
      type: "invalid_request",
      issues: [{ path: "body.amount", message: "Expected an integer" }]
    }),
    400,
    "{\"status\":\"error\",\"error\":{\"code\":400,\"message\":\"Invalid " +
    "request\",\"type\":\"invalid_request\",\"issues\":[{\"path\":\"body.amount\",\"message\":\"Expected an " +
    "integer\"}]}}"
  ],
  [
    Unauthorized.of("invalid_token"),
    401,
    "{\"status\":\"error\",\"error\":{\"code\":401,\"message\":\"Invalid or expired " +
    "token\",\"type\":\"invalid_token\"}}"
  ],
  [
    TrialExpired.of(),
    402,
    "{\"status\":\"error\",\"error\":{\"code\":\"trial_expired\",\"message\":\"Your trial or subscription has ended; " +
    "subscribe to continue using the API.\",\"type\":\"trial_expired\"}}"
  ],
  [
    new Forbidden({
      message: "Missing permission tokens:write",
      type: "missing_permission",
      permission: "tokens:write"
    }),
    403,
    "{\"status\":\"error\",\"error\":{\"code\":403,\"message\":\"Missing permission " +
    "tokens:write\",\"type\":\"missing_permission\",\"permission\":\"tokens:write\"}}"
  ],
  [
    notFound("Project prj_x"),
    404,
    "{\"status\":\"error\",\"error\":{\"code\":404,\"message\":\"Project prj_x not found\",\"type\":\"not_found\"}}"
  ],
  [
    new Conflict({ message: "A token cannot revoke itself", type: "self_revoke" }),
    409,
    "{\"status\":\"error\",\"error\":{\"code\":409,\"message\":\"A token cannot revoke " +
    "itself\",\"type\":\"self_revoke\"}}"
  ],
  [
    new PayloadTooLarge({ message: "Too large", type: "payload_too_large" }),
    413,
    "{\"status\":\"error\",\"error\":{\"code\":413,\"message\":\"Too large\",\"type\":\"payload_too_large\"}}"
  ],
  [
    IdempotencyKeyReused.of(),
    422,
    "{\"status\":\"error\",\"error\":{\"code\":422,\"message\":\"This Idempotency-Key was already used for a " +
    "different request (another body or endpoint); use a new key\",\"type\":\"idempotency_key_reused\"}}"
  ],
  [
    new RateLimited({
      message: "Rate limit exceeded",
      type: "rate_limited",
      limit: 60,
      remaining: 0,
      reset: 1700000000
    }),
    429,
    "{\"status\":\"error\",\"error\":{\"code\":429,\"message\":\"Rate limit " +
    "exceeded\",\"type\":\"rate_limited\",\"limit\":60,\"remaining\":0,\"reset\":1700000000}}"
  ],
  [
    new InternalError({ message: "Unexpected server error", type: "internal_error", requestId: "req_1" }),
    500,
    "{\"status\":\"error\",\"error\":{\"code\":500,\"message\":\"Unexpected server " +
    "error\",\"type\":\"internal_error\",\"requestId\":\"req_1\"}}"
  ],
  [
    new Unavailable({ message: "Database unavailable", type: "database_unavailable" }),
    503,
    "{\"status\":\"error\",\"error\":{\"code\":503,\"message\":\"Database " +
    "unavailable\",\"type\":\"database_unavailable\"}}"
  ]
] as const

describe("API errors on the wire", () => {
  it("the cases cover every error class", () => {
    expect(new Set(cases.map(([error]) => error._tag))).toEqual(new Set(API_ERRORS.map((E) => E.identifier)))
  })

  for (const [error, status, bytes] of cases) {
    it(`${error._tag}: the exact envelope bytes, back to the same class, status ${status}`, () => {
      const ErrorClass = API_ERRORS.find((E) => error instanceof E)!
      expect(JSON.stringify(Schema.encodeUnknownSync(ErrorClass)(error))).toBe(bytes)
      expect(httpStatusOf(ErrorClass)).toBe(status)
      expect(encodeApiError(error)).toEqual({ status, body: JSON.parse(bytes) })

      const decoded = Schema.decodeUnknownSync(ErrorClass)(JSON.parse(bytes))
      expect(decoded).toBeInstanceOf(ErrorClass)
      expect(decoded).toEqual(error)
      expect(JSON.stringify(Schema.encodeUnknownSync(ErrorClass)(decoded))).toBe(bytes)
    })
  }

  it("an envelope decodes only into the class its code names", () => {
    const body = JSON.parse(cases[4][2])
    expect(() => Schema.decodeUnknownSync(Forbidden)(body)).toThrow()
    expect(Schema.decodeUnknownSync(Schema.Union([Forbidden, NotFound]))(body)).toBeInstanceOf(NotFound)
    expect(() => Schema.decodeUnknownSync(NotFound)({ _tag: "NotFound", message: "m", type: "t" })).toThrow()
  })

  it("errorBody writes what the classes write, and leaves code out when there is none", () => {
    expect(JSON.stringify(errorBody(404, "Project prj_x not found", "not_found"))).toBe(cases[4][2])
    expect(JSON.stringify(errorBody(null, "m", "t"))).toBe(
      "{\"status\":\"error\",\"error\":{\"message\":\"m\",\"type\":\"t\"}}"
    )
    expect(encodeApiError(new Error("not an API error"))).toBeUndefined()
  })
})
