import type { VellumPluginContext } from "./context.js";

export interface VellumPluginDefinition<O extends object = Record<string, unknown>> {
  /** Unique; used for the logger tag, migration table, storage namespace and error attribution. */
  name: string;
  version?: string;
  /** Plugins that must be set up (and migrated) before this one. */
  dependsOn?: string[];
  /** Ordered after these when they are present; missing is fine. */
  optionalDependsOn?: string[];
  /** Key in `config.pluginOptions`; defaults to `name`. */
  configKey?: string;
  defaults?: Partial<O>;
  /** CLI commands this plugin adds (`vellum <name>`); bind each in setup with `ctx.command(name, run)`. */
  commands?: Record<string, { description: string }>;
  /** Declares routes, hooks, migrations, queues, jobs and services. No long I/O here. */
  setup(ctx: VellumPluginContext<O>): void | Promise<void>;
}

/** A plugin instance: a definition plus the options it was created with. */
export interface VellumPlugin<O extends object = Record<string, unknown>> {
  readonly name: string;
  readonly dependsOn: readonly string[];
  readonly optionalDependsOn: readonly string[];
  readonly definition: VellumPluginDefinition<O>;
  readonly options: Partial<O>;
}

/** A plugin of any option type, as lists of plugins hold them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- option types differ per plugin; each checks its own
export type AnyVellumPlugin = VellumPlugin<any>;

/**
 * Declares a plugin and returns its options factory:
 * `plugins: [articles(), search({ limit: 50 })]`.
 */
export function definePlugin<O extends object = Record<string, unknown>>(
  definition: VellumPluginDefinition<O>,
): (options?: Partial<O>) => VellumPlugin<O> {
  return (options = {}) => ({
    name: definition.name,
    dependsOn: definition.dependsOn ?? [],
    optionalDependsOn: definition.optionalDependsOn ?? [],
    definition,
    options,
  });
}

/** Alias for hosts that also import h3's or Nitro's `definePlugin`. */
export { definePlugin as defineVellumPlugin };
