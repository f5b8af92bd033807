import type { ConsolaInstance } from "consola";
import type { Transaction } from "kysely";
import type { VellumConfig } from "../config.js";
import type { MigrationRunner } from "../db/migrations.js";
import type { KernelTables, VellumDatabase } from "../db/types.js";
import type { WriteErrorReporter, Writes } from "../db/write.js";
import type { HealthRegistry } from "../health/components.js";
import { createHookApi, type VellumHookBus } from "../hooks/hooks.js";
import { createPluginRouter, type RouteTable } from "../http/routes.js";
import type { Shortcuts } from "../http/shortcuts.js";
import type { VellumMetrics } from "../metrics/metrics.js";
import type { CommandHandlers } from "../plugin/commands.js";
import type { KernelInfo, PluginDb, VellumPluginContext } from "../plugin/context.js";
import type { AnyVellumPlugin, VellumPlugin } from "../plugin/define.js";
import { pluginOptions } from "../plugin/options.js";
import type { JobQueue } from "../queue/job-queue.js";
import { createPluginQueue } from "../queue/plugin-queue.js";
import type { Scheduler } from "../scheduler.js";
import type { ServiceRegistry } from "../services.js";
import { loadOrCreateSecret, pluginDataFolder } from "../storage/data-folder.js";
import type { VellumStorage } from "../storage/storage.js";
import type { LifecycleCallbacks } from "./lifecycle.js";

/** Everything of the kernel a plugin context is built from. */
export interface KernelParts {
  config: VellumConfig;
  logger: ConsolaInstance;
  bus: VellumHookBus;
  hookRegistry: Array<() => void>;
  database: VellumDatabase;
  writes: Writes;
  storage: VellumStorage;
  metrics: VellumMetrics;
  queue: JobQueue;
  scheduler: Scheduler;
  routes: RouteTable;
  shortcuts: Shortcuts;
  migrations: MigrationRunner;
  services: ServiceRegistry;
  lifecycle: LifecycleCallbacks;
  commands: CommandHandlers;
  components: HealthRegistry;
  features: ReadonlySet<string>;
  kernel: KernelInfo;
  captureError: WriteErrorReporter;
}

/** Transitive dependencies of a plugin (what it may inject from). */
function dependencyClosure(plugin: AnyVellumPlugin, byName: Map<string, AnyVellumPlugin>): string[] {
  const seen = new Set<string>();
  const walk = (p: AnyVellumPlugin) => {
    for (const dep of [...p.dependsOn, ...p.optionalDependsOn]) {
      const next = byName.get(dep);
      if (next && !seen.has(dep)) {
        seen.add(dep);
        walk(next);
      }
    }
  };
  walk(plugin);
  return [...seen];
}

export function createPluginContext<O extends object, T extends object>(
  plugin: VellumPlugin<O, T>,
  parts: KernelParts,
  byName: Map<string, AnyVellumPlugin>,
): VellumPluginContext<O, T> {
  const name = plugin.name;
  const options = pluginOptions<O>(plugin, parts.config);
  const allowed = dependencyClosure(plugin, byName);
  return {
    name,
    options,
    config: parts.config,
    dataDir: parts.config.dataDir,
    logger: parts.logger.withTag(name),
    hooks: createHookApi(parts.bus, name, parts.hookRegistry),
    db: parts.database.kysely as unknown as PluginDb<T>,
    transaction: (trx) => trx as unknown as Transaction<T & KernelTables>,
    write: (work) => parts.writes.run(name, work as never),
    database: parts.database.ops,
    get storage() {
      return parts.storage.namespace(name);
    },
    dataFolder: (folder) => pluginDataFolder(parts.config.dataDir, folder),
    secret: (secret) => loadOrCreateSecret(parts.config.dataDir, `${name}-${secret}`),
    metrics: parts.metrics,
    queue: (queueName) => createPluginQueue(parts.queue, name, queueName),
    router: createPluginRouter(parts.routes, parts.shortcuts, name),
    features: parts.features,
    kernel: parts.kernel,
    healthComponent: (component) => parts.components.register(name, component),
    migrations: (set) => parts.migrations.register(name, set),
    schedule: (job, opts, fn) => parts.scheduler.schedule(`${name}:${job}`, opts, fn),
    provide: (key, impl) => parts.services.provide(name, key, impl),
    inject: (key) => parts.services.inject(name, key, allowed),
    tryInject: (key) => parts.services.tryInject(name, key, allowed),
    onStart: (fn) => parts.lifecycle.add(name, "start", fn),
    onReady: (fn) => parts.lifecycle.add(name, "ready", fn),
    onPreClose: (fn) => parts.lifecycle.add(name, "preClose", fn),
    onClose: (fn) => parts.lifecycle.add(name, "close", fn),
    command: (command, handler) => parts.commands.bind(plugin, command, handler),
    captureError: (error, tags) => parts.captureError(error, { plugin: name, ...(tags ? { tags } : {}) }),
  };
}
