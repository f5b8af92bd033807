import type { HookKind } from "../hooks/hooks.js";
import type { CommandDeclaration } from "./commands.js";
import type { VellumPluginContext } from "./context.js";
import type { PluginOfflineContext } from "./offline.js";
import type { SettingDeclarations, SettingProblem } from "./settings.js";

export interface VellumPluginDefinition<O extends object = Record<string, unknown>, T extends object = object> {
  /** Unique; used for the logger tag, migration table, storage namespace and error attribution. */
  name: string;
  version?: string;
  /** Plugins that must be set up (and migrated) before this one. */
  dependsOn?: string[];
  /** Ordered after these when they are present; missing is fine. */
  optionalDependsOn?: string[];
  /** Key in `config.pluginOptions`; defaults to `name`. */
  configKey?: string;
  /** Defaults of options that are not declared settings. */
  defaults?: Partial<O>;
  /**
   * The plugin's settings, each declared once (variable, parser, check, default, secret,
   * description): the CLI reads, checks, prints and documents them; setup checks them again.
   */
  settings?: SettingDeclarations<O>;
  /** Rules that span several settings, on the effective options; `dataDir` for path rules. */
  checkSettings?(options: Readonly<O>, context: { dataDir: string }): SettingProblem[];
  /** The hooks this plugin emits, with their kind (`HookKind`); subscribing to an undeclared hook fails setup. */
  hooks?: Record<string, HookKind>;
  /**
   * CLI commands this plugin adds (`vellum <name>`), each with its description and the options its handler
   * reads (shown by `vellum <name> --help`); bind each in setup with `ctx.command(name, run)`.
   */
  commands?: Record<string, CommandDeclaration<O>>;
  /**
   * Runs at init before the kernel opens the data dir or sets up any plugin, once per data dir in
   * a process: restore a data dir before the first start, finish an interrupted swap. A throw stops
   * the start.
   */
  prepare?(ctx: PluginOfflineContext<O>): void | Promise<void>;
  /** Declares routes, hooks, migrations, queues, jobs and services. No long I/O here. */
  setup(ctx: VellumPluginContext<O, T>): void | Promise<void>;
}

/** A plugin instance: a definition plus the options it was created with. */
export interface VellumPlugin<O extends object = Record<string, unknown>, T extends object = object> {
  readonly name: string;
  readonly dependsOn: readonly string[];
  readonly optionalDependsOn: readonly string[];
  readonly definition: VellumPluginDefinition<O, T>;
  readonly options: Partial<O>;
}

/** A plugin of any option type, as lists of plugins hold them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- option and table types differ per plugin; each checks its own
export type AnyVellumPlugin = VellumPlugin<any, any>;

/**
 * Declares a plugin and returns its options factory: `plugins: [articles(), search({ limit: 50 })]`.
 * `O` types the options, `T` the plugin's tables (`ctx.db` is typed with them and the kernel's).
 */
export function definePlugin<O extends object = Record<string, unknown>, T extends object = object>(
  definition: VellumPluginDefinition<O, T>,
): (options?: Partial<O>) => VellumPlugin<O, T> {
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
