/**
 * Request fuzzing for the contract suite: every endpoint of the HttpApi (found by reflection, never listed
 * by hand), valid requests generated from the endpoint's own Effect schemas, and hostile mutations of them.
 *
 * Valid values come from `effect/Arbitrary` (Effect 4's own schema-derived generator; it does not hand out
 * fast-check arbitraries), wrapped as a fast-check arbitrary by its seed and size, then encoded with the same
 * schema to their wire form. fast-check chooses that seed, the mutations and their inputs: one fast-check
 * seed reproduces the whole request sequence.
 */
import { PROVIDERS } from "@sitehealth/domain/Integrations"
import { Arbitrary, Effect, Schema, type SchemaAST } from "effect"
import { HttpApi, type HttpApiGroup } from "effect/http-api"
import fc from "fast-check"

// ---------------------------------------------------------------------------------------------------------
// Raw JSON: body text that JSON.stringify cannot produce (NaN, -0, 1e400, 10k-deep nesting, bad syntax).

const RAW: unique symbol = Symbol("raw json")
export interface Raw {
  readonly [RAW]: string
}
export const raw = (text: string): Raw => ({ [RAW]: text })
const isRaw = (u: unknown): u is Raw => typeof u === "object" && u !== null && RAW in u

/** JSON text of a value that may contain `Raw` pieces (kept verbatim). */
export const toJsonText = (value: unknown): string => {
  if (isRaw(value)) return value[RAW]
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(",")}]`
  if (typeof value === "object" && value !== null) {
    return `{${Object.keys(value).map((k) => `${JSON.stringify(k)}:${toJsonText((value as any)[k])}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/** Sets an own enumerable key, even `__proto__` (plain assignment would replace the prototype instead). */
const defineKey = (target: object, key: string, value: unknown) =>
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })

const copyObject = (value: object): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(value)) defineKey(out, k, (value as any)[k])
  return out
}

/**
 * Percent-encodes every code unit sequence, lone surrogates included (as their WTF-8 bytes, which is not
 * valid UTF-8 — exactly what a hostile client can send and `encodeURIComponent` refuses to produce).
 */
export const percentEncode = (s: string): string => {
  let out = ""
  for (const ch of s) {
    if (/^[A-Za-z0-9\-_.~]$/.test(ch)) {
      out += ch
      continue
    }
    const cp = ch.codePointAt(0)!
    const bytes = cp < 0x80
      ? [cp]
      : cp < 0x800
      ? [0xc0 | (cp >> 6), 0x80 | (cp & 63)]
      : cp < 0x10000
      ? [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)]
      : [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)]
    for (const b of bytes) out += `%${b.toString(16).toUpperCase().padStart(2, "0")}`
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------
// Schema-derived arbitraries

/** A fast-check arbitrary of the encoded (wire) form of values generated from an Effect schema. */
export const fromSchema = (schema: Schema.Top): fc.Arbitrary<unknown> => {
  const derived = Arbitrary.schema(schema as Schema.Codec<unknown, unknown>)
  const encode = Schema.encodeUnknownSync(schema as Schema.Codec<unknown, unknown>)
  return fc.tuple(fc.integer({ min: 0, max: 0x7fffffff }), fc.integer({ min: 0, max: 40 })).map(([seed, size]) => {
    const [value] = Effect.runSync(Arbitrary.sampleEffect(derived, { count: 1, seed, size }))
    return encode(value)
  })
}

/** What the contract says about one endpoint, read from the HttpApi itself. */
export interface EndpointSpec {
  readonly name: string
  readonly method: string
  /** With the API prefix, e.g. `/api/v1/projects/:id/expenses/:expenseId`. */
  readonly path: string
  /** Each path parameter and the collection it names (the path segment before it: projects, expenses…). */
  readonly params: ReadonlyArray<{ readonly name: string; readonly collection: string }>
  readonly paramsSchema: Schema.Top | undefined
  readonly query: Schema.Top | undefined
  readonly payload: Schema.Top | undefined
  /** The body's own top-level field names (a mass-assignment name that is one of them is a real field). */
  readonly payloadFields: ReadonlySet<string>
}

export const fieldNames = (ast: SchemaAST.AST): Array<string> =>
  ast._tag === "Objects"
    ? ast.propertySignatures.map((p) => String(p.name))
    : ast._tag === "Union"
    ? ast.types.flatMap(fieldNames)
    : []

export const endpointsOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): ReadonlyArray<EndpointSpec> => {
  const out: Array<EndpointSpec> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const segments = endpoint.path.split("/")
      const params = segments.flatMap((s, i) =>
        s.startsWith(":") ? [{ name: s.slice(1), collection: segments[i - 1] }] : []
      )
      const payloads = [...endpoint.payload.values()].flatMap((p) => p.schemas as ReadonlyArray<Schema.Top>)
      const payloadFields = new Set(payloads.flatMap((schema) => fieldNames(schema.ast)))
      out.push({
        name: endpoint.identifier,
        method: endpoint.method,
        path: endpoint.path,
        params,
        paramsSchema: endpoint.params,
        query: endpoint.query,
        payload: payloads.length === 0
          ? undefined
          : payloads.length === 1
          ? payloads[0]
          : Schema.Union(payloads as [Schema.Top, Schema.Top]),
        payloadFields
      })
    }
  })
  return out
}

// ---------------------------------------------------------------------------------------------------------
// Hostile inputs

const DEEP = 10_000
export const MB = 1024 * 1024

/** Named so a failure says which one; `value` is a JSON value or Raw. */
export const HOSTILE_VALUES: ReadonlyArray<readonly [string, unknown]> = [
  ["empty string", ""],
  ["spaces", "   "],
  ["NUL", "\u0000"],
  ["NUL inside", "a\u0000b"],
  ["lone high surrogate", "\ud800"],
  ["lone low surrogate", "x\udfffy"],
  ["RTL override", "\u202egnp.exe"],
  ["BOM", "\ufeffhosting"],
  ["emoji ZWJ", "👩‍👩‍👧‍👦"],
  ["astral", "𝕏𝕐"],
  ["combining", "e\u0301\u0301\u0301"],
  ["newlines", "a\r\nb\n"],
  ["quote injection", "' OR '1'='1"],
  ["statement injection", "1; DROP TABLE expenses; --"],
  ["template", "${7*7}{{7*7}}%s%n"],
  ["html", "<script>alert(1)</script>"],
  ["path", "../../etc/passwd"],
  ["60k string", "x".repeat(60_000)],
  ["60k string in an array", ["x".repeat(60_000)]],
  ["60k unicode", "é😀".repeat(20_000)],
  ["1MB string", "y".repeat(MB)],
  ["zero", 0],
  ["minus one", -1],
  ["negative zero", raw("-0")],
  ["half", 0.5],
  ["1.0", raw("1.0")],
  ["min value", Number.MIN_VALUE],
  ["2^53+1", raw("9007199254740993")],
  ["1e308", 1e308],
  ["-1e308", -1e308],
  ["1e400", raw("1e400")],
  ["NaN", raw("NaN")],
  ["Infinity", raw("Infinity")],
  ["-Infinity", raw("-Infinity")],
  ["hex", raw("0x10")],
  ["leading zero", raw("012")],
  ["over the max amount", 100_000_000_001],
  ["true", true],
  ["false", false],
  ["null", null],
  ["empty array", []],
  ["array", [1, "a", null]],
  ["empty object", {}],
  ["object", { a: 1 }],
  ["proto object", JSON.parse("{\"__proto__\":{\"admin\":true}}")],
  ["deep array", raw("[".repeat(DEEP) + "]".repeat(DEEP))],
  ["deep object", raw("{\"a\":".repeat(DEEP) + "1" + "}".repeat(DEEP))]
]

/** Whole bodies, sent verbatim. */
export const HOSTILE_BODIES: ReadonlyArray<readonly [string, string]> = [
  ["empty", ""],
  ["bad JSON", "{not json"],
  ["trailing comma", "{\"a\":1,}"],
  ["missing comma", "{\"mode\":\"full\" \"x\":2}"],
  ["truncated", "{\"amount\":"],
  ["single quotes", "{'mode':'full'}"],
  ["null", "null"],
  ["array", "[]"],
  ["string", "\"full\""],
  ["number", "1"],
  ["NaN", "NaN"],
  ["NUL", "\u0000"],
  ["BOM then JSON", "\ufeff{}"],
  ["duplicate keys", "{\"confirm\":false,\"confirm\":true}"],
  ["deep array", "[".repeat(DEEP) + "]".repeat(DEEP)],
  ["deep object", "{\"a\":".repeat(DEEP) + "1" + "}".repeat(DEEP)],
  ["unclosed deep", "[".repeat(DEEP)],
  // As deep as fits under the 64 KiB body cap: 32k levels.
  ["deepest array under the cap", "[".repeat(32_000) + "]".repeat(32_000)],
  ["deepest object under the cap", "{\"a\":".repeat(9_000) + "1" + "}".repeat(9_000)],
  ["1MB JSON", JSON.stringify({ description: "z".repeat(MB) })],
  ["1MB garbage", "#".repeat(MB)]
]

export const HOSTILE_CONTENT_TYPES: ReadonlyArray<string> = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "application/json; charset=latin1",
  "APPLICATION/JSON",
  "application/merge-patch+json",
  "application/json, text/plain",
  ""
]

/** Idempotency-Key values: a few reused ones (so replays and 422 reuse happen) and invalid ones. */
export const IDEMPOTENCY_KEYS: ReadonlyArray<string> = [
  "fuzz-key-0",
  "fuzz-key-1",
  "fuzz-key-2",
  "",
  " ",
  "k".repeat(255),
  "k".repeat(256),
  "k".repeat(10_000),
  "caf\u00e9",
  "tab\there",
  "del\u007f",
  "' OR '1'='1",
  "../../x"
]

/** Other headers a client may send, none of which may matter or break anything. */
export const ODD_HEADERS: ReadonlyArray<Readonly<Record<string, string>>> = [
  { "content-encoding": "gzip" },
  { "content-encoding": "br, identity" },
  { accept: "text/html" },
  { accept: "application/xml;q=1, */*;q=0" },
  { "x-http-method-override": "DELETE" },
  { "x-forwarded-for": "' OR 1=1 --, 999.999.999.999" },
  { "x-forwarded-host": "evil.example" },
  { origin: "https://evil.example" },
  { cookie: "session=\u00ff\u00fe" },
  { "if-none-match": "*" },
  { range: "bytes=0-1" },
  { expect: "100-continue" }
]

/** Methods the API does not use on any path. */
// (TRACE and CONNECT cannot be sent through fetch at all.)
export const FOREIGN_METHODS: ReadonlyArray<string> = ["PUT", "PATCH", "OPTIONS", "FOO"]

/** Path segments, already in URL form. */
export const HOSTILE_SEGMENTS: ReadonlyArray<string> = [
  "..",
  "%2e%2e",
  "..%2f..%2ftokens",
  "%2F",
  "a%2Fb",
  "%252F",
  "%C0%AF",
  "%5C..%5C",
  "%00",
  "prj_%00",
  "%zz",
  "%",
  "%ED%A0%80",
  "%E2%80%AE",
  "%F0%9F%92%A9",
  "%20",
  "%0D%0ASet-Cookie:%20x=1",
  "'%20OR%20'1'='1",
  "*",
  "prj_*",
  "x".repeat(10_000),
  `prj_${"A".repeat(65)}`,
  "p".repeat(MB)
]

const encodeJson = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")
const cursorOf = (ms: number, id: string) => encodeJson([ms, id])

/** Query strings, already in URL form, replacing the whole query. */
export const HOSTILE_QUERIES: ReadonlyArray<string> = [
  "limit=0",
  "limit=101",
  "limit=-1",
  "limit=1e2",
  "limit=NaN",
  "limit=%00",
  `limit=${"9".repeat(400)}`,
  "limit=1&limit=2",
  "limit[]=5",
  "limit[a]=5",
  "cursor=%ff%fe",
  "cursor=%ED%A0%80",
  `cursor=${"c".repeat(10_000)}`,
  "cursor=eyJhIjoxfQ",
  "cursor=WyIyMDI2LTAxLTAxVDAwOjAwOjAwWiIsInByal8xIl0",
  // Well-formed cursors ([createdAt ms, id]) whose instant is no Date, or one Postgres cannot read.
  `cursor=${cursorOf(9_007_199_254_740_991, "tok_AAAA")}`,
  `cursor=${cursorOf(-9_007_199_254_740_991, "exp_AAAA")}`,
  `cursor=${cursorOf(8_640_000_000_000_001, "prj_AAAA")}`,
  `cursor=${cursorOf(8_640_000_000_000_000, "tok_AAAA")}`,
  `cursor=${cursorOf(-8_640_000_000_000_000, "exp_AAAA")}`,
  `cursor=${cursorOf(253_402_300_800_000, "prj_AAAA")}`,
  `cursor=${cursorOf(-62_198_755_200_001, "tok_AAAA")}`,
  // Well-formed signal cursors ([active 0|1, severity rank, -instant ms, id]) with extreme integers.
  `cursor=${encodeJson([0, 9_007_199_254_740_991, -9_007_199_254_740_991, "sig_AAAA"])}`,
  `cursor=${encodeJson([1, -9_007_199_254_740_991, 9_007_199_254_740_991, "sig_AAAA"])}`,
  `cursor=${encodeJson([0, 2_147_483_648, -2_147_483_649, "sig_AAAA"])}`,
  "period=5y",
  "period=all&period=7d",
  "period=%00",
  "confirm=TRUE",
  "confirm=1",
  "active=yes",
  "severity=%E2%80%AE",
  "%zz=1",
  "=",
  "&&&",
  "a=%",
  "__proto__=1&constructor=1",
  `q=${"q".repeat(MB)}`
]

/** Fields a client must not be able to set: refused (unknown field) or ignored, never applied. */
export const MASS_ASSIGNMENT: ReadonlyArray<readonly [string, unknown]> = [
  ["accountId", "acc_AAAAAAAAAAAAAAAA"],
  ["id", "exp_AAAAAAAAAAAAAAAA"],
  ["projectId", "prj_AAAAAAAAAAAAAAAA"],
  ["permissions", ["tokens:write"]],
  ["status", "revoked"],
  ["createdAt", "2001-01-01T00:00:00.000Z"],
  ["deletedAt", "2001-01-01T00:00:00.000Z"],
  ["revokedAt", null],
  ["secret", "svc_x"],
  ["admin", true],
  ["__proto__", { admin: true }],
  ["constructor", { prototype: { admin: true } }]
]

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...HOSTILE_VALUES).map(([, v]) => v) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.double().map((d) => Number.isFinite(d) ? d : raw(String(d))) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map((b) => raw(b.toString())) }
)

// ---------------------------------------------------------------------------------------------------------
// Requests

/** Names something that exists when the request is sent (ids are only known then), or raw text. */
export type Segment =
  | {
    readonly kind: "ref"
    readonly ref: "own" | "own2" | "foreign" | "victim" | "self" | "pathExpense" | "provider"
    readonly n: number
  }
  | { readonly kind: "raw"; readonly text: string }

export type BodyOp =
  | { readonly op: "drop"; readonly i: number }
  | { readonly op: "extra"; readonly key: string; readonly value: unknown }
  | { readonly op: "replace"; readonly i: number; readonly value: unknown }
  | { readonly op: "substitute"; readonly i: number; readonly n: number }

export type Body =
  | { readonly kind: "none" }
  | { readonly kind: "json"; readonly value: unknown; readonly ops: ReadonlyArray<BodyOp> }
  | { readonly kind: "raw"; readonly text: string }

export type Query =
  | { readonly kind: "pairs"; readonly pairs: ReadonlyArray<readonly [string, string]> }
  | { readonly kind: "raw"; readonly text: string }

export interface Draft {
  /** undefined: the endpoint's own method. */
  readonly method: string | undefined
  readonly params: Readonly<Record<string, Segment>>
  readonly query: Query
  readonly body: Body
  /** undefined: application/json whenever there is a body. */
  readonly contentType: string | undefined
  /** Send Content-Length (the server can refuse an oversized body before reading it). */
  readonly contentLength: boolean
  readonly idempotencyKey: string | undefined
  readonly headers: Readonly<Record<string, string>>
  /** Send it twice (a retry): with an Idempotency-Key, the second is a replay or a fresh run. */
  readonly repeat: boolean
}

export interface World {
  readonly projects: ReadonlyArray<string>
  readonly foreignProject: string
  /** Expenses seeded in each own project (some get deleted along the way). */
  readonly expenses: ReadonlyMap<string, ReadonlyArray<string>>
  readonly foreignExpense: string
  /** Own tokens the fuzz may revoke. */
  readonly victims: ReadonlyArray<string>
  readonly selfToken: string
  readonly foreignToken: string
  readonly nowIso: string
}

/** Strings worth trying wherever a string goes: ids that exist (own or foreign), instants, near-misses. */
const interestingStrings = (world: World): ReadonlyArray<string> => [
  ...world.projects,
  world.foreignProject,
  world.foreignExpense,
  world.foreignToken,
  world.selfToken,
  ...world.victims,
  world.nowIso,
  "2030-01-01T00:00:00Z",
  "2030-01-01T00:00:00+02:00",
  "2001-01-01T00:00:00Z",
  "2030-01-01T00:00",
  "9999-12-31T23:59:59.999Z",
  "2026-02-29",
  "1899-12-31",
  "3000-01-01",
  "XXX",
  "usd",
  "stripe",
  "tokens:write",
  "projects:read"
]

const segmentFor = (
  spec: EndpointSpec,
  param: { readonly name: string; readonly collection: string }
): fc.Arbitrary<Segment> => {
  const hostile = {
    weight: 2,
    arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS).map((text): Segment => ({ kind: "raw", text }))
  }
  // The contract's own schema for the parameter: any string, percent-encoded whatever it holds.
  const fromContract = spec.paramsSchema === undefined
    ? []
    : [{
      weight: 1,
      arbitrary: fromSchema(spec.paramsSchema).map((p): Segment => ({
        kind: "raw",
        text: percentEncode(String((p as any)[param.name]))
      }))
    }]
  const ref = (ref: Extract<Segment, { kind: "ref" }>["ref"], weight: number) => ({
    weight,
    arbitrary: fc.nat().map((n): Segment => ({ kind: "ref", ref, n }))
  })
  switch (param.collection) {
    case "projects":
      return fc.oneof(ref("own", 8), ref("own2", 2), ref("foreign", 2), hostile, ...fromContract)
    case "expenses":
      return fc.oneof(ref("pathExpense", 6), ref("foreign", 2), hostile, ...fromContract)
    case "tokens":
      return fc.oneof(ref("victim", 5), ref("self", 1), ref("foreign", 2), hostile, ...fromContract)
    case "integrations":
      return fc.oneof(ref("provider", 8), hostile, ...fromContract)
    default:
      return fc.oneof(hostile, ...fromContract)
  }
}

const queryFor = (spec: EndpointSpec): fc.Arbitrary<Query> => {
  const base: fc.Arbitrary<Array<readonly [string, string]>> = spec.query === undefined
    ? fc.constant([])
    : fromSchema(spec.query).map((q) =>
      Object.entries(q as Record<string, string>).map(([k, v]) => [k, percentEncode(v)] as const)
    )
  const hostileQueryValue = fc.oneof(
    fc.constantFrom(...HOSTILE_QUERIES).map((q) => q.split("=").slice(1).join("=")),
    fc.string({ unit: "binary", maxLength: 30 }).map(percentEncode)
  )
  const mutated = fc.tuple(
    base,
    fc.nat(),
    hostileQueryValue,
    fc.constantFrom("limit", "cursor", "period", "confirm", "x", "__proto__")
  )
    .map(([pairs, i, value, key]): Query => {
      if (pairs.length === 0) return { kind: "pairs", pairs: [[key, value]] }
      const out = [...pairs]
      out[i % out.length] = [out[i % out.length][0], value]
      return { kind: "pairs", pairs: out }
    })
  return fc.oneof(
    { weight: 6, arbitrary: base.map((pairs): Query => ({ kind: "pairs", pairs })) },
    { weight: 2, arbitrary: mutated },
    { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_QUERIES).map((text): Query => ({ kind: "raw", text })) }
  )
}

const bodyOp: fc.Arbitrary<BodyOp> = fc.oneof(
  fc.nat().map((i): BodyOp => ({ op: "drop", i })),
  fc.oneof(
    fc.constantFrom(...MASS_ASSIGNMENT).map(([key, value]): BodyOp => ({ op: "extra", key, value })),
    fc.tuple(fc.string({ maxLength: 12 }), hostileValue).map(([key, value]): BodyOp => ({ op: "extra", key, value }))
  ),
  fc.tuple(fc.nat(), hostileValue).map(([i, value]): BodyOp => ({ op: "replace", i, value })),
  fc.tuple(fc.nat(), fc.nat()).map(([i, n]): BodyOp => ({ op: "substitute", i, n }))
)

const bodyFor = (spec: EndpointSpec): fc.Arbitrary<Body> => {
  const hostileBody = fc.constantFrom(...HOSTILE_BODIES).map(([, text]): Body => ({ kind: "raw", text }))
  if (spec.payload === undefined) {
    // Endpoints without a body: usually none, sometimes junk that must be ignored or refused.
    return fc.oneof({ weight: 8, arbitrary: fc.constant<Body>({ kind: "none" }) }, {
      weight: 1,
      arbitrary: hostileBody
    })
  }
  return fc.oneof(
    { weight: 3, arbitrary: fromSchema(spec.payload).map((value): Body => ({ kind: "json", value, ops: [] })) },
    {
      weight: 5,
      arbitrary: fc.tuple(fromSchema(spec.payload), fc.array(bodyOp, { minLength: 1, maxLength: 3 }))
        .map(([value, ops]): Body => ({ kind: "json", value, ops }))
    },
    { weight: 2, arbitrary: hostileBody },
    { weight: 1, arbitrary: fc.constant<Body>({ kind: "none" }) }
  )
}

export const draftFor = (spec: EndpointSpec): fc.Arbitrary<Draft> =>
  fc.record({
    method: fc.oneof({ weight: 30, arbitrary: fc.constant(undefined) }, {
      weight: 1,
      arbitrary: fc.constantFrom(...FOREIGN_METHODS)
    }),
    params: fc.record(Object.fromEntries(spec.params.map((p) => [p.name, segmentFor(spec, p)]))) as fc.Arbitrary<
      Record<string, Segment>
    >,
    query: queryFor(spec),
    body: bodyFor(spec),
    contentType: fc.oneof(
      { weight: 12, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_CONTENT_TYPES) }
    ),
    contentLength: fc.boolean(),
    idempotencyKey: fc.oneof(
      { weight: spec.method === "POST" ? 6 : 24, arbitrary: fc.constant(undefined) },
      // Fresh keys (a retry of the same request replays), a few shared ones (reuse with another body: 422), junk.
      { weight: 2, arbitrary: fc.nat().map((n) => `fuzz-${n}`) },
      { weight: 1, arbitrary: fc.constantFrom(...IDEMPOTENCY_KEYS) }
    ),
    headers: fc.oneof({ weight: 12, arbitrary: fc.constant({}) }, {
      weight: 1,
      arbitrary: fc.constantFrom(...ODD_HEADERS)
    }),
    repeat: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })
  })

/** Applies body mutations to the encoded value (a copy); the result is what goes on the wire. */
export const applyOps = (value: unknown, ops: ReadonlyArray<BodyOp>, world: World): unknown => {
  let current = value
  for (const op of ops) {
    if (typeof current !== "object" || current === null || Array.isArray(current) || isRaw(current)) {
      // A null body (allowed by some endpoints) becomes an object so there is something to mutate.
      current = {}
    }
    const obj = copyObject(current as object)
    const keys = Object.keys(obj)
    switch (op.op) {
      case "drop":
        if (keys.length > 0) delete obj[keys[op.i % keys.length]]
        break
      case "extra":
        defineKey(obj, op.key, op.value)
        break
      case "replace":
        if (keys.length > 0) defineKey(obj, keys[op.i % keys.length], op.value)
        break
      case "substitute": {
        const pool = interestingStrings(world)
        const text = pool[op.n % pool.length]
        if (keys.length === 0) break
        const key = keys[op.i % keys.length]
        const old = obj[key]
        // A string array (projects, permissions) gets the string as an element; anything else is replaced.
        defineKey(obj, key, Array.isArray(old) ? [...old.slice(0, 2), text] : text)
        break
      }
    }
    current = obj
  }
  return current
}

export interface Sent {
  readonly method: string
  readonly path: string
  /** Resolved path parameter values (URL form) by name. */
  readonly params: Readonly<Record<string, string>>
  readonly bodyText: string | undefined
  /** The JSON value sent (after mutations), when the body was built from a value. */
  readonly bodyValue: unknown
  readonly headers: Record<string, string>
  readonly description: string
}

const resolveSegment = (segment: Segment, collection: string, world: World, params: Record<string, string>): string => {
  if (segment.kind === "raw") return segment.text
  const pick = <A>(xs: ReadonlyArray<A>) => xs[segment.n % xs.length]
  switch (segment.ref) {
    case "own":
      return world.projects[0]
    case "own2":
      return pick(world.projects)
    case "foreign":
      // The other account's object of the collection the parameter names.
      return collection === "expenses"
        ? world.foreignExpense
        : collection === "tokens"
        ? world.foreignToken
        : world.foreignProject
    case "victim":
      return pick(world.victims)
    case "self":
      return world.selfToken
    case "pathExpense": {
      const own = world.expenses.get(params.id) ?? []
      return own.length > 0 ? pick(own) : world.foreignExpense
    }
    case "provider":
      return pick(PROVIDERS)
  }
}

/** Turns a draft into the concrete request, resolving references against what exists now. */
export const materialize = (spec: EndpointSpec, draft: Draft, world: World): Sent => {
  const params: Record<string, string> = {}
  for (const p of spec.params) {
    params[p.name] = resolveSegment(draft.params[p.name], p.collection, world, params)
  }
  const path = spec.params.reduce((acc, p) => acc.replace(`:${p.name}`, params[p.name]), spec.path)
  const queryText = draft.query.kind === "raw"
    ? draft.query.text
    : draft.query.pairs.map(([k, v]) => `${percentEncode(k)}=${v}`).join("&")
  const method = draft.method ?? spec.method
  let bodyText: string | undefined
  let bodyValue: unknown = undefined
  // A GET cannot carry a body through fetch's Request (nor, in practice, through proxies): none is sent.
  if (method === "GET") bodyText = undefined
  else if (draft.body.kind === "raw") bodyText = draft.body.text
  else if (draft.body.kind === "json") {
    bodyValue = applyOps(draft.body.value, draft.body.ops, world)
    bodyText = toJsonText(bodyValue)
  }
  const headers: Record<string, string> = { ...draft.headers }
  if (draft.idempotencyKey !== undefined) headers["idempotency-key"] = draft.idempotencyKey
  if (bodyText !== undefined) {
    headers["content-type"] = draft.contentType ?? "application/json"
    if (draft.contentLength) headers["content-length"] = String(Buffer.byteLength(bodyText))
  } else if (draft.contentType !== undefined) {
    headers["content-type"] = draft.contentType
  }
  const fullPath = queryText === "" ? path : `${path}?${queryText}`
  const short = (s: string) => s.length > 200 ? `${s.slice(0, 200)}…(${s.length} chars)` : s
  return {
    method,
    path: fullPath,
    params,
    bodyText,
    bodyValue,
    headers,
    description: `${method} ${short(fullPath)} ${short(JSON.stringify(headers))} body=${
      bodyText === undefined ? "none" : short(bodyText)
    }`
  }
}

// ---------------------------------------------------------------------------------------------------------
// What every response must be

/**
 * Stack frames, source paths, SQL and driver messages, internal error names: none may reach a client.
 * (No unbounded `\w*` before a literal: on a 1 MB echoed input that backtracks for hours.)
 */
export const LEAKS: ReadonlyArray<readonly [string, RegExp]> = [
  ["stack frame", /\bat [^\s()]{1,200} \(/],
  ["source position", /\.[jt]s:\d+/],
  ["file path", /node_modules|\/work\/|\/home\/|\/usr\/|file:\/\//],
  ["internal error name", /\bError\b|[A-Z][A-Za-z]{0,40}(?:Error|Exception)\b|FiberFailure|\bDefect\b/],
  [
    "SQL or driver message",
    /syntax error at|relation "|violates [a-z_ ]{0,40}constraint|duplicate key|invalid input syntax|invalid byte sequence|pg_catalog/
  ],
  ["stack property", /"stack"/]
]

export const leakIn = (text: string): string | null => {
  for (const [what, pattern] of LEAKS) {
    const match = text.match(pattern)
    if (match !== null) return `${what} ${JSON.stringify(match[0])}`
  }
  return null
}

export const MAX_ERROR_MESSAGE = 1_500
export const MAX_ERROR_BODY = 8_192

/** The reason a response breaks the contract, or null. */
export const violation = (status: number, text: string, json: any): string | null => {
  if (status >= 500) return `status ${status}`
  if (status < 200) return `status ${status}`
  if (typeof json !== "object" || json === null || Array.isArray(json)) return "body is not a JSON object"
  const leak = leakIn(text)
  if (leak !== null) return `leak: ${leak}`
  const keys = Object.keys(json).sort().join(",")
  if (status < 300) {
    if (keys !== "data,status" || json.status !== "success") return "not a success envelope"
    if (typeof json.data !== "object" || json.data === null || Array.isArray(json.data)) return "data is not an object"
    return null
  }
  if (keys !== "error,status" || json.status !== "error") return "not an error envelope"
  const error = json.error
  if (typeof error !== "object" || error === null) return "error is not an object"
  if (error.code !== (status === 402 ? "trial_expired" : status)) {
    return `error.code ${JSON.stringify(error.code)} ≠ ${status}`
  }
  if (typeof error.message !== "string" || error.message.length === 0) return "error.message missing"
  if (typeof error.type !== "string" || error.type.length === 0) return "error.type missing"
  // An error is read by people and agents (the MCP tools hand it to a model): it quotes input, never all of it.
  if (error.message.length > MAX_ERROR_MESSAGE) return `error.message is ${error.message.length} characters`
  if (text.length > MAX_ERROR_BODY) return `the error body is ${text.length} characters`
  return null
}

/**
 * A fuzz suite's budget from the environment: FUZZ_RUNS generated requests per endpoint (else `defaultRuns`) and
 * FUZZ_SEED (else `defaultSeed`, fixed so `npm test` is reproducible; `random` explores new inputs each run).
 */
export const fuzzBudget = (
  defaultRuns: number,
  defaultSeed: number
): { readonly runs: number; readonly seed: number } => {
  const runs = Number(process.env.FUZZ_RUNS ?? defaultRuns)
  const seed = process.env.FUZZ_SEED === undefined
    ? defaultSeed
    : process.env.FUZZ_SEED === "random"
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.FUZZ_SEED)
  if (!Number.isSafeInteger(seed)) {
    throw new Error(`FUZZ_SEED must be an integer or "random", not ${process.env.FUZZ_SEED}`)
  }
  if (!(Number.isSafeInteger(runs) && runs >= 0)) {
    throw new Error(`FUZZ_RUNS must be a whole number, not ${process.env.FUZZ_RUNS}`)
  }
  return { runs, seed }
}
