// The kernel's job queue wired as `createVellum` wires it (a `Writes` on a hook bus), without the
// rest of an instance. Free of vitest so the crash test's child process can use it too.
import { createConsola } from "consola";
import { MigrationRunner } from "../../src/db/migrations.js";
import { openSqlite } from "../../src/db/sqlite.js";
import type { QueryListener, VellumDatabase } from "../../src/db/types.js";
import { type WriteErrorReporter, Writes } from "../../src/db/write.js";
import { VellumHookBus } from "../../src/hooks/hooks.js";
import { JobQueue } from "../../src/queue/job-queue.js";
import { queueMigrations } from "../../src/queue/migrations.js";
import type { Leases } from "../../src/leases/leases.js";
import type { DeliveryHandler, ProcessOptions, TransactionalHandler } from "../../src/queue/types.js";

export type { AnyDb, AnyTransaction } from "../../src/db/types.js";

/** The schema of handlers on ad-hoc tables. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests create their tables as they go
export type AnyTables = any;

/** Opens the SQLite file at `path` (each statement given to `onQuery`) and applies the kernel's job table migrations. */
export async function openQueueDatabase(path: string, onQuery?: QueryListener): Promise<VellumDatabase> {
  const database = await openSqlite({ path }, onQuery);
  const runner = new MigrationRunner(database.kysely);
  runner.register("core", queueMigrations);
  const { error } = await runner.migrate(["core"]);
  if (error) {
    await database.close();
    throw error;
  }
  return database;
}

/** A failure a write reported (a commit subscriber of another plugin, a flush, after-commit work). */
export type ReportedWriteError = Parameters<WriteErrorReporter>[1] & { error: unknown };

/** The plugin that owns the harness's queues: the owner of their writes. */
export const TEST_OWNER = "test";

export interface JobQueueHarness {
  queue: JobQueue;
  /**
   * `queue.process(TEST_OWNER, name, …)` for handlers on ad-hoc tables. `JobQueue.process` types the
   * write as `Write<never>` (plugins get theirs typed through `ctx.queue()`), so it is cast here, once.
   */
  process(
    name: string,
    handler: TransactionalHandler<AnyTables>,
    options?: ProcessOptions & { mode?: "transactional" },
  ): void;
  process(name: string, handler: DeliveryHandler, options: ProcessOptions & { mode: "at-least-once" }): void;
  /** What the queue reported (`onError`: dead letters, worker errors). */
  errors: Array<{ error: unknown; queue: string; jobId?: string }>;
  /** What the write primitive reported. */
  reported: ReportedWriteError[];
}

export interface JobQueueHarnessOptions {
  /** Also called with every error and report as it happens. */
  onFailure?: (failure: unknown) => void;
  /** Work each queue only while holding its lease, as an instance does. */
  leases?: Leases;
  /** Look for jobs another connection committed, as an instance does (`DatabaseOps.dataVersion`). */
  watchOtherConnections?: boolean;
  /** Runs before each of the queue's writes opens its transaction: what a request may do in that gap. */
  beforeWrite?: () => Promise<void>;
}

/** A job queue on `database` wired as an instance wires it (batches commit with deferred sync). */
export function createJobQueue(database: VellumDatabase, options: JobQueueHarnessOptions = {}): JobQueueHarness {
  const errors: JobQueueHarness["errors"] = [];
  const reported: ReportedWriteError[] = [];
  const report: WriteErrorReporter = (error, info) => {
    reported.push({ error, ...info });
    options.onFailure?.({ error, ...info });
  };
  const writes = new Writes(database.kysely, new VellumHookBus(report), report);
  const queue = new JobQueue({
    db: database.kysely,
    writes,
    deferSync: async (work) => {
      await options.beforeWrite?.();
      return database.ops.withDeferredSync(work);
    },
    logger: createConsola({ level: -999 }),
    ...(options.leases && { leases: options.leases }),
    ...(options.watchOtherConnections && { dataVersion: database.ops.dataVersion }),
    onError: (error, info) => {
      errors.push({ error, ...info });
      options.onFailure?.({ error, ...info });
    },
  });
  const process = (
    name: string,
    handler: TransactionalHandler<AnyTables> | DeliveryHandler,
    processOptions?: ProcessOptions,
  ) => queue.process(TEST_OWNER, name, handler as unknown as TransactionalHandler<never>, processOptions);
  return { queue, errors, reported, process };
}
