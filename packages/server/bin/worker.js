#!/usr/bin/env node
// `npm run worker`: the background worker (src/WorkerMain.ts), run from its bundle (bin/launch.js).
import { launch } from "./launch.js"

await launch("worker", "src/WorkerMain.ts")
