import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { walkFiles } from "../src/index.js";

const root = join(import.meta.dirname, "..", "..", "..");
const pluginDirs = readdirSync(join(root, "plugins"), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

describe("dependency direction", () => {
  it("finds the first-party plugins", () => {
    expect(pluginDirs.length).toBeGreaterThan(0);
  });

  it.each(pluginDirs)("plugin %s depends on @vellum/core only among @vellum packages", (name) => {
    const pkg = JSON.parse(readFileSync(join(root, "plugins", name, "package.json"), "utf8"));
    expect(pkg.name).toBe(`@vellum/plugin-${name}`);
    const vellum = (deps: Record<string, string> = {}) =>
      Object.keys(deps).filter((d) => d.startsWith("@vellum/") || d === "vellum");
    expect(vellum({ ...pkg.dependencies, ...pkg.peerDependencies })).toEqual(["@vellum/core"]);
    // Browser code a plugin bundles at build time (the admin UI) may call the public API through
    // @vellum/client, the API's client; the server code never loads it.
    expect(vellum(pkg.devDependencies).filter((d) => d !== "@vellum/client")).toEqual(["@vellum/core"]);
  });

  it.each(pluginDirs)("plugin %s never imports another plugin", async (name) => {
    const dir = join(root, "plugins", name);
    const files = await walkFiles(dir, ["src/**/*.ts", "test/**/*.{ts,mjs,js}"]);
    for (const file of files) {
      const text = readFileSync(join(dir, file.path), "utf8");
      const foreign = [...text.matchAll(/from\s+["'](@vellum\/plugin-[a-z0-9-]+)/g)].map((m) => m[1]);
      expect(
        foreign.filter((pkg) => pkg !== `@vellum/plugin-${name}`),
        file.path,
      ).toEqual([]);
      expect(text, file.path).not.toMatch(/from\s+["'](\.\.\/)+\.\.\/plugins\//);
    }
  });

  it("core never imports the CLI, the entry package or a plugin", async () => {
    const dir = join(root, "packages", "core", "src");
    for (const file of await walkFiles(dir, ["**/*.ts"])) {
      const text = readFileSync(join(dir, file.path), "utf8");
      expect(text, file.path).not.toMatch(/from\s+["'](@vellum\/(cli|plugin-)|vellum["'])/);
      expect(text, file.path).not.toMatch(/process\.env/);
    }
  });
});
