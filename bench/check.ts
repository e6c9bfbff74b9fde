/**
 * Before anything is measured: the peers must answer exactly what ours answers — same status, same
 * `data` — for the same token and project, or the comparison would not be of the same work.
 */
import { generateSecret } from "@sitehealth/server/store/TokenSecret"
import { isDeepStrictEqual } from "node:util"

interface Answer {
  readonly status: number
  readonly json: any
}

const get = async (base: string, path: string, token: string): Promise<Answer> => {
  const res = await fetch(base + path, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(60_000)
  })
  const text = await res.text()
  let json: unknown = null
  try {
    json = JSON.parse(text)
  } catch {
    json = text
  }
  return { status: res.status, json }
}

/** The first path where two JSON values differ, for a message a person can act on. */
export const firstDifference = (a: unknown, b: unknown, path = "data"): string | null => {
  if (isDeepStrictEqual(a, b)) return null
  if (
    typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b)
  ) {
    return `${path}: ${JSON.stringify(a)?.slice(0, 200)} vs ${JSON.stringify(b)?.slice(0, 200)}`
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  for (const k of keys) {
    const d = firstDifference((a as any)[k], (b as any)[k], Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`)
    if (d !== null) return d
  }
  return `${path}: differs`
}

/**
 * Every project with one token and every token with one project, plus an unknown token (401) and an
 * unknown project (404). Ours is asked first: it computes a missing snapshot that the peers then read.
 * Returns how many cases were compared; throws with the first mismatch.
 */
export const checkPeersAgree = async (
  ours: string,
  peers: ReadonlyArray<{ readonly name: string; readonly base: string }>,
  tokens: ReadonlyArray<string>,
  projectIds: ReadonlyArray<string>
): Promise<number> => {
  const cases: Array<{ path: string; token: string; expect: number }> = []
  const n = Math.max(tokens.length, projectIds.length)
  for (let i = 0; i < n; i++) {
    cases.push({
      path: `/api/v1/projects/${projectIds[i % projectIds.length]}/health`,
      token: tokens[i % tokens.length],
      expect: 200
    })
  }
  cases.push({ path: `/api/v1/projects/${projectIds[0]}/health`, token: generateSecret(), expect: 401 })
  cases.push({ path: "/api/v1/projects/prj_0000000000000000/health", token: tokens[0], expect: 404 })
  for (const c of cases) {
    const mine = await get(ours, c.path, c.token)
    if (mine.status !== c.expect) {
      throw new Error(
        `our server answered ${mine.status} to GET ${c.path} (expected ${c.expect}): ${
          JSON.stringify(mine.json).slice(0, 300)
        }`
      )
    }
    for (const peer of peers) {
      const theirs = await get(peer.base, c.path, c.token)
      if (theirs.status !== mine.status) {
        throw new Error(
          `the ${peer.name} peer answered ${theirs.status} where ours answered ${mine.status} to GET ${c.path}: ` +
            JSON.stringify(theirs.json).slice(0, 300)
        )
      }
      if (mine.status === 200) {
        const diff = firstDifference(mine.json?.data, theirs.json?.data)
        if (diff !== null) throw new Error(`the ${peer.name} peer's data differs from ours for GET ${c.path}: ${diff}`)
      }
    }
  }
  return cases.length
}
