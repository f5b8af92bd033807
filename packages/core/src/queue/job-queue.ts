import type { ConsolaInstance } from "consola";
import { sql } from "kysely";
import { PreparedInsert, type PreparedQuery } from "../db/prepared.js";
import type { AnyDb, AnyTransaction, JobsTable } from "../db/types.js";
import type { Writes } from "../db/write.js";
import { VellumError } from "../errors/vellum-error.js";
import type { Leases } from "../leases/leases.js";
import { ulidFactory } from "../ids.js";
import { JOBS_TABLE } from "./migrations.js";
import type {
  DeliveryHandler,
  JobFilter,
  JobRecord,
  KeyStats,
  NewJob,
  ProcessOptions,
  QueueStats,
  TransactionalHandler,
} from "./types.js";
import { jobById, toJobRecord } from "./job-row.js";
import { AppliedJobsPruner } from "./prune.js";
import { type QueueErrorHandler, QueueWorker } from "./worker.js";
import { WritePressure } from "./write-pressure.js";

/** Shared by every queue in the process so ids sort in enqueue order even within one millisecond. */
const nextJobId = ulidFactory();

const JOB_COLUMNS = [
  "id",
  "queue",
  "key",
  "type",
  "payload",
  "status",
  "attempts",
  "run_at",
  "last_error",
  "error_code",
  "created_at",
  "updated_at",
] as const;

export interface JobQueueOptions {
  db: AnyDb;
  writes: Writes;
  /** Runs a worker's batch with commits that do not wait for the disk (see `DatabaseOps.withDeferredSync`). */
  deferSync?: <T>(work: (connection: AnyDb) => Promise<T>) => Promise<T>;
  logger: ConsolaInstance;
  onError: QueueErrorHandler;
  /** With several processes on one database, each queue is worked by the one holding its lease (`queueLease`). */
  leases?: Leases;
  /**
   * `DatabaseOps.dataVersion`: with it, the queues this process works look for new jobs within
   * {@link FOREIGN_LOOK_MS} of another process committing some (say, a create it accepted), instead
   * of at their next poll.
   */
  dataVersion?: () => number;
}

/** How often a process checks whether another one committed to the database (jobs it may have enqueued). */
const FOREIGN_LOOK_MS = 25;

/** The lease that lets a process work `queue`. */
export const queueLease = (queue: string) => `queue:${queue}`;

/**
 * The kernel's durable job queue, kept in the `_vellum_jobs` table. Each queue name is its own
 * ordered stream with its own worker; a job is durable once the transaction that enqueued it commits.
 */
export class JobQueue {
  readonly #options: JobQueueOptions;
  readonly #db: AnyDb;
  readonly #workers = new Map<string, QueueWorker>();
  /** Queued writes being applied, which deliveries yield to. */
  readonly #pressure = new WritePressure();
  readonly #appliedAfterPrune = new Map<string, (id: string) => Promise<boolean>>();
  /** Queues that keep their applied jobs longer or shorter than the default (`retainAppliedMs`). */
  readonly #retention = new Map<string, number>();
  /** The insert of `enqueueMany`, compiled once per row count: it runs for every write that goes through a queue. */
  readonly #insert: PreparedInsert;
  readonly #byId: PreparedQuery<JobsTable>;
  readonly #pruner: AppliedJobsPruner;
  #started = false;
  #foreignLook: NodeJS.Timeout | undefined;

  constructor(options: JobQueueOptions) {
    this.#options = options;
    this.#db = options.db;
    this.#insert = new PreparedInsert(options.db, JOBS_TABLE, JOB_COLUMNS);
    this.#byId = jobById(options.db);
    this.#pruner = new AppliedJobsPruner(options.db);
  }

  /** Inserts a job through `executor`; inside the caller's transaction the job exists only if it commits. */
  async enqueue(
    executor: AnyDb | AnyTransaction,
    queue: string,
    type: string,
    payload: unknown,
    key: string | null = null,
  ): Promise<JobRecord> {
    const [job] = await this.enqueueMany(executor, queue, [{ type, payload, key }]);
    return job as JobRecord;
  }

  /**
   * Inserts `jobs` of `queue` through `executor`, in one statement, with ids in their order;
   * inside the caller's transaction they exist only if it commits.
   */
  async enqueueMany(executor: AnyDb | AnyTransaction, queue: string, jobs: readonly NewJob[]): Promise<JobRecord[]> {
    if (jobs.length === 0) return [];
    const now = Date.now();
    const timestamp = new Date(now).toISOString();
    const records = jobs.map(({ type, payload, key }): JobRecord => ({
      id: nextJobId(now),
      queue,
      key: key ?? null,
      type,
      payload,
      status: "queued",
      attempts: 0,
      run_at: now,
      last_error: null,
      error_code: null,
      created_at: timestamp,
      updated_at: timestamp,
    }));
    const rows = records.map((job) =>
      JOB_COLUMNS.map((column) => (column === "payload" ? JSON.stringify(job.payload ?? null) : job[column])),
    );
    await this.#insert.run(executor, rows);
    setImmediate(() => this.notify(queue));
    return records;
  }

  /** Registers the one handler of `queue`, owned by plugin `owner`; its worker starts now if the queue is started. */
  process(
    owner: string,
    queue: string,
    handler: TransactionalHandler<never> | DeliveryHandler,
    options: ProcessOptions = {},
  ): void {
    if (this.#workers.has(queue)) {
      const message = `queue '${queue}' already has a handler; register one handler per queue name`;
      throw new VellumError("VELLUM_QUEUE_DUPLICATE", message, { data: { queue }, plugin: owner });
    }
    const run = handler as TransactionalHandler<unknown> | DeliveryHandler;
    const worker = new QueueWorker(queue, owner, run, options, this.#options, this.#pressure);
    this.#workers.set(queue, worker);
    if (options.appliedAfterPrune) this.#appliedAfterPrune.set(queue, options.appliedAfterPrune);
    if (options.retainAppliedMs !== undefined) this.#retention.set(queue, options.retainAppliedMs);
    this.#options.leases?.watch(queueLease(queue), {
      acquired: () => {
        if (this.#started) worker.start();
      },
      lost: () => worker.stop(),
    });
    if (this.#mayWork(queue)) worker.start();
  }

  /** Started, and (with leases) holding the queue's lease. */
  #mayWork(queue: string): boolean {
    return this.#started && (this.#options.leases?.holds(queueLease(queue)) ?? true);
  }

  /** Applies queued job `id` of `queue` now, in its own write, ahead of the worker; false when it is not queued. */
  async applyNow(queue: string, id: string): Promise<boolean> {
    return (await this.#workers.get(queue)?.applyNow(id)) ?? false;
  }

  /** Whether a job that is no longer in the table was applied before it was pruned. */
  async appliedBeforePrune(id: string): Promise<boolean> {
    for (const check of this.#appliedAfterPrune.values()) if (await check(id)) return true;
    return false;
  }

  start(): void {
    this.#started = true;
    for (const [queue, worker] of this.#workers) if (this.#mayWork(queue)) worker.start();
    const dataVersion = this.#options.dataVersion;
    if (dataVersion && !this.#foreignLook) {
      let seen: number | undefined;
      this.#foreignLook = setInterval(() => {
        let version: number;
        try {
          version = dataVersion();
        } catch {
          return; // a failing disk or a closing database: the workers' own looks report it
        }
        if (seen !== undefined && version !== seen)
          for (const [queue, worker] of this.#workers) if (this.#mayWork(queue)) worker.notify();
        seen = version;
      }, FOREIGN_LOOK_MS);
      this.#foreignLook.unref();
    }
  }

  async stop(): Promise<void> {
    this.#started = false;
    clearInterval(this.#foreignLook);
    this.#foreignLook = undefined;
    await Promise.all([...this.#workers.values()].map((worker) => worker.stop()));
  }

  notify(queue: string): void {
    this.#workers.get(queue)?.notify();
  }

  queues(): string[] {
    return [...this.#workers.keys()];
  }

  /** Whether this process works `queue` now: it has its handler, runs, and holds the queue's lease. */
  workedHere(queue: string): boolean {
    return this.#workers.has(queue) && this.#mayWork(queue);
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const [row] = await this.#byId.rowsNow(this.#db, [id]);
    return row ? toJobRecord(row) : undefined;
  }

  /** Jobs of `queue` waiting to be applied (retries included). */
  async depth(queue: string): Promise<number> {
    const query = sql<{
      n: number;
    }>`SELECT count(*) AS n FROM _vellum_jobs WHERE queue = ${queue} AND status = 'queued'`;
    return Number((await query.execute(this.#db)).rows[0]?.n ?? 0);
  }

  /** One row per queue that has queued or failed (dead-letter) jobs, sorted by queue name. */
  async stats(): Promise<QueueStats[]> {
    const query = sql<QueueStats>`SELECT queue, SUM(status = 'queued') AS queued, SUM(status = 'failed') AS failed
      FROM _vellum_jobs WHERE status IN ('queued', 'failed') GROUP BY queue ORDER BY queue`;
    const { rows } = await query.execute(this.#db);
    return rows.map((row) => ({ queue: row.queue, queued: Number(row.queued), failed: Number(row.failed) }));
  }

  /** Per key of `queue`: its jobs waiting, retrying and dead; keys with none of them are left out. */
  async keyStats(queue: string): Promise<KeyStats[]> {
    const query = sql<KeyStats>`SELECT key, SUM(status = 'queued') AS queued,
        SUM(status = 'queued' AND attempts > 0) AS retrying, SUM(status = 'failed') AS failed
      FROM _vellum_jobs WHERE status IN ('queued', 'failed') AND queue = ${queue} GROUP BY key ORDER BY key`;
    const { rows } = await query.execute(this.#db);
    return rows.map((row) => ({
      key: row.key,
      queued: Number(row.queued),
      retrying: Number(row.retrying),
      failed: Number(row.failed),
    }));
  }

  /** The newest jobs of `queue` that match `filter` (id descending), at most `limit`, older than `before` if given. */
  async list(queue: string, filter: JobFilter & { before?: string; limit: number }): Promise<JobRecord[]> {
    let query = this.#db.selectFrom(JOBS_TABLE).selectAll().where("queue", "=", queue);
    if (filter.status !== undefined) query = query.where("status", "=", filter.status);
    if (filter.key !== undefined) query = query.where("key", "=", filter.key);
    if (filter.ids !== undefined) query = query.where("id", "in", filter.ids.length > 0 ? [...filter.ids] : [""]);
    if (filter.before !== undefined) query = query.where("id", "<", filter.before);
    const rows = await query.orderBy("id", "desc").limit(filter.limit).execute();
    return rows.map((row) => toJobRecord(row as JobsTable));
  }

  /** Moves dead-letter jobs (of `queue`, or only those `filter` selects) back to queued with their attempts reset. */
  async replay(queue?: string, filter: Omit<JobFilter, "status"> = {}): Promise<number> {
    if (filter.ids?.length === 0) return 0;
    let update = this.#db
      .updateTable(JOBS_TABLE)
      .set({
        status: "queued",
        attempts: 0,
        run_at: Date.now(),
        last_error: null,
        error_code: null,
        updated_at: new Date().toISOString(),
      })
      .where("status", "=", "failed");
    if (queue !== undefined) update = update.where("queue", "=", queue);
    if (filter.ids) update = update.where("id", "in", [...filter.ids]);
    if (filter.key !== undefined) update = update.where("key", "=", filter.key);
    const result = await update.executeTakeFirst();
    const count = Number(result.numUpdatedRows);
    if (count > 0) {
      if (queue !== undefined) this.notify(queue);
      else for (const worker of this.#workers.values()) worker.notify();
    }
    return count;
  }

  /**
   * Deletes applied jobs last updated longer ago than their queue keeps them (`retainAppliedMs`,
   * else `defaultMs`), a chunk at a time (`AppliedJobsPruner`); returns how many.
   */
  async prune(defaultMs: number): Promise<number> {
    return this.#pruner.prune((queue) => this.#retention.get(queue) ?? defaultMs);
  }
}
