import type { ConsolaInstance } from "consola";
import { defu } from "defu";
import type { Kysely } from "kysely";
import type { Storage } from "unstorage";
import type { VellumConfig } from "../config.js";
import type { MigrationRunner } from "../db/migrations.js";
import type { DatabaseOps } from "../db/types.js";
import { createHookApi, type VellumHookBus } from "../hooks/hooks.js";
import { createPluginRouter, type RouteTable } from "../http/routes.js";
import type { VellumMetrics } from "../metrics/metrics.js";
import type { CommandHandlers } from "../plugin/commands.js";
import type { KernelInfo, VellumPluginContext } from "../plugin/context.js";
import type { VellumPlugin } from "../plugin/define.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { Scheduler } from "../scheduler.js";
import type { ServiceRegistry } from "../services.js";
import type { LifecycleCallbacks } from "./lifecycle.js";

/** Everything of the kernel a plugin context is built from. */
export interface KernelParts {
  config: VellumConfig;
  logger: ConsolaInstance;
  bus: VellumHookBus;
  hookRegistry: Array<() => void>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- plugins narrow the schema
  db: Kysely<any>;
  database: DatabaseOps;
  storage: Storage;
  metrics: VellumMetrics;
  queue: JobQueue;
  scheduler: Scheduler;
  routes: RouteTable;
  migrations: MigrationRunner;
  services: ServiceRegistry;
  lifecycle: LifecycleCallbacks;
  commands: CommandHandlers;
  features: ReadonlySet<string>;
  kernel: KernelInfo;
  captureError(error: unknown, info: { plugin: string; hook?: string; tags?: Record<string, string> }): void;
}

/** Transitive dependencies of a plugin (what it may inject from). */
function dependencyClosure(plugin: VellumPlugin<object>, byName: Map<string, VellumPlugin<object>>): string[] {
  const seen = new Set<string>();
  const walk = (p: VellumPlugin<object>) => {
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

export function createPluginContext<O extends object>(
  plugin: VellumPlugin<O>,
  parts: KernelParts,
  byName: Map<string, VellumPlugin<object>>,
): VellumPluginContext<O> {
  const { definition } = plugin;
  const name = plugin.name;
  const configKey = definition.configKey ?? name;
  const options = Object.freeze(
    defu(plugin.options, parts.config.pluginOptions?.[configKey] ?? {}, definition.defaults ?? {}),
  ) as Readonly<O>;
  const allowed = dependencyClosure(plugin as VellumPlugin<object>, byName);
  return {
    name,
    options,
    config: parts.config,
    dataDir: parts.config.dataDir,
    logger: parts.logger.withTag(name),
    hooks: createHookApi(parts.bus, name, parts.hookRegistry),
    db: parts.db,
    database: parts.database,
    storage: parts.storage,
    metrics: parts.metrics,
    queue: parts.queue,
    router: createPluginRouter(parts.routes, name),
    features: parts.features,
    kernel: parts.kernel,
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
