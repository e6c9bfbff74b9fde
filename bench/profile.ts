/**
 * Self time per function from a V8 .cpuprofile (what `node --cpu-prof` writes): every sample is charged
 * to the node on top of the stack for the time until the next sample, as DevTools does; nodes are grouped
 * by function name + file:line, so the same function reached through different stacks adds up.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}

interface CpuProfile {
  readonly nodes: ReadonlyArray<{ readonly id: number; readonly callFrame: CallFrame }>
  readonly startTime: number
  readonly endTime: number
  readonly samples?: ReadonlyArray<number>
  readonly timeDeltas?: ReadonlyArray<number>
}

export interface SelfTime {
  readonly functionName: string
  readonly location: string
  readonly selfMs: number
  /** Share of the whole profile. */
  readonly percent: number
  /** Share of the time not idle (null for the idle entry itself). */
  readonly busyPercent: number | null
}

export interface ProfileSummary {
  readonly file: string
  readonly totalMs: number
  readonly idleMs: number
  readonly top: ReadonlyArray<SelfTime>
}

/** file:///work/main/packages/x.ts → packages/x.ts; node_modules keeps the package's own path. */
const shortLocation = (url: string, line: number, root: string): string => {
  if (url === "") return "(native)"
  let path = url.startsWith("file://") ? decodeURIComponent(url.slice("file://".length)) : url
  const nm = path.lastIndexOf("/node_modules/")
  if (nm >= 0) path = path.slice(nm + 1)
  else if (path.startsWith(root + "/")) path = path.slice(root.length + 1)
  return `${path}:${line + 1}`
}

export const summariseProfile = (file: string, root: string, limit = 20): ProfileSummary => {
  const profile = JSON.parse(Fs.readFileSync(file, "utf8")) as CpuProfile
  const samples = profile.samples ?? []
  const deltas = profile.timeDeltas ?? []
  if (samples.length === 0) throw new Error(`${file}: the profile has no samples`)
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]))
  // Sample i happened at startTime + sum(deltas[0..i]) and lasts until the next sample (or endTime).
  const times: Array<number> = []
  let t = profile.startTime
  for (let i = 0; i < samples.length; i++) times.push(t += deltas[i] ?? 0)
  const selfUs = new Map<string, { functionName: string; location: string; us: number }>()
  let totalUs = 0
  let idleUs = 0
  for (let i = 0; i < samples.length; i++) {
    const us = Math.max(0, (i + 1 < times.length ? times[i + 1] : profile.endTime) - times[i])
    const frame = byId.get(samples[i])
    if (frame === undefined) continue
    const functionName = frame.functionName === "" ? "(anonymous)" : frame.functionName
    const location = shortLocation(frame.url, frame.lineNumber, root)
    const key = `${functionName}\u0000${location}`
    const entry = selfUs.get(key) ?? { functionName, location, us: 0 }
    entry.us += us
    selfUs.set(key, entry)
    totalUs += us
    if (functionName === "(idle)") idleUs += us
  }
  const busyUs = totalUs - idleUs
  const round1 = (n: number) => Math.round(n * 10) / 10
  const top = [...selfUs.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, limit)
    .map((e) => ({
      functionName: e.functionName,
      location: e.location,
      selfMs: round1(e.us / 1000),
      percent: totalUs === 0 ? 0 : round1((100 * e.us) / totalUs),
      busyPercent: e.functionName === "(idle)" || busyUs === 0 ? null : round1((100 * e.us) / busyUs)
    }))
  return { file, totalMs: round1(totalUs / 1000), idleMs: round1(idleUs / 1000), top }
}

const cell = (s: string) => s.replace(/\|/g, "\\|")

export const profileMarkdown = (s: ProfileSummary, root: string): string =>
  [
    `Top ${s.top.length} functions by self time — ${Path.relative(root, s.file)}`,
    `(total ${s.totalMs} ms sampled, of which idle ${s.idleMs} ms; "% busy" excludes idle)`,
    "",
    "| # | self ms | % total | % busy | function | location |",
    "|---:|---:|---:|---:|---|---|",
    ...s.top.map((e, i) =>
      `| ${i + 1} | ${e.selfMs} | ${e.percent} | ${e.busyPercent ?? "–"} | ${cell(e.functionName)} | ${
        cell(e.location)
      } |`
    )
  ].join("\n")

/** The newest .cpuprofile in `dir` written by process `pid` (node names them CPU.<date>.<time>.<pid>.…). */
export const findProfile = (dir: string, pid: number): string | null => {
  if (!Fs.existsSync(dir)) return null
  const mine = Fs.readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile") && f.split(".")[3] === String(pid))
    .map((f) => Path.join(dir, f))
    .sort((a, b) => Fs.statSync(b).mtimeMs - Fs.statSync(a).mtimeMs)
  return mine[0] ?? null
}
