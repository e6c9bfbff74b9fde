/**
 * The CLI's API commands come from the contract's Operation annotations: every endpoint whose annotation
 * names a command is reachable at exactly that path of `sitehealth`, and no other API command exists.
 */
import { describe, expect, it } from "@effect/vitest"
import { operations } from "@sitehealth/domain/Api"
import type { Command } from "effect/cli"
import { cliOperations } from "../src/ApiCommands.ts"
import { sitehealth } from "../src/Cli.ts"

const leafPaths = (command: Command.Command.Any, prefix: ReadonlyArray<string> = []): Array<string> => {
  const children = command.subcommands.flatMap((group) => group.commands)
  return children.length === 0
    ? [prefix.join(" ")]
    : children.flatMap((child) => leafPaths(child, [...prefix, child.name]))
}

describe("CLI commands derived from the Operation annotations", () => {
  it("the command tree is auth plus exactly the commands the annotations name", () => {
    const named = cliOperations().map(([path]) => path.join(" "))
    const apiLeaves = leafPaths(sitehealth).filter((path) => !path.startsWith("auth "))
    expect(apiLeaves).toEqual(named)
  })

  it("every endpoint a token can call has a command, except the dashboard-only ones", () => {
    // getCurrentToken (GET /tokens/current, whoami) is what `auth status` reads; that command is written by hand.
    const withoutCommand = operations.filter(([name, op]) => op.cli === null && name !== "getCurrentToken").map((
      [, op]
    ) => op.kind)
    expect(new Set(withoutCommand)).toEqual(new Set(["dashboard_only"]))
  })
})
