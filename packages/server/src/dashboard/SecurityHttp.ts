/** The dashboard's `security` group: the owner's password and two-factor sign-in (TwoFactor.ts, Auth.ts). */
import { CurrentDashboardSession, DashboardApi } from "@sitehealth/domain/DashboardApi"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { mailPasswordChanged, refuseWeakPassword } from "./Auth.ts"
import { AuthRepo } from "./AuthRepo.ts"
import { hashPassword } from "./Passwords.ts"
import {
  confirmPassword,
  disableTwoFactor,
  enableTwoFactor,
  regenerateRecoveryCodes,
  setUpTwoFactor,
  twoFactorStatus
} from "./TwoFactor.ts"

/** The logged-in user, as stored now (not as the session saw it at log-in). */
const currentUser = Effect.gen(function*() {
  const session = yield* CurrentDashboardSession
  const user = yield* (yield* AuthRepo).findUser(session.userId)
  if (user === null) return yield* Effect.die(new Error("a session's user is gone"))
  return { session, user }
})

export const DashboardSecurityHttp = HttpApiBuilder.group(DashboardApi, "security", (h) =>
  h
    .handle("changePassword", ({ payload }) =>
      Effect.gen(function*() {
        const { session, user } = yield* currentUser
        const repo = yield* AuthRepo
        yield* confirmPassword(user, payload.currentPassword, "body.currentPassword")
        yield* refuseWeakPassword(payload.newPassword, user.email, "body.newPassword")
        yield* repo.setPassword(user.id, yield* hashPassword(payload.newPassword))
        const ended = yield* repo.deleteSessionsOf(user.id, session.sessionId)
        yield* mailPasswordChanged(user, "changed")
        return {
          message: "Your password has been changed; every other session has been logged out.",
          sessionsEnded: ended
        }
      }))
    .handle("twoFactor", () => Effect.flatMap(currentUser, ({ user }) => twoFactorStatus(user)))
    .handle("setUpTwoFactor", ({ payload }) =>
      Effect.flatMap(currentUser, ({ user }) => setUpTwoFactor(user, payload.password)))
    .handle("enableTwoFactor", ({ payload }) =>
      Effect.flatMap(currentUser, ({ user }) =>
        enableTwoFactor(user, payload.code)))
    .handle("disableTwoFactor", ({ payload }) =>
      Effect.flatMap(currentUser, ({ user }) =>
        disableTwoFactor(user, payload.password, payload.code)))
    .handle("regenerateRecoveryCodes", ({ payload }) =>
      Effect.flatMap(currentUser, ({ user }) =>
        regenerateRecoveryCodes(user, payload.password, payload.code))))
