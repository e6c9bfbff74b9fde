import { createRoot } from "react-dom/client"
import { HttpApiClient } from "effect/http-api"
import { FetchHttpClient } from "effect/http"
import { Effect } from "effect"
import { SiteHealthApi } from "@sitehealth/domain/Api"

const App = () => <p>hello</p>
createRoot(document.getElementById("root")!).render(<App />)
Effect.runPromise(HttpApiClient.make(SiteHealthApi).pipe(Effect.provide(FetchHttpClient.layer))).then(console.log)
