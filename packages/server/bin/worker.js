#!/usr/bin/env node
// `npm run worker`: the background worker (src/worker/main.ts), run from its bundle (bin/launch.js).
import { launch } from "./launch.js"

await launch("worker", "src/worker/main.ts")
