import { readFileSync } from "node:fs";
import { join } from "node:path";
import { walkFiles } from "@vellum/core";
import { describe, expect, it } from "vitest";
import { defaultPlugins } from "../src/index.js";

const root = join(import.meta.dirname, "..", "..", "..");

/** The contract's first-party plugins (§1), installed today or not. */
const FIRST_PARTY = ["articles", "search", "health", "media", "cache", "webhooks", "backup"];

/** Each plugin's declared variables, from the definitions themselves. */
function declaredVariables(): Map<string, string[]> {
  const byPlugin = new Map<string, string[]>();
  for (const plugin of defaultPlugins()) {
    const settings = Object.values(plugin.definition.settings ?? {}) as Array<{ env?: string }>;
    byPlugin.set(
      plugin.name,
      settings.flatMap((s) => (s.env ? [s.env] : [])),
    );
  }
  return byPlugin;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * How source names plugin `name`: as a string (`"search"`, `"cache:invalidated"`,
 * `"settings:articles-…"`), as an object key or property (`webhooks: {`, `.media`), or as its
 * package. Prose that uses the word generically ("a statement cache") is not a reference.
 */
function references(name: string): RegExp {
  const n = escape(name);
  return new RegExp(
    [`["'\`]${n}["'\`:/]`, `(?<![\\w$.])${n}\\??\\s*:(?!:)`, `\\.${n}\\b`, `@vellum/plugin-${n}\\b`, `[:-]${n}-`].join(
      "|",
    ),
  );
}

async function sources(dir: string): Promise<Array<{ path: string; text: string }>> {
  const files = await walkFiles(join(root, dir), ["**/*.ts"]);
  return files.map((file) => ({ path: `${dir}/${file.path}`, text: readFileSync(join(root, dir, file.path), "utf8") }));
}

/**
 * Core owns the shared content vocabulary (`article:*` events, `ArticleRecord`, the read-only
 * `articles` service type) so that subscribers never import the emitter: that one file may name it.
 */
const VOCABULARY: Record<string, string[]> = { articles: ["packages/core/src/services.ts"] };

describe("core, the CLI and the health plugin know no other plugin", () => {
  const variables = declaredVariables();

  it("reads the variables the default plugins declare", () => {
    expect(variables.get("health")).toContain("STORAGE_QUOTA_GB");
    expect(variables.get("backup")).toContain("SERVICE_RESTORE_FROM");
  });

  it.each([
    ["packages/core/src", undefined],
    ["packages/cli/src", undefined],
    ["plugins/health/src", "health"],
  ])("%s names no other plugin, setting variable or package", async (dir, self) => {
    const others = FIRST_PARTY.filter((name) => name !== self);
    const foreignVariables = [...variables].filter(([plugin]) => plugin !== self).flatMap(([, names]) => names);
    const found: string[] = [];
    for (const { path, text } of await sources(dir)) {
      for (const name of others) {
        if (VOCABULARY[name]?.includes(path)) continue;
        const match = references(name).exec(text);
        if (match) found.push(`${path}: names plugin '${name}' (${match[0]})`);
      }
      for (const variable of foreignVariables) if (text.includes(variable)) found.push(`${path}: holds ${variable}`);
    }
    expect(found).toEqual([]);
  });

  it("catches a plugin named the way core used to name them", () => {
    expect(references("media").test('export const DATA_DIR_MOUNTS = ["media", "mailboxes"];')).toBe(true);
    expect(references("cache").test('"cache:invalidated",')).toBe(true);
    expect(references("webhooks").test("pluginOptions: { webhooks: { urls: [] } }")).toBe(true);
    expect(references("search").test('export const REPORTED_COMPONENTS = ["search", "webhooks"];')).toBe(true);
    expect(references("articles").test('const SECRET_KEY = "settings:articles-cursor-secret";')).toBe(true);
    expect(references("search").test("event.url.searchParams.get(name)")).toBe(false);
    expect(references("cache").test("the prepared-statement cache of the kernel")).toBe(false);
  });
});
