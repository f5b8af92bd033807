import { readFileSync } from "node:fs";
import { join } from "node:path";
import { definePlugin, type KernelInfo } from "@vellum/core";
import { createTestVellum } from "@vellum/core/testing";
import { expect, it } from "vitest";
import { defaultPlugins } from "../src/index.js";

const apiDoc = readFileSync(join(import.meta.dirname, "..", "..", "..", "docs", "api.md"), "utf8");

/** The rows of docs/api.md's tables: `METHOD path`. */
function documentedRoutes(): Set<string> {
  const rows = apiDoc.matchAll(/^\| `([A-Z]+)` \| `([^`]+)` \|/gm);
  return new Set([...rows].map(([, method, path]) => `${method} ${path}`));
}

it("docs/api.md lists every route the default plugins register, and no other", async () => {
  let kernel: KernelInfo | undefined;
  const probe = definePlugin({
    name: "route-probe",
    setup(ctx) {
      kernel = ctx.kernel;
    },
  })();
  const t = await createTestVellum({ plugins: [...defaultPlugins(), probe] });
  try {
    const registered = new Set(kernel?.routes().map((r) => `${r.method} ${r.path}`));
    expect(registered.size).toBeGreaterThan(20);
    expect([...registered].filter((route) => !documentedRoutes().has(route))).toEqual([]);
    expect([...documentedRoutes()].filter((route) => !registered.has(route))).toEqual([]);
  } finally {
    await t.close();
  }
});
