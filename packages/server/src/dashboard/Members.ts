/** AccountMembers (accounts/Members.ts) over the dashboard's logins: a website's account's members' addresses. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AccountMembers } from "../accounts/Members.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { AuthRepo } from "./AuthRepo.ts"

export const AccountMembersLive = Layer.effect(
  AccountMembers,
  Effect.gen(function*() {
    const auth = yield* AuthRepo
    const projects = yield* ProjectsRepo
    return AccountMembers.of({
      emailsOfProject: Effect.fn("AccountMembers.emailsOfProject")(function*(projectId) {
        const project = yield* projects.find(projectId)
        if (project === null) return []
        return (yield* auth.listMembers(project.accountId)).map((m) => m.email)
      })
    })
  })
)
