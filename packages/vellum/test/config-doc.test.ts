import { readFileSync } from "node:fs";
import { renderConfigReference } from "@vellum/cli";
import { expect, it } from "vitest";
import { defaultPlugins, settingPrefixes } from "../src/index.js";

it("docs/config.md is what the declared settings generate", () => {
  const committed = readFileSync(new URL("../../../docs/config.md", import.meta.url), "utf8");
  const generated = renderConfigReference(defaultPlugins(), { settingPrefixes });
  expect(committed, "docs/config.md is out of date: run `npm run docs:config`").toBe(generated);
});
