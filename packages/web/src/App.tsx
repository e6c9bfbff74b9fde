/**
 * The pages and the session gate. Public pages (log in, sign up, the links from mails) render alone; the
 * others need a session: while it loads they say so, when there is none they send the user to log in (and
 * back afterwards, `?next=`), and any other failure is shown with a way to try again.
 */
import { useAtomRefresh, useAtomValue } from "@effect/atom-react"
import {
  ACCEPT_INVITATION_PAGE,
  GOOGLE_CALLBACK_PAGE,
  RESET_PASSWORD_PAGE,
  VERIFY_EMAIL_PAGE
} from "@sitehealth/domain/DashboardCore"
import { AsyncResult } from "effect/reactivity"
import { Component, type ComponentType, type ReactNode, useEffect } from "react"
import { sessionAtom, setCsrfToken } from "./client.ts"
import { isUnauthenticated } from "./errors.ts"
import { Layout } from "./Layout.tsx"
import { Link, navigate, useFocusHeading, useLocation } from "./navigation.tsx"
import type { WebsiteFrame as WebsiteFrameOf } from "./pages/reports/shared.tsx"
import { lazyComponent, loadOverviewPage, matchWebsite, OverviewPage, prefetchWebsitePages } from "./routes.tsx"
import { BusyMain, ErrorMessage, Loading } from "./ui.tsx"

// Each page's code loads when it is first shown: the first page needs only the shell, the client and itself
// (log-in and sign-up too: a logged-in visitor never loads them). `lazyPage` draws "Loading the page…" (main busy)
// until its chunk is in: no Suspense, so no 300 ms reveal throttle (lazyComponent in routes.tsx).
const lazyPage = (load: () => Promise<ComponentType>) =>
  lazyComponent<object>(() => load().then((page) => ({ default: page })), <Loading what="the page" />)
const LogIn = lazyPage(() => import("./pages/Auth.tsx").then((m) => m.LogInPage))
const SignUp = lazyPage(() => import("./pages/Auth.tsx").then((m) => m.SignUpPage))
const Account = lazyPage(() => import("./pages/Account.tsx").then((m) => m.AccountPage))
const ApiSettings = lazyPage(() => import("./pages/ApiSettings.tsx").then((m) => m.ApiSettingsPage))
const ResetPassword = lazyPage(() => import("./pages/Links.tsx").then((m) => m.ResetPasswordPage))
const VerifyEmail = lazyPage(() => import("./pages/Links.tsx").then((m) => m.VerifyEmailPage))
const Sessions = lazyPage(() => import("./pages/Sessions.tsx").then((m) => m.SessionsPage))
const Team = lazyPage(() => import("./pages/Team.tsx").then((m) => m.TeamPage))
const AcceptInvitation = lazyPage(() => import("./pages/Team.tsx").then((m) => m.AcceptInvitationPage))
const Consent = lazyPage(() => import("./pages/Consent.tsx").then((m) => m.ConsentPage))
const GoogleCallback = lazyPage(() => import("./pages/Connections.tsx").then((m) => m.GoogleCallbackPage))
const Websites = lazyPage(() => import("./pages/Websites.tsx").then((m) => m.WebsitesPage))
// A website's frame (its heading and tabs) is the report pages' code: it loads with them.
const Frame = lazyComponent<Parameters<typeof WebsiteFrameOf>[0]>(
  () => import("./pages/reports/shared.tsx").then((m) => ({ default: m.WebsiteFrame })),
  <Loading what="the page" />
)
const WebsiteFrame = Frame.Component

/**
 * The code of the page in the address bar starts loading with the shell, before the session is known (most
 * visitors of a dashboard page have one), so it is usually in by the time the page can be drawn.
 */
const pageLoads: Record<string, () => Promise<unknown>> = {
  "/": loadOverviewPage,
  "/overview": loadOverviewPage,
  "/websites": Websites.load,
  "/settings/api": ApiSettings.load,
  "/account": Account.load,
  "/sessions": Sessions.load,
  "/team": Team.load,
  [ACCEPT_INVITATION_PAGE]: AcceptInvitation.load,
  "/consent": Consent.load,
  "/login": LogIn.load,
  "/signup": SignUp.load
}
const loadPage = (path: string) => {
  const website = matchWebsite(path)
  const loads = website !== null ? [Frame.load, website.tab.load] : [pageLoads[path]]
  for (const load of loads) load?.().catch(() => undefined)
}
if (typeof window !== "undefined") loadPage(window.location.pathname)

const publicPages: Record<string, () => ReactNode> = {
  "/login": () => <LogIn.Component />,
  "/signup": () => <SignUp.Component />,
  // The pages the mailed links open: the contract names them, the server writes them into the mail.
  [VERIFY_EMAIL_PAGE]: () => <VerifyEmail.Component />,
  [RESET_PASSWORD_PAGE]: () => <ResetPassword.Component />,
  [ACCEPT_INVITATION_PAGE]: () => <AcceptInvitation.Component />
}

const privatePage = (path: string): ReactNode => {
  if (path === "/overview") return <OverviewPage />
  if (path === "/websites") return <Websites.Component />
  const website = matchWebsite(path)
  if (website !== null) {
    // The page's chunk starts loading now, alongside the frame's (not once the frame has drawn).
    loadPage(path)
    const Page = website.tab.page
    return (
      <WebsiteFrame id={website.id} tab={website.tab.tab}>
        {(w) => <Page website={w} />}
      </WebsiteFrame>
    )
  }
  if (path === "/settings/api") return <ApiSettings.Component />
  if (path === "/account") return <Account.Component />
  if (path === "/sessions") return <Sessions.Component />
  if (path === "/team") return <Team.Component />
  // Where /oauth/authorize sends the owner to approve an MCP client (docs/mcp.md).
  if (path === "/consent") return <Consent.Component />
  // Where Google sends the browser back (the server's default GOOGLE_REDIRECT_URI).
  if (path === GOOGLE_CALLBACK_PAGE) return <GoogleCallback.Component />
  return (
    <>
      <h1>Page not found</h1>
      <p>
        There is no page at <code>{path}</code>. <Link href="/websites">Go to your websites</Link>.
      </p>
    </>
  )
}

const Private = ({ path, search }: { readonly path: string; readonly search: string }) => {
  const session = useAtomValue(sessionAtom)
  const retry = useAtomRefresh(sessionAtom)
  const loggedOut = AsyncResult.isFailure(session) && isUnauthenticated(session.cause)
  useEffect(() => {
    if (AsyncResult.isSuccess(session)) setCsrfToken(session.value.csrfToken)
    if (loggedOut) {
      setCsrfToken(null)
      navigate(`/login?next=${encodeURIComponent(path + search)}`, { replace: true })
    }
  }, [session, loggedOut, path, search])
  const loggedIn = AsyncResult.isSuccess(session)
  useEffect(() => {
    // Logged in: the website pages' code is fetched in idle time, so opening one later shows it at once.
    if (loggedIn) prefetchWebsitePages([Frame.load])
  }, [loggedIn])
  if (AsyncResult.isSuccess(session)) {
    return (
      <Layout user={session.value.user} path={path}>
        {privatePage(path)}
      </Layout>
    )
  }
  if (AsyncResult.isFailure(session) && !loggedOut) {
    return (
      <BusyMain className="narrow">
        <h1>sitehealth</h1>
        <ErrorMessage cause={session.cause} title="Could not check your session." />
        <button type="button" onClick={retry}>Try again</button>
      </BusyMain>
    )
  }
  return (
    <BusyMain className="narrow">
      <Loading what="your session" />
    </BusyMain>
  )
}

/** The last resort: a rendering error becomes a message, never a blank page. */
class Boundary extends Component<{ readonly children: ReactNode }, { readonly error: unknown }> {
  override state = { error: undefined as unknown }
  static getDerivedStateFromError(error: unknown) {
    return { error }
  }
  override render() {
    if (this.state.error !== undefined) {
      return (
        <BusyMain className="narrow">
          <h1>Something went wrong</h1>
          <ErrorMessage error={this.state.error} title="This page failed to display." />
          <button type="button" onClick={() => window.location.reload()}>Reload the page</button>
        </BusyMain>
      )
    }
    return this.props.children
  }
}

export const App = () => {
  const { path, query } = useLocation()
  useEffect(() => {
    if (path === "/") navigate("/overview", { replace: true })
  }, [path])
  useFocusHeading(path)
  const page = publicPages[path]
  const search = query.toString() === "" ? "" : `?${query.toString()}`
  return (
    <Boundary key={path}>
      {page !== undefined
        ? (
          <BusyMain className="narrow">
            <p className="brand-line">
              <Link href="/login" className="brandmark">sitehealth</Link>
            </p>
            {page()}
          </BusyMain>
        )
        : <Private path={path === "/" ? "/overview" : path} search={search} />}
    </Boundary>
  )
}
