import type { RegisteredComponent, VellumPluginContext } from "@vellum/core";
import { checkComponent, checkComponents, type ComponentResult, type ComponentResults } from "./checks/components.js";
import { checkCounters, type CountersCheck } from "./checks/counters.js";
import { checkDatabase, type DatabaseCheck } from "./checks/database.js";
import { checkMigrations, type MigrationsCheck } from "./checks/migrations.js";
import { checkQueue, type QueueCheck } from "./checks/queue.js";
import { type ComponentState, FailureLog } from "./checks/state.js";
import { checkStorage, type StorageCheck } from "./checks/storage.js";
import type { HealthOptions, ResolvedHealthOptions } from "./options.js";
import type { StorageUsage } from "./storage-usage.js";

export interface Overview {
  db: DatabaseCheck;
  storage: StorageCheck;
  queue: QueueCheck;
  migrations: MigrationsCheck;
  /** Present when rate-limit and lockout counters live in a store shared by every process. */
  counters: CountersCheck | undefined;
  components: ComponentResults;
}

/**
 * Runs the checks for the routes. Every method resolves (never throws) within about
 * `checkTimeoutMs`, so a broken component shows as a state, never as a 500.
 */
export class Inspector {
  readonly ctx: VellumPluginContext<HealthOptions>;
  readonly options: ResolvedHealthOptions;
  readonly #usage: StorageUsage;
  readonly #log: FailureLog;

  constructor(ctx: VellumPluginContext<HealthOptions>, options: ResolvedHealthOptions, usage: StorageUsage) {
    this.ctx = ctx;
    this.options = options;
    this.#usage = usage;
    this.#log = new FailureLog(ctx.logger);
  }

  database(): Promise<DatabaseCheck> {
    return checkDatabase(this.ctx, this.options.checkTimeoutMs, this.#log);
  }

  storage(): Promise<StorageCheck> {
    return checkStorage(this.#usage, this.options.storage);
  }

  queue(): Promise<QueueCheck> {
    return checkQueue(this.ctx.kernel, this.options.queue, this.options.checkTimeoutMs, this.#log);
  }

  migrations(): Promise<MigrationsCheck> {
    return checkMigrations(this.ctx, this.options.checkTimeoutMs, this.#log);
  }

  /** The registered components' answers; with `filter`, only those it keeps. */
  components(filter: (c: RegisteredComponent) => boolean = () => true): Promise<ComponentResults> {
    return checkComponents(this.ctx.kernel.components().filter(filter), this.options.checkTimeoutMs, this.#log);
  }

  /** One registered component's answer, or undefined when no plugin registered `name`. */
  async component(name: string): Promise<ComponentResult | undefined> {
    const registered = this.ctx.kernel.components().find((c) => c.name === name);
    return registered && checkComponent(registered, this.options.checkTimeoutMs, this.#log);
  }

  async overview(): Promise<Overview> {
    const [db, storage, queue, migrations, components] = await Promise.all([
      this.database(),
      this.storage(),
      this.queue(),
      this.migrations(),
      this.components(),
    ]);
    return { db, storage, queue, migrations, counters: checkCounters(this.ctx.kernel), components };
  }
}

/**
 * Every component's state: our own checks, then the expected components (`absent` until a plugin
 * registers them), then the registered ones. Registered names never clash with our own (see
 * `reserved-names.ts`).
 */
export function componentStates(o: Overview, expected: readonly string[]): Record<string, ComponentState> {
  const states: Record<string, ComponentState> = {
    db: o.db.state,
    storage: o.storage.state,
    queue: o.queue.state,
    migrations: o.migrations.state,
  };
  if (o.counters) states.counters = o.counters.state;
  for (const name of expected) states[name] ??= "absent";
  for (const [name, result] of o.components) states[name] = result.state;
  return states;
}
