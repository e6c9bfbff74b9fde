/**
 * The stored logins: one JSON file of named profiles, `$XDG_CONFIG_HOME/sitehealth/config.json`
 * (else `~/.config/sitehealth/config.json`), directory mode 0700 and file mode 0600 because it holds
 * secrets. Plain node:fs, synchronous: it is read once per command and written by `auth login|logout`.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

export interface Profile {
  readonly baseUrl: string
  readonly token: string
}

export interface ProfileFile {
  readonly profiles: Record<string, Profile>
}

export const DEFAULT_PROFILE = "default"

/** XDG_CONFIG_HOME and HOME as read by platform/Settings.ts (trimmed; undefined when unset or blank). */
export interface ConfigHome {
  readonly xdgConfigHome: string | undefined
  readonly home: string | undefined
}

export const configDir = ({ home, xdgConfigHome }: ConfigHome): string => {
  const base = xdgConfigHome !== undefined && Path.isAbsolute(xdgConfigHome)
    ? xdgConfigHome
    : Path.join(home ?? Os.homedir(), ".config")
  return Path.join(base, "sitehealth")
}

export const configFile = (paths: ConfigHome): string => Path.join(configDir(paths), "config.json")

const isProfile = (u: unknown): u is Profile =>
  typeof u === "object" && u !== null && typeof (u as Profile).baseUrl === "string" &&
  typeof (u as Profile).token === "string"

/** The stored profiles; none when the file does not exist. A file we cannot read is an error, not "no login". */
export const readProfiles = (file: string): ProfileFile => {
  let text: string
  try {
    text = Fs.readFileSync(file, "utf8")
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { profiles: {} }
    throw new Error(`cannot read ${file}: ${(e as Error).message}`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new Error(`${file} is not valid JSON; fix or delete it (then run \`sitehealth auth login\`)`)
  }
  const raw = typeof parsed === "object" && parsed !== null ? (parsed as { profiles?: unknown }).profiles : undefined
  const profiles: Record<string, Profile> = {}
  if (typeof raw === "object" && raw !== null) {
    for (const [name, value] of Object.entries(raw)) {
      if (isProfile(value)) profiles[name] = { baseUrl: value.baseUrl, token: value.token }
    }
  }
  return { profiles }
}

/**
 * Writes the profiles: the directory is created 0700 (and tightened if it exists), the file written to a
 * temporary name with mode 0600 then renamed over the old one, so a crash never leaves a half-written
 * or briefly world-readable file.
 */
export const writeProfiles = (file: string, contents: ProfileFile): void => {
  const dir = Path.dirname(file)
  Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  Fs.chmodSync(dir, 0o700)
  const temporary = `${file}.${process.pid}.tmp`
  Fs.writeFileSync(temporary, `${JSON.stringify(contents, null, 2)}\n`, { mode: 0o600 })
  Fs.chmodSync(temporary, 0o600)
  Fs.renameSync(temporary, file)
}

export const saveProfile = (file: string, name: string, profile: Profile): void => {
  const current = readProfiles(file)
  writeProfiles(file, { profiles: { ...current.profiles, [name]: profile } })
}

/** Removes a profile; true when there was one. */
export const removeProfile = (file: string, name: string): boolean => {
  const current = readProfiles(file)
  if (!(name in current.profiles)) return false
  const { [name]: _removed, ...rest } = current.profiles
  writeProfiles(file, { profiles: rest })
  return true
}
