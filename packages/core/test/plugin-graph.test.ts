import { describe, expect, it } from "vitest";
import { definePlugin, resolvePlugins, VellumError } from "../src/index.js";

const plugin = (name: string, dependsOn: string[] = [], optionalDependsOn: string[] = []) =>
  definePlugin({ name, dependsOn, optionalDependsOn, setup() {} })();

const names = (list: ReturnType<typeof resolvePlugins>) => list.map((p) => p.name);

function codeOf(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (error) {
    if (VellumError.is(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error("expected a VellumError");
}

describe("plugin graph", () => {
  it("keeps registration order when there are no dependencies", () => {
    expect(names(resolvePlugins([plugin("a"), plugin("b"), plugin("c")]))).toEqual(["a", "b", "c"]);
  });

  it("orders dependencies first, whatever the registration order", () => {
    const list = [plugin("search", ["articles"]), plugin("webhooks", ["articles"]), plugin("articles")];
    expect(names(resolvePlugins(list))).toEqual(["articles", "search", "webhooks"]);
  });

  it("orders after optional dependencies when present and ignores them when absent", () => {
    expect(names(resolvePlugins([plugin("cache", [], ["articles"]), plugin("articles")]))).toEqual([
      "articles",
      "cache",
    ]);
    expect(names(resolvePlugins([plugin("cache", [], ["articles"])]))).toEqual(["cache"]);
  });

  it("drops falsy entries", () => {
    expect(names(resolvePlugins([plugin("a"), false, null, undefined, plugin("b")]))).toEqual(["a", "b"]);
  });

  it("rejects a duplicate name, naming the plugin", () => {
    const error = codeOf(() => resolvePlugins([plugin("articles"), plugin("articles")]));
    expect(error.code).toBe("VELLUM_PLUGIN_DUPLICATE");
    expect(error.message).toContain("'articles'");
  });

  it("rejects a missing dependency, naming both plugins", () => {
    const error = codeOf(() => resolvePlugins([plugin("search", ["articles"])]));
    expect(error.code).toBe("VELLUM_PLUGIN_DEPENDENCY_MISSING");
    expect(error.message).toContain("'search'");
    expect(error.message).toContain("'articles'");
  });

  it("rejects a cycle and prints it", () => {
    const error = codeOf(() => resolvePlugins([plugin("a", ["b"]), plugin("b", ["c"]), plugin("c", ["a"])]));
    expect(error.code).toBe("VELLUM_PLUGIN_DEPENDENCY_CYCLE");
    expect(error.message).toMatch(/a -> b -> c -> a/);
  });
});
