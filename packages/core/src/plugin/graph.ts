import { CoreErrors } from "../errors/vellum-error.js";
import type { AnyVellumPlugin } from "./define.js";

/**
 * Normalizes the plugin list (falsy entries dropped), rejects duplicates, and sorts topologically
 * by `dependsOn` / `optionalDependsOn` with registration order as the tie-break. A missing
 * dependency or a cycle throws a VellumError naming the plugins involved.
 */
export function resolvePlugins(list: ReadonlyArray<AnyVellumPlugin | false | null | undefined>): AnyVellumPlugin[] {
  const plugins = list.filter((p): p is AnyVellumPlugin => Boolean(p));
  const byName = new Map<string, AnyVellumPlugin>();
  for (const plugin of plugins) {
    if (byName.has(plugin.name)) throw CoreErrors.pluginDuplicate([plugin.name], { plugin: plugin.name });
    byName.set(plugin.name, plugin);
  }
  const edges = new Map<string, string[]>();
  for (const plugin of plugins) {
    for (const dep of plugin.dependsOn) {
      if (!byName.has(dep)) throw CoreErrors.pluginDependencyMissing([plugin.name, dep], { plugin: plugin.name });
    }
    edges.set(plugin.name, [...plugin.dependsOn, ...plugin.optionalDependsOn.filter((d) => byName.has(d))]);
  }

  const ordered: AnyVellumPlugin[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (name: string, path: string[]) => {
    const seen = state.get(name);
    if (seen === "done") return;
    if (seen === "visiting") {
      const cycle = [...path.slice(path.indexOf(name)), name];
      throw CoreErrors.pluginDependencyCycle([cycle], { plugin: name });
    }
    state.set(name, "visiting");
    for (const dep of edges.get(name) ?? []) visit(dep, [...path, name]);
    state.set(name, "done");
    ordered.push(byName.get(name) as AnyVellumPlugin);
  };
  for (const plugin of plugins) visit(plugin.name, []);
  return ordered;
}
