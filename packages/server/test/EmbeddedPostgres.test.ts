/**
 * As root, the embedded cluster runs as the user "postgres": a data directory it cannot reach (below a
 * mode-700 directory, like /root or a `mktemp -d`) is refused with a message that says what to do, instead
 * of an unhandled spawn error.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { expect, it } from "@effect/vitest"
import { startEmbeddedPostgres } from "../src/db/EmbeddedPostgres.ts"

const root = typeof process.getuid === "function" && process.getuid() === 0

it.skipIf(!root)("as root, a data directory below a mode-700 directory is refused with what to do", async () => {
  const closed = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-closed-"))
  Fs.chmodSync(closed, 0o700)
  try {
    await expect(startEmbeddedPostgres({ dataDir: Path.join(closed, "data"), port: 1, log: () => {} }))
      .rejects.toThrow(`cannot enter ${closed} (mode 700). Let others traverse it (chmod o+x ${closed})`)
  } finally {
    Fs.rmSync(closed, { recursive: true, force: true })
  }
})
