/**
 * Password strength for the dashboard's accounts beyond the length the domain enforces (12–256 characters,
 * `PASSWORD_MIN_LENGTH`): OWASP ASVS 2.1.7, "passwords submitted are checked against a set of breached
 * passwords", with no network call. The list is bundled: the `passwords-common` dictionary of
 * `@zxcvbn-ts/language-common` (pinned in package.json), the most common passwords of public breach corpora,
 * ranked, lower-case, shipped compressed inside the package and decompressed when its module is evaluated.
 *
 * The list is loaded lazily, once, on the first check (a dynamic `import()`: the bundle puts it in a chunk of its
 * own, so the server does not load it at start-up, where its resident memory is measured), into a `Set`.
 * Version 4.1.3 holds 49,233 entries; only those of 6 characters or more are kept: 42,692 (see `MIN_ENTRY_LENGTH`).
 * Measured on Node 22 (`process.memoryUsage().heapUsed` after a forced GC): the package, once evaluated, holds
 * ~3 MB of heap (its decompressed arrays, which its module keeps alive), the `Set` ~1.3 MB more (it shares the
 * package's strings); ~30 ms on first use. Dropping the short entries saves no memory to speak of (the `Set`'s
 * table is the same size for 42,692 or 49,233 entries): they are dropped for what they would refuse.
 *
 * Each rule has its own sentence for the owner, which never repeats the password (it may end up in a log):
 * - the email: it contains the address's local part (≥ 4 characters, without a "+tag", with or without its
 *   dots, dashes and underscores), or the whole address;
 * - a repetition: one character or one group repeated ("aaaaaaaaaaaa", "abcabcabcabc", "passwordpassword"),
 *   which is as strong as the group alone;
 * - a sequence: the whole password is a straight run, ascending or descending, of the digits
 *   ("123456789012", wrapping after 9), the alphabet ("abcdefghijkl") or a keyboard's letter rows read in
 *   order (QWERTY "qwertyuiopas", AZERTY, QWERTZ);
 * - the list: the password, lower-cased and NFC-normalized, is a list entry;
 * - the list with additions: it is a list entry with digits, symbols or spaces added before and/or after it
 *   ("password12345!", "iloveyou2024!", "2024!tangerine", "trustno1" + "2345"), the most common way people
 *   stretch a weak password to a length rule and the first mangling rule cracking tools apply.
 */
import * as Effect from "effect/Effect"

/**
 * Entries shorter than this are not kept. A password is at least 12 characters, so such an entry could only
 * match as the base of "an entry with digits or symbols added", with 7 or more of them added; those additions
 * then carry most of the strength ("jazz" + 8 random digits and symbols is a fair password), and refusing every
 * common word of 3 to 5 letters ("love", "hello") with any tail would refuse too much.
 */
export const MIN_ENTRY_LENGTH = 6

export const WEAK_PASSWORD_REASONS = {
  email:
    "This password contains your email address or the name in it, which an attacker who knows your address tries " +
    "first; choose another (a few unrelated words work well)",
  repeated:
    "This password repeats one character or one group of characters, which makes it no stronger than that group " +
    "alone; choose another (a few unrelated words work well)",
  sequence:
    "This password is a straight run of digits, letters or keys (like 123456… or qwerty…), which attackers try " +
    "first; choose another (a few unrelated words work well)",
  common:
    "This password is among the most common ones attackers try first; choose another (a few unrelated words work well)",
  commonWithAdditions:
    "This password is a common password with digits or symbols added before or after it, which attackers try early; " +
    "choose another (a few unrelated words work well)"
} as const

interface CommonPasswords {
  readonly entries: Set<string>
  readonly longest: number
}

let loading: Promise<CommonPasswords> | undefined
let loaded: CommonPasswords | undefined

/** Whether the list has been loaded (it is not at import time: only on the first check). */
export const isCommonPasswordListLoaded = (): boolean => loaded !== undefined

const normalize = (s: string) => s.toLowerCase().normalize("NFC")

const loadList = (): Promise<CommonPasswords> =>
  loading ??= import("@zxcvbn-ts/language-common").then(
    (module) => {
      // A CommonJS package: Node names its exports; the server's bundle (esbuild) puts them under `default`.
      const { dictionary } = "dictionary" in module && module.dictionary !== undefined
        ? module
        : (module as unknown as { default: typeof module }).default
      const entries = new Set<string>()
      let longest = 0
      for (const entry of dictionary["passwords-common"]) {
        if (entry.length < MIN_ENTRY_LENGTH) continue
        const e = normalize(entry)
        // The entries are lower-case ASCII already: keep the package's own string, not an equal copy.
        entries.add(e === entry ? entry : e)
        if (e.length > longest) longest = e.length
      }
      loaded = { entries, longest }
      return loaded
    },
    (error: unknown) => {
      loading = undefined // a later check tries again
      throw error
    }
  )

const commonPasswords: Effect.Effect<CommonPasswords> = Effect.suspend(() =>
  loaded !== undefined ? Effect.succeed(loaded) : Effect.promise(loadList)
)

/** How many entries of the bundled list are kept (loads the list). */
export const commonPasswordCount: Effect.Effect<number> = Effect.map(commonPasswords, (list) => list.entries.size)

// The keyboard's letter rows read left to right, top to bottom: "qwertyuiopas…" is a run along them.
const SEQUENCES = [
  "0123456789",
  "abcdefghijklmnopqrstuvwxyz",
  "qwertyuiopasdfghjklzxcvbnm",
  "azertyuiopqsdfghjklmwxcvbn",
  "qwertzuiopasdfghjklyxcvbnm"
].flatMap((s) => [s, [...s].reverse().join("")])

/** The whole password is a run along one of SEQUENCES, wrapping around ("…7890" then "12…"). */
const isSequence = (s: string) => SEQUENCES.some((seq) => seq.repeat(Math.ceil(s.length / seq.length) + 1).includes(s))

/** The password is one group repeated, at least twice: its smallest period divides its length. */
const isRepetition = (s: string) => {
  const period = (s + s).indexOf(s, 1)
  return period < s.length
}

const containsEmail = (s: string, email: string) => {
  const address = normalize(email.trim())
  if (address.length > 0 && s.includes(address)) return true
  const at = address.lastIndexOf("@")
  const local = (at >= 0 ? address.slice(0, at) : address).split("+")[0]!
  return [local, local.replace(/[._-]/g, "")].some((name) => name.length >= 4 && s.includes(name))
}

const leadingNonLetters = (s: string) => s.length - s.replace(/^\P{L}+/u, "").length
const trailingNonLetters = (s: string) => s.length - s.replace(/\P{L}+$/u, "").length

/**
 * A list entry with only digits, symbols or spaces (anything but letters) before and/or after it: every slice
 * s[i, j) that leaves non-letters only on both sides and is as long as an entry can be. A password of
 * non-letters only may match anywhere in it ("…19841984…"); its length bounds the work (≤ 256 × 15 look-ups).
 */
const isCommonWithAdditions = (s: string, { entries, longest }: CommonPasswords) => {
  const lead = leadingNonLetters(s)
  const trail = trailingNonLetters(s)
  for (let i = 0; i <= lead; i++) {
    const from = Math.max(i + MIN_ENTRY_LENGTH, s.length - trail)
    const to = Math.min(s.length, i + longest)
    for (let j = from; j <= to; j++) {
      if ((i > 0 || j < s.length) && entries.has(s.slice(i, j))) return true
    }
  }
  return false
}

/**
 * Why `password` is too weak for the account of `context.email`, as a sentence for the owner, or null when it is
 * acceptable. Assumes the length is already checked (12–256 characters). Loads the bundled list on first use.
 */
export const weakPasswordReason = (
  password: string,
  context: { readonly email: string }
): Effect.Effect<string | null> =>
  Effect.suspend(() => {
    const s = normalize(password)
    if (containsEmail(s, context.email)) return Effect.succeed(WEAK_PASSWORD_REASONS.email)
    if (isRepetition(s)) return Effect.succeed(WEAK_PASSWORD_REASONS.repeated)
    if (isSequence(s)) return Effect.succeed(WEAK_PASSWORD_REASONS.sequence)
    return Effect.map(commonPasswords, (list) =>
      list.entries.has(s)
        ? WEAK_PASSWORD_REASONS.common
        : isCommonWithAdditions(s, list)
        ? WEAK_PASSWORD_REASONS.commonWithAdditions
        : null)
  })
