/** The `sitehealth` command tree: `auth`, and the API commands the contract's annotations name (ApiCommands.ts). */
import { Command } from "effect/cli"
import { apiCommands } from "./ApiCommands.ts"
import { authCommand } from "./commands/Auth.ts"
import { GLOBAL_FLAGS } from "./Session.ts"

/** Kept equal to package.json's version (a test checks). */
export const VERSION = "0.1.0"

export const sitehealth = Command.make("sitehealth").pipe(
  Command.withDescription(
    "The sitehealth API from the terminal. Token: --token, else SITEHEALTH_TOKEN, else `sitehealth auth login`. " +
      "Server: --base-url, else SITEHEALTH_URL, else the profile, else http://127.0.0.1:8787."
  ),
  Command.withExamples([
    { command: "sitehealth auth login", description: "Store a token (prompted, not echoed)" },
    { command: "sitehealth projects list", description: "Projects with their health" },
    { command: "sitehealth analytics prj_3kTMd9qXyVbN2LwP --period 7d --json", description: "The API's data as JSON" }
  ]),
  Command.withSubcommands([authCommand, ...apiCommands()]),
  Command.withGlobalFlags(GLOBAL_FLAGS)
)
