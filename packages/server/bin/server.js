#!/usr/bin/env node
// `npm start`: the server (src/main.ts), run from its bundle (bin/launch.js).
import { launch } from "./launch.js"

await launch("server", "src/main.ts")
