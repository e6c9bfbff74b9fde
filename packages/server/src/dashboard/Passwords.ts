/**
 * Password hashing with scrypt (node:crypto), memory-hard: N = 2^15, r = 8, p = 1 (32 MiB and ~50–100 ms per
 * hash on one core), a 16-byte random salt, a 64-byte key. Stored as
 * `scrypt$<log2 N>$<r>$<p>$<salt base64>$<key base64>` so the parameters can be raised later and old hashes
 * still verify. Comparison by `timingSafeEqual`. scrypt runs on libuv's thread pool, off the event loop.
 */
import * as Effect from "effect/Effect"
import * as Crypto from "node:crypto"

export const SCRYPT = { logN: 15, r: 8, p: 1, keyLength: 64, saltLength: 16 } as const

const derive = (password: string, salt: Buffer, logN: number, r: number, p: number, keyLength: number) =>
  Effect.callback<Buffer>((resume) => {
    const N = 2 ** logN
    Crypto.scrypt(password.normalize("NFC"), salt, keyLength, { N, r, p, maxmem: 256 * N * r }, (error, key) => {
      resume(error ? Effect.die(error) : Effect.succeed(key))
    })
  })

export const hashPassword = (password: string): Effect.Effect<string> =>
  Effect.suspend(() => {
    const salt = Crypto.randomBytes(SCRYPT.saltLength)
    return Effect.map(
      derive(password, salt, SCRYPT.logN, SCRYPT.r, SCRYPT.p, SCRYPT.keyLength),
      (key) => `scrypt$${SCRYPT.logN}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString("base64")}$${key.toString("base64")}`
    )
  })

/** A hash of a random password, verified against when the email is unknown so both answers take as long. */
let dummy: string | null = null
export const dummyHash: Effect.Effect<string> = Effect.suspend(() =>
  dummy !== null ? Effect.succeed(dummy) : Effect.map(hashPassword(Crypto.randomBytes(16).toString("hex")), (h) => {
    dummy = h
    return h
  })
)

export const verifyPassword = (password: string, stored: string): Effect.Effect<boolean> =>
  Effect.suspend(() => {
    const parts = stored.split("$")
    if (parts.length !== 6 || parts[0] !== "scrypt") return Effect.succeed(false)
    const [, logN, r, p, salt, key] = parts
    const expected = Buffer.from(key, "base64")
    return Effect.map(
      derive(password, Buffer.from(salt, "base64"), Number(logN), Number(r), Number(p), expected.length),
      (actual) => actual.length === expected.length && Crypto.timingSafeEqual(actual, expected)
    )
  })
