/**
 * Two-factor sign-in crypto: RFC 4226 / 6238 vectors, base32, the code check with drift and replay, URI, QR, recovery
 * codes.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  base32Decode,
  base32Encode,
  hotp,
  newRecoveryCodes,
  newTotpSecret,
  normalizeRecoveryCode,
  otpauthUri,
  qrSvg,
  RECOVERY_ALPHABET,
  RECOVERY_CODE_COUNT,
  recoveryCodeHash,
  totpAt,
  verifyTotp
} from "../src/dashboard/Totp.ts"

const RFC_SECRET = Buffer.from("12345678901234567890", "ascii")

describe("base32", () => {
  it("encodes the RFC 4648 test vectors, unpadded, and decodes them back", () => {
    const vectors: Array<[string, string]> = [
      ["", ""],
      ["f", "MY"],
      ["fo", "MZXQ"],
      ["foo", "MZXW6"],
      ["foob", "MZXW6YQ"],
      ["fooba", "MZXW6YTB"],
      ["foobar", "MZXW6YTBOI"]
    ]
    for (const [plain, encoded] of vectors) {
      expect(base32Encode(Buffer.from(plain))).toBe(encoded)
      expect(base32Decode(encoded)?.toString()).toBe(plain)
    }
  })

  it("round-trips random bytes of every length, ignoring case, spaces and padding on decode", () => {
    for (let n = 0; n < 42; n++) {
      const bytes = new Uint8Array(n).map(() => Math.floor(Math.random() * 256))
      const text = base32Encode(bytes)
      expect(text).toMatch(/^[A-Z2-7]*$/)
      expect(base32Decode(text)).toEqual(Buffer.from(bytes))
    }
    expect(base32Decode("mzxw 6ytb oi")?.toString()).toBe("foobar")
    expect(base32Decode("MZXW6YTBOI======")?.toString()).toBe("foobar")
  })

  it("refuses characters outside the alphabet and impossible lengths", () => {
    for (const bad of ["MZXW6YTB0I", "MZXW1", "MZ-XW", "MZXW6YTBOI!", "A", "ABC", "ABCDEF"]) {
      expect(base32Decode(bad)).toBeNull()
    }
  })

  it("makes 160-bit secrets", () => {
    const a = newTotpSecret()
    expect(a).toMatch(/^[A-Z2-7]{32}$/)
    expect(base32Decode(a)?.length).toBe(20)
    expect(newTotpSecret()).not.toBe(a)
  })
})

describe("HOTP and TOTP", () => {
  it("gives the RFC 4226 Appendix D values for counters 0..9", () => {
    const expected = [
      "755224",
      "287082",
      "359152",
      "969429",
      "338314",
      "254676",
      "287922",
      "162583",
      "399871",
      "520489"
    ]
    expect(expected.map((_, counter) => hotp(RFC_SECRET, counter))).toEqual(expected)
  })

  it("gives the RFC 6238 Appendix B SHA-1 values (8 digits)", () => {
    const secret = base32Encode(RFC_SECRET)
    const vectors: Array<[number, string]> = [
      [59, "94287082"],
      [1111111109, "07081804"],
      [1111111111, "14050471"],
      [1234567890, "89005924"],
      [2000000000, "69279037"],
      [20000000000, "65353130"]
    ]
    for (const [seconds, code] of vectors) expect(totpAt(secret, seconds * 1000, { digits: 8 })).toBe(code)
  })

  it("defaults to 6 digits and 30-second steps", () => {
    const secret = base32Encode(RFC_SECRET)
    expect(totpAt(secret, 59_000)).toBe("287082")
    expect(totpAt(secret, 59_000, { stepSeconds: 60 })).toBe("755224")
  })
})

describe("verifyTotp", () => {
  const secret = newTotpSecret()
  const now = 1_700_000_012_345
  const step = Math.floor(now / 1000 / 30)
  const codeAt = (s: number) => totpAt(secret, s * 30_000)

  it("accepts the current step and returns it", () => {
    expect(verifyTotp(secret, totpAt(secret, now), now, null)).toBe(step)
    expect(verifyTotp(secret, codeAt(step), now, step - 5)).toBe(step)
  })

  it("accepts one step either side and refuses two steps away", () => {
    expect(verifyTotp(secret, codeAt(step - 1), now, null)).toBe(step - 1)
    expect(verifyTotp(secret, codeAt(step + 1), now, null)).toBe(step + 1)
    for (const far of [step - 2, step + 2]) {
      if ([step - 1, step, step + 1].some((s) => codeAt(s) === codeAt(far))) continue // a 1-in-10^6 collision
      expect(verifyTotp(secret, codeAt(far), now, null)).toBeNull()
    }
  })

  it("refuses a replay, and a code of a later step after a used one is accepted", () => {
    const used = verifyTotp(secret, codeAt(step), now, null)
    expect(used).toBe(step)
    expect(verifyTotp(secret, codeAt(step), now, used)).toBeNull()
    expect(verifyTotp(secret, codeAt(step - 1), now, used)).toBeNull()
    expect(verifyTotp(secret, codeAt(step + 1), now, used)).toBe(step + 1)
    const later = now + 30_000
    expect(verifyTotp(secret, codeAt(step + 1), later, used)).toBe(step + 1)
  })

  it("ignores spaces inside the code", () => {
    const code = codeAt(step)
    expect(verifyTotp(secret, `${code.slice(0, 3)} ${code.slice(3)}`, now, null)).toBe(step)
    expect(verifyTotp(secret, ` ${code} `, now, null)).toBe(step)
  })

  it("refuses letters, 5 digits, 7 digits and a bad secret", () => {
    const code = codeAt(step)
    for (
      const bad of [
        "abcdef",
        `${code.slice(0, 5)}x`,
        code.slice(0, 5),
        `${code}0`,
        `0${code}`,
        "",
        "12-3456",
        "１２３４５６"
      ]
    ) {
      expect(verifyTotp(secret, bad, now, null)).toBeNull()
    }
    expect(verifyTotp("not base32!", code, now, null)).toBeNull()
  })
})

describe("otpauth URI and QR code", () => {
  it("percent-encodes the label and the parameters, with the secret as the secret parameter", () => {
    const secret = newTotpSecret()
    const uri = otpauthUri({ secret, accountName: "ann+2fa@example.com" })
    expect(uri).toBe(
      `otpauth://totp/sitehealth:ann%2B2fa%40example.com?secret=${secret}&issuer=sitehealth&algorithm=SHA1&digits=6&period=30`
    )
    const parsed = new URL(uri)
    expect(parsed.protocol).toBe("otpauth:")
    expect(parsed.searchParams.get("secret")).toBe(secret)
    expect(decodeURIComponent(parsed.pathname.replace(/^\/+/, ""))).toBe("sitehealth:ann+2fa@example.com")
    expect(otpauthUri({ secret, accountName: "a b", issuer: "Acme & Co" })).toBe(
      `otpauth://totp/Acme%20%26%20Co:a%20b?secret=${secret}&issuer=Acme%20%26%20Co&algorithm=SHA1&digits=6&period=30`
    )
  })

  it("draws the QR code as SVG", async () => {
    const svg = await qrSvg(otpauthUri({ secret: newTotpSecret(), accountName: "ann@example.com" }))
    expect(svg).toContain("<svg")
    expect(svg).toContain("<path")
    expect(svg.trim().endsWith("</svg>")).toBe(true)
  })
})

describe("recovery codes", () => {
  it("makes ten distinct codes of the unambiguous alphabet as xxxxx-xxxxx", () => {
    const codes = newRecoveryCodes()
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT)
    expect(new Set(codes).size).toBe(RECOVERY_CODE_COUNT)
    for (const code of codes) {
      expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/)
      for (const char of code.replace("-", "")) expect(RECOVERY_ALPHABET).toContain(char)
      expect(code).not.toMatch(/[01ilo]/)
      expect(normalizeRecoveryCode(code)).toBe(code.replace("-", ""))
    }
  })

  it("normalizes case, spaces and dashes, and refuses wrong lengths and characters", () => {
    expect(normalizeRecoveryCode("ABCDE-FGHJK ")).toBe("abcdefghjk")
    expect(normalizeRecoveryCode(" abc de fghjk")).toBe("abcdefghjk")
    for (const bad of ["", "abcde-fghj", "abcde-fghjkm", "abcde-fghj1", "abcde-fghji", "abcde_fghjk", "abcde-fghjo"]) {
      expect(normalizeRecoveryCode(bad)).toBeNull()
    }
  })

  it("hashes stably, differently per code", () => {
    const [a, b] = newRecoveryCodes().map((code) => normalizeRecoveryCode(code)!)
    expect(recoveryCodeHash(a)).toMatch(/^[0-9a-f]{64}$/)
    expect(recoveryCodeHash(a)).toBe(recoveryCodeHash(a))
    expect(recoveryCodeHash(a)).not.toBe(recoveryCodeHash(b))
    expect(recoveryCodeHash("abcdefghjk")).toBe(recoveryCodeHash(normalizeRecoveryCode("ABCDE-FGHJK")!))
  })
})
