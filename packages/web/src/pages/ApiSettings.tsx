/**
 * API / MCP settings: the account's tokens, a form to create one limited to websites and permissions (its
 * secret shown once, with a copy button), revoke with a confirmation, and ready-to-paste set-up for the CLI
 * and for MCP clients (stdio through this checkout's server, or the remote `/mcp` URL).
 */
import { useAtomValue } from "@effect/atom-react"
import type { ProjectId } from "@sitehealth/domain/Common"
import { type Permission, PERMISSION_DESCRIPTIONS, PERMISSIONS } from "@sitehealth/domain/Permissions"
import { Exit } from "effect"
import { useState } from "react"
import { Keys, websitesAtom } from "../client.ts"
import { formatDate } from "../format.ts"
import { CopyButton, Field, formValues, Result } from "../forms.tsx"
import { useMutation } from "../hooks.ts"
import { Can } from "../roles.tsx"
import { createToken, revokeToken, tokensAtom } from "../tokensClient.ts"
import { MutationStatus } from "../ui.tsx"

const READ_ONLY: ReadonlyArray<Permission> = PERMISSIONS.filter((p) => p.endsWith(":read") && p !== "tokens:read")

const origin = () => window.location.origin

export const cliSetup = (secret: string) =>
  `printf '%s' '${secret}' | ${__SITEHEALTH_NODE__} ${__SITEHEALTH_CLI_BIN__} auth login --base-url ${origin()}`

export const mcpStdio = (secret: string) =>
  JSON.stringify(
    {
      mcpServers: {
        sitehealth: {
          command: __SITEHEALTH_NODE__,
          args: [__SITEHEALTH_MCP_BIN__],
          env: { SITEHEALTH_TOKEN: secret, SITEHEALTH_URL: origin() }
        }
      }
    },
    null,
    2
  )

/** A client that signs in by itself (OAuth, docs/mcp.md "Connecting by URL"): the URL alone, no token. */
export const mcpByUrl = () =>
  JSON.stringify({ mcpServers: { sitehealth: { type: "http", url: `${origin()}/mcp` } } }, null, 2)

export const mcpRemote = (secret: string) =>
  JSON.stringify(
    {
      mcpServers: {
        sitehealth: { type: "http", url: `${origin()}/mcp`, headers: { Authorization: `Bearer ${secret}` } }
      }
    },
    null,
    2
  )

const Snippet = (
  { title, text, hint, copy }: {
    readonly title: string
    readonly text: string
    readonly hint: string
    readonly copy: string
  }
) => (
  <div>
    <h3>{title}</h3>
    <p className="muted">{hint}</p>
    <pre tabIndex={0} aria-label={title}>{text}</pre>
    <CopyButton text={text} label={copy} />
  </div>
)

const SetUp = ({ secret }: { readonly secret: string | null }) => {
  const s = secret ?? "svc_YOUR_TOKEN"
  return (
    <section className="panel" aria-labelledby="setup-heading">
      <h2 id="setup-heading">Set up the CLI and MCP clients</h2>
      {secret === null
        ? (
          <p className="muted">
            Create a token first: the snippets below then carry it. Until then they show <code>svc_YOUR_TOKEN</code>.
          </p>
        )
        : null}
      <Snippet
        title="CLI"
        copy="Copy the CLI command"
        hint={"Stores the token in your sitehealth profile " +
          "(the secret is piped, not typed on the command line's history)."}
        text={cliSetup(s)}
      />
      <Snippet
        title="MCP over stdio"
        copy="Copy the stdio configuration"
        hint="Claude Desktop, Cursor, VS Code: add to the client's MCP configuration. Runs this checkout's MCP server."
        text={mcpStdio(s)}
      />
      <Snippet
        title="MCP over HTTP"
        copy="Copy the HTTP configuration"
        hint={`Clients that speak Streamable HTTP connect to ${origin()}/mcp with the token as a Bearer header.`}
        text={mcpRemote(s)}
      />
      <Snippet
        title="MCP by URL, with sign-in"
        copy="Copy the sign-in configuration"
        hint={"Claude, Cursor, VS Code and other clients that implement MCP sign-in need only the URL: they open " +
          "a page here where you choose the websites and permissions, and the token they get is listed below " +
          "(“… (MCP sign-in)”), revocable like any other. No token to paste."}
        text={mcpByUrl()}
      />
    </section>
  )
}

const CreateToken = ({ onCreated }: { readonly onCreated: (secret: string, name: string) => void }) => {
  const websites = useAtomValue(websitesAtom)
  const [result, run] = useMutation(createToken)
  const [scope, setScope] = useState<"all" | "some">("some")
  return (
    <section className="panel" aria-labelledby="create-heading">
      <h2 id="create-heading">Create a token</h2>
      <Result result={websites} what="your websites">
        {({ websites }) => (
          <form
            onSubmit={async (event) => {
              event.preventDefault()
              const element = event.currentTarget
              const form = formValues(element)
              const name = form.get("name").trim()
              const chosen = form.all("website")
              const exit = await run({
                payload: {
                  name,
                  websites: scope === "all" ? null : (chosen as Array<ProjectId>),
                  permissions: form.all("permission") as Array<Permission>
                },
                reactivityKeys: [Keys.tokens]
              })
              if (Exit.isSuccess(exit)) {
                element.reset()
                onCreated(exit.value.secret, exit.value.token.name)
              }
            }}
          >
            <MutationStatus result={result} />
            <Field label="Name" hint="Where it will be used, e.g. “Claude on my laptop”.">
              <input name="name" required maxLength={100} />
            </Field>
            <fieldset>
              <legend>Websites</legend>
              <label className="check">
                <input
                  type="radio"
                  name="scope"
                  value="some"
                  checked={scope === "some"}
                  onChange={() => setScope("some")}
                />
                Only the websites checked below
              </label>
              <label className="check">
                <input
                  type="radio"
                  name="scope"
                  value="all"
                  checked={scope === "all"}
                  onChange={() => setScope("all")}
                />
                Every website, including ones added later
              </label>
              {scope === "some"
                ? websites.length === 0
                  ? <p className="muted">You have no website yet: add one first, or choose every website.</p>
                  : websites.map((w) => (
                    <label className="check" key={w.id}>
                      <input type="checkbox" name="website" value={w.id} defaultChecked={websites.length === 1} />
                      {w.name} <span className="muted">({w.domain})</span>
                    </label>
                  ))
                : null}
            </fieldset>
            <fieldset>
              <legend>Permissions</legend>
              {PERMISSIONS.map((p) => (
                <label className="check" key={p}>
                  <input type="checkbox" name="permission" value={p} defaultChecked={READ_ONLY.includes(p)} />
                  <span>
                    <code>{p}</code> <span className="muted">{PERMISSION_DESCRIPTIONS[p]}</span>
                  </span>
                </label>
              ))}
            </fieldset>
            <div className="row">
              <button type="submit" disabled={result.waiting}>{result.waiting ? "Creating…" : "Create token"}</button>
            </div>
          </form>
        )}
      </Result>
    </section>
  )
}

const TokenList = () => {
  const tokens = useAtomValue(tokensAtom)
  const websites = useAtomValue(websitesAtom)
  const [revoked, revoke] = useMutation(revokeToken)
  const [confirming, setConfirming] = useState<string | null>(null)
  const nameOf = (id: string) =>
    websites._tag === "Success" ? websites.value.websites.find((w) => w.id === id)?.name ?? id : id
  return (
    <section aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">Tokens</h2>
      <MutationStatus result={revoked} />
      <Result result={tokens} what="your tokens">
        {({ tokens }) =>
          tokens.length === 0
            ? <p>No token yet.</p>
            : (
              <table className="cards">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Prefix</th>
                    <th scope="col">Websites</th>
                    <th scope="col">Permissions</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    <th scope="col">Status</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {tokens.map((t) => (
                    <tr key={t.id}>
                      <td data-label="Name">{t.name}</td>
                      <td data-label="Prefix">
                        <code>{t.prefix}</code>
                      </td>
                      <td data-label="Websites">
                        {t.websites === null
                          ? "Every website"
                          : t.websites.length === 0
                          ? "None (its websites were deleted)"
                          : t.websites.map(nameOf).join(", ")}
                      </td>
                      <td data-label="Permissions">{t.permissions.join(", ")}</td>
                      <td data-label="Created">{formatDate(t.createdAt)}</td>
                      <td data-label="Last used">{t.lastUsedAt === null ? "Never" : formatDate(t.lastUsedAt)}</td>
                      <td data-label="Status">
                        <span className="badge">{t.status}</span>
                      </td>
                      <td>
                        {t.status !== "active"
                          ? null
                          : confirming === t.id
                          ? (
                            <div role="group" aria-label={`Confirm revoking ${t.name}`}>
                              <p>Revoke “{t.name}”? It stops working at once, everywhere.</p>
                              <div className="row">
                                <button
                                  type="button"
                                  className="danger"
                                  disabled={revoked.waiting}
                                  onClick={async () => {
                                    const exit = await revoke({ params: { id: t.id }, reactivityKeys: [Keys.tokens] })
                                    if (Exit.isSuccess(exit)) setConfirming(null)
                                  }}
                                >
                                  Yes, revoke
                                </button>
                                <button type="button" className="secondary" onClick={() => setConfirming(null)}>
                                  Cancel
                                </button>
                              </div>
                            </div>
                          )
                          : (
                            <button
                              type="button"
                              className="secondary"
                              onClick={() => setConfirming(t.id)}
                              aria-label={`Revoke ${t.name}`}
                            >
                              Revoke
                            </button>
                          )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
      </Result>
    </section>
  )
}

export const ApiSettingsPage = () => {
  const [created, setCreated] = useState<{ readonly secret: string; readonly name: string } | null>(null)
  return (
    <>
      <h1>API / MCP settings</h1>
      <p className="muted">
        Tokens let the CLI, MCP clients and your own scripts read your websites' data through the API.
      </p>
      {created !== null
        ? (
          <div className="alert ok" role="status">
            <strong>
              Token “{created.name}” created. Copy it now: it is shown this once and cannot be shown again.
            </strong>
            <code className="secret" data-testid="token-secret">{created.secret}</code>
            <div className="row">
              <CopyButton text={created.secret} label="Copy token" />
              <button type="button" className="secondary" onClick={() => setCreated(null)}>I have stored it</button>
            </div>
          </div>
        )
        : null}
      <Can level="admin" what="seeing, creating and revoking tokens">
        <TokenList />
        <CreateToken onCreated={(secret, name) => setCreated({ secret, name })} />
      </Can>
      <SetUp secret={created?.secret ?? null} />
    </>
  )
}
