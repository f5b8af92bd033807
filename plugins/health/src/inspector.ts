import type { VellumPluginContext } from "@vellum/core";
import { checkDatabase, type DatabaseCheck } from "./checks/database.js";
import { checkMigrations, type MigrationsCheck } from "./checks/migrations.js";
import { checkQueue, type QueueCheck } from "./checks/queue.js";
import { collectReports, type Reports, reported } from "./checks/reports.js";
import { type ComponentState, FailureLog, worst } from "./checks/state.js";
import { checkStorage, type StorageCheck } from "./checks/storage.js";
import type { HealthOptions, ResolvedHealthOptions } from "./options.js";
import type { StorageUsage } from "./storage-usage.js";

/** Components other plugins are expected to report; shown as `absent` when none does. */
export const REPORTED_COMPONENTS = ["search", "webhooks", "backup"] as const;

export interface Overview {
  db: DatabaseCheck;
  storage: StorageCheck;
  queue: QueueCheck;
  migrations: MigrationsCheck;
  reports: Reports;
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
    return checkQueue(this.ctx, this.options.queue, this.options.checkTimeoutMs, this.#log);
  }

  migrations(): Promise<MigrationsCheck> {
    return checkMigrations(this.ctx, this.options.checkTimeoutMs, this.#log);
  }

  reports(): Promise<Reports> {
    return collectReports(this.ctx, this.options.checkTimeoutMs, this.#log);
  }

  async overview(): Promise<Overview> {
    const [db, storage, queue, migrations, reports] = await Promise.all([
      this.database(),
      this.storage(),
      this.queue(),
      this.migrations(),
      this.reports(),
    ]);
    return { db, storage, queue, migrations, reports };
  }
}

/**
 * Every component's state: our own checks, the expected reported ones (`absent` if missing), then
 * any other report. A report under one of our own names merges to the worse state.
 */
export function componentStates(o: Overview): Record<string, ComponentState> {
  const states: Record<string, ComponentState> = {
    db: o.db.state,
    storage: o.storage.state,
    queue: o.queue.state,
    migrations: o.migrations.state,
  };
  for (const name of REPORTED_COMPONENTS) states[name] = reported(o.reports, name).state;
  for (const [name, report] of o.reports) {
    const own = states[name];
    states[name] = own === undefined ? report.state : worst(own, report.state);
  }
  return states;
}
