#!/usr/bin/env node
import { existsSync } from "node:fs";

if (!existsSync(new URL("../dist/index.js", import.meta.url))) {
  console.error("vellum: not built: run `npm run build` in the repository (a clone builds itself on `npm install`)");
  process.exit(1);
}
const { runCli } = await import("@vellum/cli");
const { defaultPlugins, settingPrefixes, version } = await import("../dist/index.js");

process.exitCode = await runCli({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  defaultPlugins,
  settingPrefixes,
  version,
});
