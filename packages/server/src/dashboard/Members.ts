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
    const membersOf = (projectId: string) =>
      Effect.flatMap(
        projects.find(projectId),
        (project) => project === null ? Effect.succeed([]) : auth.listMembers(project.accountId)
      )
    return AccountMembers.of({
      emailsOfProject: Effect.fn("AccountMembers.emailsOfProject")(function*(projectId) {
        return (yield* membersOf(projectId)).map((m) => m.email)
      }),
      ownerEmailsOfProject: Effect.fn("AccountMembers.ownerEmailsOfProject")(function*(projectId) {
        return (yield* membersOf(projectId)).filter((m) => m.role === "owner").map((m) => m.email)
      })
    })
  })
)
