// Rewrites docs/config.md from the settings the command line and the default plugins declare
// (run through `npm run docs:config`, which builds first; packages/vellum/test/config-doc.test.ts checks it).
import { writeFileSync } from "node:fs";
import { renderConfigReference } from "@vellum/cli";
import { defaultPlugins, settingPrefixes } from "vellum";

const target = new URL("../docs/config.md", import.meta.url);
writeFileSync(target, renderConfigReference(defaultPlugins(), { settingPrefixes }));
process.stdout.write("wrote docs/config.md\n");
