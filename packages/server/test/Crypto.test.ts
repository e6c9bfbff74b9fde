/** Credentials at rest: AES-256-GCM round trip, fresh nonces, tamper and wrong-key detection, key sources. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { KEY_FILE, makeCipher, parseSecretKey, resolveSecretKey } from "../src/integrations/Crypto.ts"

const KEY = new Uint8Array(32).map((_, i) => i * 7)
const creds = { apiKey: "sk_live_ABCDEF123456", siteId: "example.com" }

describe("credentials cipher", () => {
  it.effect("round-trips, with a fresh 12-byte nonce each time and a 16-byte tag", () =>
    Effect.gen(function*() {
      const c = makeCipher(KEY)
      const a = c.encrypt(creds)
      const b = c.encrypt(creds)
      expect(a.length).toBe(12 + Buffer.byteLength(JSON.stringify(creds)) + 16)
      expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false)
      expect(Buffer.from(a).toString("latin1")).not.toContain("sk_live")
      expect(yield* c.decrypt(a)).toEqual(creds)
      expect(yield* c.decrypt(b)).toEqual(creds)
    }))

  it.effect("the wrong key, a flipped bit or a truncated value fail with a clear message naming no secret", () =>
    Effect.gen(function*() {
      const stored = makeCipher(KEY).encrypt(creds)
      const tampered = new Uint8Array(stored)
      tampered[14] ^= 1
      for (
        const [cipher, bytes] of [[makeCipher(new Uint8Array(32)), stored], [makeCipher(KEY), tampered], [
          makeCipher(KEY),
          stored.slice(0, 20)
        ]] as const
      ) {
        const r = yield* Effect.result(cipher.decrypt(bytes))
        expect(r._tag).toBe("Failure")
        const message = (r as any).failure.message as string
        expect(message).toMatch(/cannot be decrypted with this server's SITEHEALTH_SECRET_KEY/)
        expect(message).not.toContain("sk_live")
      }
    }))
})

describe("secret key", () => {
  it("reads 64 hex digits or base64 of 32 bytes, and refuses anything else with how to make one", () => {
    const hex = Buffer.from(KEY).toString("hex")
    expect(parseSecretKey(hex)).toEqual(KEY)
    expect(parseSecretKey(Buffer.from(KEY).toString("base64"))).toEqual(KEY)
    expect(parseSecretKey(Buffer.from(KEY).toString("base64url"))).toEqual(KEY)
    for (const bad of ["", "short", hex.slice(2), Buffer.alloc(16).toString("base64"), "x".repeat(64)]) {
      expect(() => parseSecretKey(bad)).toThrow(
        /must be 32 bytes as base64 \(44 characters\) or hex \(64 digits\); generate one with: openssl rand -base64 32/
      )
    }
  })

  it("embedded default: generates the key file once (mode 0600) and reuses it", () => {
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-key-"))
    try {
      const first = resolveSecretKey({ secretKey: null, databaseUrl: null, dataDir })
      const file = Path.join(dataDir, KEY_FILE)
      expect(Fs.statSync(file).mode & 0o777).toBe(0o600)
      expect(first.length).toBe(32)
      expect(resolveSecretKey({ secretKey: null, databaseUrl: null, dataDir })).toEqual(first)
      // The environment wins over the file.
      expect(resolveSecretKey({ secretKey: Buffer.from(KEY).toString("hex"), databaseUrl: null, dataDir })).toEqual(KEY)
      Fs.writeFileSync(file, "garbage\n")
      expect(() => resolveSecretKey({ secretKey: null, databaseUrl: null, dataDir })).toThrow(
        /secret-key does not hold a valid key/
      )
    } finally {
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it("an external database without SITEHEALTH_SECRET_KEY is a clear start-up error", () => {
    expect(() => resolveSecretKey({ secretKey: null, databaseUrl: "postgres://db/x", dataDir: "/nonexistent" }))
      .toThrow(/SITEHEALTH_SECRET_KEY is not set: with an external DATABASE_URL/)
    expect(
      resolveSecretKey({
        secretKey: Buffer.from(KEY).toString("base64"),
        databaseUrl: "postgres://db/x",
        dataDir: "/nonexistent"
      })
    ).toEqual(KEY)
  })
})
