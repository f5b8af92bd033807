import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { walkFiles } from "@vellum/core";
import { describe, expect, it } from "vitest";

const SOURCE = join(import.meta.dirname, "..", "src");
const OTHER_PLUGINS = /\b(search|webhooks?|backups?|articles?|media|cache)\b/gi;
/**
 * Names the contract fixes that contain one of those words: the `/health/ethics` check keys (the
 * word pattern already skips them, `_` being a word character), its `details.backup` key, and
 * the `Cache-Control` header.
 */
const ALLOWED = [/^\s*backup: /gm, /\bcache-control\b/gi];

describe("the health plugin names no other plugin", () => {
  it("mentions none of the other first-party plugins anywhere in its source", async () => {
    const files = await walkFiles(SOURCE, ["**/*.ts"]);
    expect(files.length).toBeGreaterThan(10);
    const found: string[] = [];
    for (const file of files) {
      const text = ALLOWED.reduce(
        (t, pattern) => t.replace(pattern, ""),
        await readFile(join(SOURCE, file.path), "utf8"),
      );
      for (const [word] of text.matchAll(OTHER_PLUGINS)) found.push(`${file.path}: ${word}`);
    }
    expect(found).toEqual([]);
  });
});
