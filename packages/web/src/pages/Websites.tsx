/**
 * Websites: the list (with "Add a website" opened by `?add=1`, so the form survives a reload), and one
 * website's settings tab: edit its settings, or delete it after typing its domain.
 */
import { useAtomValue } from "@effect/atom-react"
import type { Website } from "@sitehealth/domain/Dashboard"
import { Exit } from "effect"
import { useState } from "react"
import { createWebsite, deleteWebsite, Keys, updateWebsite, websitesAtom } from "../client.ts"
import { formatDate } from "../format.ts"
import { Field, formValues, Result } from "../forms.tsx"
import { useMutation } from "../hooks.ts"
import { Link, navigate, setQuery, useLocation } from "../navigation.tsx"
import { Can, RoleNote, useCan } from "../roles.tsx"
import { MutationStatus } from "../ui.tsx"

const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC"
const zones = (): ReadonlyArray<string> => {
  try {
    return Intl.supportedValuesOf("timeZone")
  } catch {
    return [browserZone()]
  }
}
const CURRENCIES = ["USD", "EUR", "GBP", "CAD", "AUD", "CHF", "JPY", "SEK", "NOK", "DKK", "PLN", "BRL", "INR"]

const WebsiteFields = ({ website }: { readonly website?: Website }) => {
  const zone = website?.timezone ?? browserZone()
  const list = zones().includes(zone) ? zones() : [zone, ...zones()]
  const currency = website?.currency ?? "USD"
  return (
    <>
      <Field label="Name">
        <input name="name" required maxLength={100} defaultValue={website?.name ?? ""} />
      </Field>
      <Field label="Domain" hint="The bare host name, e.g. example.com">
        <input
          name="domain"
          required
          maxLength={253}
          defaultValue={website?.domain ?? ""}
          autoCapitalize="none"
          spellCheck={false}
        />
      </Field>
      <Field label="Time zone" hint="Days and weeks in reports start at midnight here.">
        <select name="timezone" defaultValue={zone}>
          {list.map((z) => <option key={z} value={z}>{z}</option>)}
        </select>
      </Field>
      <Field label="Reporting currency">
        <select name="currency" defaultValue={currency}>
          {(CURRENCIES.includes(currency) ? CURRENCIES : [currency, ...CURRENCIES]).map((c) => (
            <option key={c} value={c}>{c}</option>
          ))}
        </select>
      </Field>
    </>
  )
}

const read = (form: HTMLFormElement) => {
  const v = formValues(form)
  return {
    name: v.get("name").trim(),
    domain: v.get("domain").trim(),
    timezone: v.get("timezone"),
    currency: v.get("currency")
  }
}

const AddWebsite = () => {
  const [result, run] = useMutation(createWebsite)
  return (
    <section className="panel" aria-labelledby="add-heading">
      <h2 id="add-heading">Add a website</h2>
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          const exit = await run({ payload: read(event.currentTarget), reactivityKeys: [Keys.websites] })
          if (Exit.isSuccess(exit)) setQuery("add", null)
        }}
      >
        <MutationStatus result={result} />
        <WebsiteFields />
        <div className="row">
          <button type="submit" disabled={result.waiting}>{result.waiting ? "Adding…" : "Add website"}</button>
          <button type="button" className="secondary" onClick={() => setQuery("add", null)}>Cancel</button>
        </div>
      </form>
    </section>
  )
}

export const WebsitesPage = () => {
  const { query } = useLocation()
  const websites = useAtomValue(websitesAtom)
  const adding = query.get("add") === "1"
  return (
    <>
      <div className="row" style={{ justifyContent: "space-between" }}>
        <h1>Websites</h1>
        {adding ? null : (
          <Can level="admin">
            <button type="button" onClick={() => setQuery("add", "1")}>Add a website</button>
          </Can>
        )}
      </div>
      <Can level="admin" what="adding a website">{adding ? <AddWebsite /> : null}</Can>
      <Result result={websites} what="your websites">
        {({ websites }) =>
          websites.length === 0
            ? <p>No website yet. Add one to start: then connect its analytics and payments, and create an API token.</p>
            : (
              <table className="cards">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Domain</th>
                    <th scope="col">Time zone</th>
                    <th scope="col">Currency</th>
                    <th scope="col">Added</th>
                  </tr>
                </thead>
                <tbody>
                  {websites.map((w) => (
                    <tr key={w.id}>
                      <td data-label="Name">
                        <Link href={`/websites/${encodeURIComponent(w.id)}`}>{w.name}</Link>
                      </td>
                      <td data-label="Domain">{w.domain}</td>
                      <td data-label="Time zone">{w.timezone}</td>
                      <td data-label="Currency">{w.currency}</td>
                      <td data-label="Added">{formatDate(w.createdAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
      </Result>
    </>
  )
}

/** A website's settings tab (`/websites/:id/settings`): edit it, or delete it after typing its domain. */
export const WebsiteSettings = ({ website }: { readonly website: Website }) =>
  useCan("admin") ? <WebsiteDetail key={website.id} website={website} /> : (
    <>
      <h1>Settings</h1>
      <p>
        {website.name} ({website.domain}): time zone {website.timezone}, amounts in {website.currency}.
      </p>
      <RoleNote level="admin" what="changing or deleting a website" />
    </>
  )

const WebsiteDetail = ({ website }: { readonly website: Website }) => {
  const [saved, save] = useMutation(updateWebsite)
  const [deleted, remove] = useMutation(deleteWebsite)
  const [confirm, setConfirm] = useState("")
  const [notice, setNotice] = useState<string | null>(null)
  return (
    <>
      <h1>Settings</h1>
      <section className="panel" aria-labelledby="edit-heading">
        <h2 id="edit-heading">The website</h2>
        <form
          onSubmit={async (event) => {
            event.preventDefault()
            setNotice(null)
            const exit = await save({
              params: { id: website.id },
              payload: read(event.currentTarget),
              reactivityKeys: [Keys.websites]
            })
            if (Exit.isSuccess(exit)) setNotice("Saved.")
          }}
        >
          <MutationStatus result={saved} />
          {notice !== null ? <div className="alert ok" role="status">{notice}</div> : null}
          <WebsiteFields website={website} />
          <div className="row">
            <button type="submit" disabled={saved.waiting}>{saved.waiting ? "Saving…" : "Save changes"}</button>
          </div>
        </form>
      </section>
      <p>
        Providers are connected on the{" "}
        <Link href={`/websites/${encodeURIComponent(website.id)}/integrations`}>Integrations</Link> tab.
      </p>
      <section className="panel" aria-labelledby="delete-heading">
        <h2 id="delete-heading">Delete this website</h2>
        <p>
          Deleting removes the website with all its data and provider credentials, and takes it out of every token's
          websites. A token limited to this website alone stops working for it. This cannot be undone.
        </p>
        <form
          onSubmit={async (event) => {
            event.preventDefault()
            const exit = await remove({
              params: { id: website.id },
              payload: { confirmDomain: confirm.trim() },
              reactivityKeys: [Keys.websites, Keys.tokens]
            })
            if (Exit.isSuccess(exit)) navigate("/websites")
          }}
        >
          <MutationStatus result={deleted} />
          <Field label={`Type ${website.domain} to confirm`}>
            <input
              name="confirmDomain"
              value={confirm}
              onChange={(e) => setConfirm(e.target.value)}
              autoComplete="off"
              autoCapitalize="none"
              spellCheck={false}
            />
          </Field>
          <div className="row">
            <button type="submit" className="danger" disabled={confirm.trim() !== website.domain || deleted.waiting}>
              {deleted.waiting ? "Deleting…" : "Delete website"}
            </button>
          </div>
        </form>
      </section>
    </>
  )
}
