// The kernel's job queue wired as `createVellum` wires it (a `Writes` on a hook bus), without the
// rest of an instance. Free of vitest so the crash test's child process can use it too.
import { createConsola } from "consola";
import type { Kysely } from "kysely";
import { MigrationRunner } from "../../src/db/migrations.js";
import { openSqlite } from "../../src/db/sqlite.js";
import type { VellumDatabase } from "../../src/db/types.js";
import { type WriteErrorReporter, Writes } from "../../src/db/write.js";
import { VellumHookBus } from "../../src/hooks/hooks.js";
import { JobQueue } from "../../src/queue/job-queue.js";
import { queueMigrations } from "../../src/queue/migrations.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests use ad-hoc tables
export type AnyDb = Kysely<any>;

/** Opens the SQLite file at `path` and applies the kernel's job table migrations. */
export async function openQueueDatabase(path: string): Promise<VellumDatabase> {
  const database = await openSqlite({ path });
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

export interface JobQueueHarness {
  queue: JobQueue;
  /** What the queue reported (`onError`: dead letters, worker errors). */
  errors: Array<{ error: unknown; queue: string; jobId?: string }>;
  /** What the write primitive reported. */
  reported: ReportedWriteError[];
}

export interface JobQueueHarnessOptions {
  /** Batches commit without waiting for the disk, as in an instance (`DatabaseOps.withDeferredSync`). Default true. */
  deferSync?: boolean;
  /** Also called with every error and report as it happens. */
  onFailure?: (failure: unknown) => void;
}

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
    ...(options.deferSync === false ? {} : { deferSync: database.ops.withDeferredSync }),
    logger: createConsola({ level: -999 }),
    onError: (error, info) => {
      errors.push({ error, ...info });
      options.onFailure?.({ error, ...info });
    },
  });
  return { queue, errors, reported };
}
