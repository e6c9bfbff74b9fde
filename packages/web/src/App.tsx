/**
 * The pages and the session gate. Public pages (log in, sign up, the links from mails) render alone; the
 * others need a session: while it loads they say so, when there is none they send the user to log in (and
 * back afterwards, `?next=`), and any other failure is shown with a way to try again.
 */
import { useAtomRefresh, useAtomValue } from "@effect/atom-react"
import { AsyncResult } from "effect/reactivity"
import { Component, lazy, type ReactNode, Suspense, useEffect } from "react"
import { GOOGLE_CALLBACK_PAGE, RESET_PASSWORD_PAGE, VERIFY_EMAIL_PAGE } from "@sitehealth/domain/DashboardCore"
import { sessionAtom, setCsrfToken } from "./client.ts"
import { isUnauthenticated } from "./errors.ts"
import { Layout } from "./Layout.tsx"
import { lazyComponent, Link, matchWebsite, navigate, OverviewPage, prefetchWebsitePages, useFocusHeading, useLocation } from "./router.tsx"
import type { WebsiteFrame as WebsiteFrameOf } from "./pages/reports/shared.tsx"
import { BusyMain, ErrorMessage, Loading } from "./ui.tsx"

// Each page's code loads when it is first shown: the first page needs only the shell, the client and itself
// (log-in and sign-up too: a logged-in visitor never loads them).
const LogInPage = lazy(() => import("./pages/Auth.tsx").then((m) => ({ default: m.LogInPage })))
const SignUpPage = lazy(() => import("./pages/Auth.tsx").then((m) => ({ default: m.SignUpPage })))
const AccountPage = lazy(() => import("./pages/Account.tsx").then((m) => ({ default: m.AccountPage })))
const ApiSettingsPage = lazy(() => import("./pages/ApiSettings.tsx").then((m) => ({ default: m.ApiSettingsPage })))
const ResetPasswordPage = lazy(() => import("./pages/Links.tsx").then((m) => ({ default: m.ResetPasswordPage })))
const VerifyEmailPage = lazy(() => import("./pages/Links.tsx").then((m) => ({ default: m.VerifyEmailPage })))
const SessionsPage = lazy(() => import("./pages/Sessions.tsx").then((m) => ({ default: m.SessionsPage })))
const GoogleCallbackPage = lazy(() => import("./pages/Connections.tsx").then((m) => ({ default: m.GoogleCallbackPage })))
const WebsitesPage = lazy(() => import("./pages/Websites.tsx").then((m) => ({ default: m.WebsitesPage })))
// A website's frame (its heading and tabs) is the report pages' code: it loads with them.
const Frame = lazyComponent<Parameters<typeof WebsiteFrameOf>[0]>(() => import("./pages/reports/shared.tsx").then((m) => ({ default: m.WebsiteFrame })))
const WebsiteFrame = Frame.Component

const publicPages: Record<string, () => ReactNode> = {
  "/login": () => <LogInPage />,
  "/signup": () => <SignUpPage />,
  // The pages the mailed links open: the contract names them, the server writes them into the mail.
  [VERIFY_EMAIL_PAGE]: () => <VerifyEmailPage />,
  [RESET_PASSWORD_PAGE]: () => <ResetPasswordPage />
}

const privatePage = (path: string): ReactNode => {
  if (path === "/overview") return <OverviewPage />
  if (path === "/websites") return <WebsitesPage />
  const website = matchWebsite(path)
  if (website !== null) {
    // The page's chunk starts loading now, alongside the frame's (not once the frame has drawn).
    void Frame.load()
    void website.tab.load()
    const Page = website.tab.page
    return (
      <WebsiteFrame id={website.id} tab={website.tab.tab}>
        {(w) => <Suspense fallback={<Loading what={`the ${website.tab.label.toLowerCase()} page`} />}><Page website={w} /></Suspense>}
      </WebsiteFrame>
    )
  }
  if (path === "/settings/api") return <ApiSettingsPage />
  if (path === "/account") return <AccountPage />
  if (path === "/sessions") return <SessionsPage />
  // Where Google sends the browser back (the server's default GOOGLE_REDIRECT_URI).
  if (path === GOOGLE_CALLBACK_PAGE) return <GoogleCallbackPage />
  return (
    <>
      <h1>Page not found</h1>
      <p>There is no page at <code>{path}</code>. <Link href="/websites">Go to your websites</Link>.</p>
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
        <Suspense fallback={<Loading what="the page" />}>{privatePage(path)}</Suspense>
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
            <p className="brand-line"><Link href="/login" className="brandmark">sitehealth</Link></p>
            <Suspense fallback={<Loading what="the page" />}>{page()}</Suspense>
          </BusyMain>
        )
        : <Private path={path === "/" ? "/overview" : path} search={search} />}
    </Boundary>
  )
}
