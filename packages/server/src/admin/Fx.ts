/**
 * The operator CLI's FX commands (`admin fx set`, `admin fx list`), wired in admin/Cli.ts. Rates are
 * operator-supplied: sitehealth never invents one, and amounts without a rate are reported apart.
 */
import * as Effect from "effect/Effect"
import type { FxRate } from "../fx/Fx.ts"
import { FxRepo } from "../fx/FxRepo.ts"
import { isDay } from "../metrics/Dates.ts"
import { PaymentsRepo } from "../payments/PaymentsRepo.ts"
import { type AdminCommand, AdminError } from "./Commands.ts"

const invalid = (message: string) => new AdminError({ message, type: "invalid_argument" })

const CODE = /^[A-Za-z]{3}$/
// Plain decimals only: "1e3", "0x10" and "" are refused rather than read as something unexpected.
const DECIMAL = /^\d+(\.\d+)?$/

const knownCurrency = (code: string): boolean => {
  try {
    return Intl.supportedValuesOf("currency").includes(code)
  } catch {
    return true
  }
}

const parseCurrency = (flag: string, raw: string) =>
  Effect.suspend(() => {
    const code = raw.trim().toUpperCase()
    if (!CODE.test(code) || !knownCurrency(code)) {
      return Effect.fail(invalid(`${flag} must be an ISO 4217 currency code such as EUR or USD, got "${raw}"`))
    }
    return Effect.succeed(code)
  })

export const parseFxInput = (
  input: { readonly base: string; readonly quote: string; readonly rate: string; readonly day: string }
) =>
  Effect.gen(function*() {
    const base = yield* parseCurrency("--base", input.base)
    const quote = yield* parseCurrency("--quote", input.quote)
    if (base === quote) return yield* Effect.fail(invalid(`--base and --quote must differ, got ${base} twice`))
    const rateText = input.rate.trim()
    const rate = Number(rateText)
    if (!DECIMAL.test(rateText) || !Number.isFinite(rate) || rate <= 0) {
      return yield* Effect.fail(
        invalid(`--rate must be a positive decimal number (1 ${base} = rate ${quote}), got "${input.rate}"`)
      )
    }
    const day = input.day.trim()
    if (!isDay(day)) return yield* Effect.fail(invalid(`--day must be a calendar date YYYY-MM-DD, got "${input.day}"`))
    return { base, quote, rate, day } satisfies FxRate
  })

const rateText = (r: FxRate) => `  ${r.day}  1 ${r.base} = ${r.rate} ${r.quote}`

/** `fx set`: stores (or replaces) the rate of the pair from that day on; every project's figures refresh. */
export const fxSet = (
  input: { readonly base: string; readonly quote: string; readonly rate: string; readonly day: string }
): AdminCommand =>
  Effect.map(parseFxInput(input), (rate) =>
    Effect.gen(function*() {
      const fx = yield* FxRepo
      yield* fx.put([rate])
      // Payments convert at the rates of their days: roll up again the projects that bill in either currency.
      const payments = yield* PaymentsRepo
      const rebuilt = yield* payments.projectsWithPaymentsIn([rate.base, rate.quote])
      for (const projectId of rebuilt) yield* payments.rebuild(projectId)
      return {
        json: { rate, projectsRecomputed: rebuilt.length },
        text: `Stored (valid from ${rate.day} until the pair's next rate); ${rebuilt.length} project(s) recomputed\n${
          rateText(rate)
        }`
      }
    }))

/** `fx list`: every stored rate, by pair then day. */
export const fxList: AdminCommand = Effect.succeed(Effect.gen(function*() {
  const rates = yield* (yield* FxRepo).all()
  return {
    json: { rates },
    text: rates.length === 0
      ? "No FX rates stored. Amounts in other currencies are reported apart until you add one (admin fx set)."
      : `FX rates (1 base = rate quote, from day on):\n${rates.map(rateText).join("\n")}`
  }
}))
