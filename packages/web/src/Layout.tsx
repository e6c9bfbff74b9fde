/** The logged-in frame: a skip link, the site's navigation (current page marked), who is logged in, log out. */
import { Exit } from "effect"
import type { ReactNode } from "react"
import { Keys, logOut, setCsrfToken } from "./client.ts"
import { useMutation } from "./hooks.ts"
import { Link, navigate } from "./navigation.tsx"
import { BusyMain, MutationStatus } from "./ui.tsx"

const nav = [
  ["/overview", "Overview"],
  ["/websites", "Websites"],
  ["/settings/api", "API / MCP"],
  ["/team", "Team"],
  ["/account", "Account"],
  ["/sessions", "Sessions"]
] as const

export const Layout = ({ user, path, children }: {
  readonly user: { readonly email: string }
  readonly path: string
  readonly children: ReactNode
}) => {
  const [result, run] = useMutation(logOut)
  return (
    <>
      <a className="skip" href="#main">Skip to content</a>
      <header className="top">
        <Link href="/overview" className="brand">sitehealth</Link>
        <nav aria-label="Main">
          <ul>
            {nav.map(([href, label]) => (
              <li key={href}>
                <Link href={href} aria-current={path === href || path.startsWith(href + "/") ? "page" : undefined}>
                  {label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="row">
          <span className="muted">{user.email}</span>
          <button
            type="button"
            className="secondary"
            onClick={async () => {
              const exit = await run({ reactivityKeys: [Keys.session] })
              if (Exit.isSuccess(exit)) {
                setCsrfToken(null)
                navigate("/login")
              }
            }}
          >
            Log out
          </button>
        </div>
      </header>
      <BusyMain tabIndex={-1}>
        <MutationStatus result={result} />
        {children}
      </BusyMain>
    </>
  )
}
