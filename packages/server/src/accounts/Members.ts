/**
 * Who may receive a website's email alerts: the addresses of the logins of the account that owns it. Declared here
 * (the data layer) so that webhooks and the API can ask it; implemented over the dashboard's logins
 * (dashboard/Members.ts), in every store.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

export interface AccountMembersShape {
  /** The lower-case addresses of the logins of the account owning `projectId`; empty for an unknown website. */
  readonly emailsOfProject: (projectId: string) => Effect.Effect<ReadonlyArray<string>>
  /** The owners' addresses among them (the notices about the account's destinations go to them). */
  readonly ownerEmailsOfProject: (projectId: string) => Effect.Effect<ReadonlyArray<string>>
}

export class AccountMembers
  extends Context.Service<AccountMembers, AccountMembersShape>()("sitehealth/AccountMembers")
{}
