import { resolve } from "node:path";
import type { ConsolaInstance } from "consola";
import type { VellumConfig } from "../config.js";
import { CoreErrors, VellumError } from "../errors/vellum-error.js";
import type { CommandIO } from "./commands.js";
import type { AnyVellumPlugin } from "./define.js";
import { pluginOptions } from "./options.js";

/**
 * What a plugin's `prepare` step and its offline commands get: its options and where the data
 * lives. Nothing is open or started: no database, no routes, no queues.
 */
export interface PluginOfflineContext<O extends object = Record<string, unknown>> {
  readonly name: string;
  /** The plugin's effective options, checked as setup checks them. */
  readonly options: Readonly<O>;
  /** The data directory, absolute; it may not exist yet. */
  readonly dataDir: string;
  /** The SQLite file the kernel opens, absolute; undefined for an in-memory database. */
  readonly databasePath: string | undefined;
  readonly logger: ConsolaInstance;
}

/** The handler of a command declared with `run`: it runs without starting Vellum. */
export type OfflineCommandHandler<O extends object = Record<string, unknown>> = (
  io: CommandIO,
  ctx: PluginOfflineContext<O>,
) => Promise<number | undefined> | Promise<void>;

/** The kernel's SQLite file for `config`, absolute, or undefined for `:memory:`. */
export function databasePath(config: VellumConfig): string | undefined {
  const path = config.database?.sqlite?.path ?? resolve(config.dataDir, "db", "vellum.sqlite");
  return path === ":memory:" ? undefined : resolve(path);
}

/** The offline context of one plugin. */
export function offlineContext<O extends object>(
  plugin: AnyVellumPlugin,
  config: VellumConfig,
  logger: ConsolaInstance,
): PluginOfflineContext<O> {
  return {
    name: plugin.name,
    options: pluginOptions<O>(plugin, config),
    dataDir: resolve(config.dataDir),
    databasePath: databasePath(config),
    logger: logger.withTag(plugin.name),
  };
}

const prepared = new Map<string, Promise<void>>();

/**
 * Runs every plugin's `prepare` (in setup order) before anything opens the data dir, once per data
 * dir in a process: `createVellum` runs it at init, and a host that writes into the data dir before
 * creating the instance (the CLI writes its generated key) runs it first. A failure stops the start.
 */
export function prepareDataDir(
  plugins: readonly AnyVellumPlugin[],
  config: VellumConfig,
  logger: ConsolaInstance,
): Promise<void> {
  const key = resolve(config.dataDir);
  let done = prepared.get(key);
  if (done === undefined) {
    done = runPrepare(plugins, config, logger);
    prepared.set(key, done);
    done.catch(() => prepared.delete(key));
  }
  return done;
}

async function runPrepare(
  plugins: readonly AnyVellumPlugin[],
  config: VellumConfig,
  logger: ConsolaInstance,
): Promise<void> {
  for (const plugin of plugins) {
    const prepare = plugin.definition.prepare;
    if (!prepare) continue;
    try {
      await prepare(offlineContext(plugin, config, logger));
    } catch (cause) {
      if (VellumError.is(cause) && cause.plugin === plugin.name) throw cause;
      const reason = cause instanceof Error ? cause.message : String(cause);
      throw CoreErrors.pluginSetupFailed([plugin.name, `prepare: ${reason}`], { plugin: plugin.name, cause });
    }
  }
}
