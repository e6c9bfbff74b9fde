/**
 * The CLI's API commands, derived from the contract: which endpoints the CLI exposes, and under which
 * command (`sitehealth projects list`, `sitehealth health`), is each endpoint's `Operation` annotation
 * (`cli`). What is written here is only how a command calls its endpoint and prints the answer, keyed by
 * endpoint name, and the one-line description of each parent command.
 */
import { type EndpointName, operations } from "@sitehealth/domain/Api"
import type { Operation } from "@sitehealth/domain/Permissions"
import { Command } from "effect/cli"
import {
  createAnnotationCommand,
  deleteAnnotationCommand,
  listAnnotationsCommand,
  updateAnnotationCommand
} from "./commands/Annotations.ts"
import {
  analyticsCommand,
  briefingCommand,
  churnCommand,
  healthCommand,
  listProjectsCommand,
  revenueCommand,
  seoCommand,
  signalsCommand
} from "./commands/Reads.ts"
import { createTokenCommand, listTokensCommand, revokeTokenCommand } from "./commands/Tokens.ts"
import {
  createWebhookCommand,
  deleteWebhookCommand,
  getWebhookCommand,
  listWebhookDeliveriesCommand,
  listWebhooksCommand,
  redeliverWebhookCommand,
  testWebhookCommand,
  updateWebhookCommand
} from "./commands/Webhooks.ts"
import {
  createExpenseCommand,
  deleteExpenseCommand,
  listExpensesCommand,
  listIntegrationsCommand,
  syncCommand
} from "./commands/Writes.ts"

/** How the CLI calls each endpoint it exposes, given the command name the annotation chose. */
const IMPLEMENTATIONS = {
  listProjects: listProjectsCommand,
  getHealth: healthCommand,
  getBriefing: briefingCommand,
  listSignals: signalsCommand,
  getAnalytics: analyticsCommand,
  getRevenue: revenueCommand,
  getChurn: churnCommand,
  getSeo: seoCommand,
  listIntegrations: listIntegrationsCommand,
  syncIntegration: syncCommand,
  listExpenses: listExpensesCommand,
  createExpense: createExpenseCommand,
  deleteExpense: deleteExpenseCommand,
  listAnnotations: listAnnotationsCommand,
  createAnnotation: createAnnotationCommand,
  updateAnnotation: updateAnnotationCommand,
  deleteAnnotation: deleteAnnotationCommand,
  listTokens: listTokensCommand,
  createToken: createTokenCommand,
  revokeToken: revokeTokenCommand,
  listWebhooks: listWebhooksCommand,
  createWebhook: createWebhookCommand,
  getWebhook: getWebhookCommand,
  updateWebhook: updateWebhookCommand,
  deleteWebhook: deleteWebhookCommand,
  testWebhook: testWebhookCommand,
  listWebhookDeliveries: listWebhookDeliveriesCommand,
  redeliverWebhook: redeliverWebhookCommand
} satisfies { readonly [Name in EndpointName]?: (name: string) => unknown }

type Implemented = keyof typeof IMPLEMENTATIONS
type ApiCommand = ReturnType<(typeof IMPLEMENTATIONS)[Implemented]>

/** What a parent command (`sitehealth tokens …`) says in the help. */
const PARENTS: Readonly<Record<string, string>> = {
  projects: "Projects (websites) in the token's scope",
  integrations: "A project's data providers and their syncs",
  expenses: "Costs recorded per project",
  annotations: "Days of a website marked with a note",
  tokens: "Access tokens: list, create, revoke",
  webhooks: "A website's webhook endpoints, their tests and deliveries"
}

const isImplemented = (name: EndpointName): name is Implemented => Object.hasOwn(IMPLEMENTATIONS, name)

/** The commands the annotations ask for: [command path, endpoint name], in the contract's order. */
export const cliOperations = (
  all: ReadonlyArray<readonly [EndpointName, Operation]> = operations
): ReadonlyArray<readonly [ReadonlyArray<string>, EndpointName]> =>
  all.flatMap(([name, operation]) => (operation.cli === null ? [] : [[operation.cli, name] as const]))

/**
 * The API commands, in the contract's order: an endpoint whose annotation names `a` is `sitehealth a`; one
 * that names `a b` is `b` under a parent `a`. Fails at start-up (and in the tests) when an annotation names
 * a command the CLI has no implementation for, or an implementation is for an endpoint not exposed.
 */
export const apiCommands = (): ReadonlyArray<ApiCommand | ReturnType<typeof parent>> => {
  const exposed = cliOperations()
  const top: Array<{ readonly name: string; readonly children: Array<ApiCommand>; readonly command?: ApiCommand }> = []
  for (const [path, endpoint] of exposed) {
    if (!isImplemented(endpoint)) {
      throw new Error(`the CLI has no implementation for ${endpoint} (command "${path.join(" ")}")`)
    }
    const make = IMPLEMENTATIONS[endpoint]
    const [first, second, ...rest] = path
    if (first === undefined || rest.length > 0) throw new Error(`${endpoint}: a CLI command path has one or two words`)
    if (second === undefined) {
      top.push({ name: first, children: [], command: make(first) })
      continue
    }
    const group = top.find((entry) => entry.name === first && entry.command === undefined)
    if (group === undefined) top.push({ name: first, children: [make(second)] })
    else group.children.push(make(second))
  }
  const unexposed = Object.keys(IMPLEMENTATIONS).filter((name) => !exposed.some(([, endpoint]) => endpoint === name))
  if (unexposed.length > 0) {
    throw new Error(`CLI implementations for endpoints whose annotation names no command: ${unexposed.join(", ")}`)
  }
  return top.map((entry) => entry.command ?? parent(entry.name, entry.children))
}

const parent = (name: string, children: ReadonlyArray<ApiCommand>) =>
  Command.make(name).pipe(Command.withDescription(PARENTS[name] ?? ""), Command.withSubcommands(children))
