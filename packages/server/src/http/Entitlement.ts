/** Entitlement: 402 `trial_expired` unless the caller's account has a live trial or subscription. */
import { TrialExpired } from "@sitehealth/domain/Errors"
import { type AccountEntitlement, CurrentAccount, Entitlement } from "@sitehealth/domain/Middleware"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { isEntitled } from "../accounts/AccountsRepo.ts"

/** The middleware over a rule deciding whether the account may use the API at `now` (direct style: hot path). */
const make = (entitled: (account: AccountEntitlement, now: Date) => boolean) =>
  Entitlement.of((httpEffect) =>
    Effect.withFiber<Effect.Success<typeof httpEffect>, Effect.Error<typeof httpEffect> | TrialExpired>((fiber) =>
      entitled(
          Context.getUnsafe(fiber.context, CurrentAccount),
          new Date(fiber.getRef(Clock.Clock).currentTimeMillisUnsafe())
        )
        ? httpEffect
        : Effect.fail(TrialExpired.of())
    )
  )

/** The account's entitlement as read with the token (no query of its own). */
export const EntitlementLive = Layer.succeed(Entitlement, make(isEntitled))

/** Tests: every account is (or is not) entitled, whatever its trial and subscription say. */
export const EntitlementTest = (entitled: boolean) => Layer.succeed(Entitlement, make(() => entitled))
