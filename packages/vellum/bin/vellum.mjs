#!/usr/bin/env node
import { runCli } from "@vellum/cli";
import { defaultPlugins, settingPrefixes, version } from "../dist/index.js";

process.exitCode = await runCli({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  defaultPlugins,
  settingPrefixes,
  version,
});
