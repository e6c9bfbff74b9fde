/** The `sitehealth` command tree: one command per endpoint of the contract, plus `auth`. */
import { Command } from "effect/cli"
import { authCommand } from "./commands/Auth.ts"
import {
  analyticsCommand,
  briefingCommand,
  churnCommand,
  healthCommand,
  projectsCommand,
  revenueCommand,
  seoCommand,
  signalsCommand
} from "./commands/Reads.ts"
import { tokensCommand } from "./commands/Tokens.ts"
import { expensesCommand, integrationsCommand } from "./commands/Writes.ts"
import { GLOBAL_FLAGS } from "./Session.ts"

/** Kept equal to package.json's version (a test checks). */
export const VERSION = "0.1.0"

export const sitehealth = Command.make("sitehealth").pipe(
  Command.withDescription(
    "The sitehealth API from the terminal. Token: --token, else SITEHEALTH_TOKEN, else `sitehealth auth login`. Server: --base-url, else SITEHEALTH_URL, else the profile, else http://127.0.0.1:8787."
  ),
  Command.withExamples([
    { command: "sitehealth auth login", description: "Store a token (prompted, not echoed)" },
    { command: "sitehealth projects list", description: "Projects with their health" },
    { command: "sitehealth analytics prj_3kTMd9qXyVbN2LwP --period 7d --json", description: "The API's data as JSON" }
  ]),
  Command.withSubcommands([
    authCommand,
    projectsCommand,
    healthCommand,
    briefingCommand,
    signalsCommand,
    analyticsCommand,
    revenueCommand,
    churnCommand,
    seoCommand,
    integrationsCommand,
    expensesCommand,
    tokensCommand
  ]),
  Command.withGlobalFlags(GLOBAL_FLAGS)
)
