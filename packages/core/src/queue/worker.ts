import type { ConsolaInstance } from "consola";
import { type CompiledQuery, type Kysely, sql } from "kysely";
import { openCommitScope } from "../db/commit-scope.js";
import { PreparedQuery } from "../db/prepared.js";
import { JOBS_TABLE } from "./migrations.js";
import type {
  AfterCommit,
  DeliveryHandler,
  JobRecord,
  JobStatus,
  ProcessOptions,
  TransactionalHandler,
} from "./types.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the jobs table is reached through whatever schema the kernel uses
type AnyDb = Kysely<any>;

export type QueueErrorHandler = (error: unknown, info: { queue: string; jobId?: string }) => void;

export interface JobRow {
  id: string;
  queue: string;
  type: string;
  payload: string;
  status: string;
  attempts: number | string;
  run_at: number | string | bigint;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

export function toJobRecord(row: JobRow): JobRecord {
  return {
    id: row.id,
    queue: row.queue,
    type: row.type,
    payload: JSON.parse(row.payload),
    status: row.status as JobStatus,
    attempts: Number(row.attempts),
    run_at: Number(row.run_at),
    last_error: row.last_error,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Exponential from about one second, doubling per attempt, capped at five minutes, with ±25 % jitter. */
export function defaultBackoffMs(attempt: number): number {
  const base = Math.min(1000 * 2 ** Math.max(0, attempt - 1), 300_000);
  return Math.round(base * (0.75 + Math.random() * 0.5));
}

const MAX_ERROR_LENGTH = 2000;

function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > MAX_ERROR_LENGTH ? `${message.slice(0, MAX_ERROR_LENGTH)}…` : message;
}

export interface WorkerOptions {
  queue: string;
  handler: TransactionalHandler | DeliveryHandler;
  options: ProcessOptions;
  db: AnyDb;
  deferSync?: <T>(work: (connection: AnyDb) => Promise<T>) => Promise<T>;
  logger: ConsolaInstance;
  onError: QueueErrorHandler;
}

interface Failure {
  job: JobRecord;
  error: unknown;
  dead: boolean;
  retryInMs: number;
}

/**
 * Works one queue: a loop that applies the queue's due jobs strictly in id order. A job waiting
 * for its retry blocks the jobs behind it (head of line); other queues have their own worker.
 */
export class QueueWorker {
  readonly #queue: string;
  readonly #handler: TransactionalHandler | DeliveryHandler;
  readonly #transactional: boolean;
  readonly #batchSize: number;
  readonly #maxAttempts: number;
  readonly #backoffMs: (attempt: number) => number;
  readonly #pollMs: number;
  readonly #keepAppliedPayload: boolean;
  readonly #db: AnyDb;
  readonly #deferSync: <T>(work: (connection: AnyDb) => Promise<T>) => Promise<T>;
  readonly #logger: ConsolaInstance;
  readonly #onError: QueueErrorHandler;
  /** The head of this queue (its next jobs in id order), compiled once. */
  readonly #head: PreparedQuery<JobRow>;
  readonly #savepoint: Record<"begin" | "release" | "rollback", CompiledQuery>;
  #loop: Promise<void> | undefined;
  #stopped = true;
  #notified = false;
  #wake: (() => void) | undefined;

  constructor(options: WorkerOptions) {
    this.#queue = options.queue;
    this.#handler = options.handler;
    this.#transactional = (options.options.mode ?? "transactional") === "transactional";
    this.#batchSize = this.#transactional ? Math.max(1, options.options.batchSize ?? 64) : 1;
    this.#maxAttempts = Math.max(1, options.options.maxAttempts ?? 5);
    this.#backoffMs = options.options.backoffMs ?? defaultBackoffMs;
    this.#pollMs = options.options.pollMs ?? 1000;
    this.#keepAppliedPayload = options.options.keepAppliedPayload ?? false;
    this.#db = options.db;
    this.#deferSync = options.deferSync ?? ((work) => work(options.db));
    this.#logger = options.logger;
    this.#onError = options.onError;
    this.#head = new PreparedQuery(
      options.db
        .selectFrom(JOBS_TABLE)
        .selectAll()
        .where("queue", "=", options.queue)
        .where("status", "=", "queued")
        .orderBy("id")
        .limit(this.#batchSize)
        .compile(),
      3,
    );
    this.#savepoint = {
      begin: sql`SAVEPOINT vellum_job`.compile(options.db),
      release: sql`RELEASE SAVEPOINT vellum_job`.compile(options.db),
      rollback: sql`ROLLBACK TO SAVEPOINT vellum_job`.compile(options.db),
    };
  }

  start(): void {
    if (this.#loop) return;
    this.#stopped = false;
    this.#loop = this.#run();
  }

  /** Stops taking new jobs and resolves once the batch in progress has finished. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    const loop = this.#loop;
    await loop;
    if (this.#loop === loop) this.#loop = undefined;
  }

  notify(): void {
    this.#notified = true;
    this.#wake?.();
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      this.#notified = false;
      let delay: number;
      try {
        delay = await this.#tick();
      } catch (error) {
        this.#onError(error, { queue: this.#queue });
        delay = this.#pollMs;
      }
      if (this.#stopped) break;
      // Between batches, let I/O and timers run: with a synchronous driver every await is a microtask.
      if (delay > 0 && !this.#notified) await this.#sleep(delay);
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.#wake = done;
    });
  }

  /** Applies what is due at the head of the queue; returns how long to wait before looking again. */
  async #tick(): Promise<number> {
    const rows = await this.#head.rows(this.#db, [this.#queue, "queued", this.#batchSize]);
    const now = Date.now();
    const due: JobRecord[] = [];
    for (const row of rows) {
      if (Number(row.run_at) > now) break;
      due.push(toJobRecord(row));
    }
    const head = rows[0];
    if (!head) return this.#pollMs;
    if (due.length === 0) return Math.min(Number(head.run_at) - now, this.#pollMs);
    if (this.#transactional) await this.#applyBatch(due);
    else await this.#deliver(due[0] as JobRecord);
    return 0;
  }

  /**
   * Group commit: every job of the batch runs in one transaction, each inside a savepoint. A job
   * that throws is rolled back to its savepoint and noted as failed; the jobs before it commit and
   * the batch ends there so the queue's order holds. The applied jobs are marked with one UPDATE
   * in the same transaction as their effects, after what the jobs collected for the commit
   * (`collectForCommit`) is written. The commit need not wait for the disk: if a power
   * loss takes it, the jobs are still queued and run again, and the next synchronous commit (an
   * enqueue, which must be durable before its 202) makes it durable.
   */
  async #applyBatch(jobs: JobRecord[]): Promise<void> {
    const handler = this.#handler as TransactionalHandler;
    const afterCommit: Array<{ job: JobRecord; run: AfterCommit }> = [];
    let failure: Failure | undefined;
    await this.#deferSync((connection) =>
      connection.transaction().execute(async (trx) => {
        const applied: JobRecord[] = [];
        const { begin, release, rollback } = this.#savepoint;
        const scope = openCommitScope(trx);
        for (const job of jobs) {
          await trx.executeQuery(begin);
          const mark = scope.mark();
          try {
            const after = await handler(job, trx);
            await trx.executeQuery(release);
            applied.push(job);
            if (typeof after === "function") afterCommit.push({ job, run: after });
          } catch (error) {
            await trx.executeQuery(rollback);
            await trx.executeQuery(release);
            scope.rollbackTo(mark);
            failure = await this.#recordFailure(trx, job, error);
            break;
          }
        }
        await scope.flush(trx);
        await this.#markApplied(trx, applied);
      }),
    );
    for (const { job, run } of afterCommit) {
      try {
        await run();
      } catch (error) {
        this.#onError(error, { queue: this.#queue, jobId: job.id });
      }
    }
    if (failure) this.#reportFailure(failure);
  }

  /** At least once: the handler runs outside any transaction and the job is marked applied afterwards. */
  async #deliver(job: JobRecord): Promise<void> {
    try {
      await (this.#handler as DeliveryHandler)(job);
    } catch (error) {
      this.#reportFailure(await this.#recordFailure(this.#db, job, error));
      return;
    }
    await this.#markApplied(this.#db, [job]);
  }

  async #markApplied(executor: AnyDb, jobs: readonly JobRecord[]): Promise<void> {
    if (jobs.length === 0) return;
    await executor
      .updateTable(JOBS_TABLE)
      .set({
        status: "applied",
        updated_at: new Date().toISOString(),
        ...(this.#keepAppliedPayload ? {} : { payload: "null" }),
      })
      .where(
        "id",
        "in",
        jobs.map((job) => job.id),
      )
      .where("status", "=", "queued")
      .execute();
  }

  async #recordFailure(executor: AnyDb, job: JobRecord, error: unknown): Promise<Failure> {
    const attempts = job.attempts + 1;
    const dead = attempts >= this.#maxAttempts;
    const retryInMs = dead ? 0 : Math.max(0, this.#backoffMs(attempts));
    await executor
      .updateTable(JOBS_TABLE)
      .set({
        status: dead ? "failed" : "queued",
        attempts,
        run_at: Date.now() + retryInMs,
        last_error: errorMessage(error),
        updated_at: new Date().toISOString(),
      })
      .where("id", "=", job.id)
      .execute();
    return { job: { ...job, attempts }, error, dead, retryInMs };
  }

  #reportFailure({ job, error, dead, retryInMs }: Failure): void {
    if (dead) {
      this.#onError(error, { queue: this.#queue, jobId: job.id });
      return;
    }
    this.#logger.warn(
      `job ${job.id} (${job.type}) on queue '${this.#queue}' failed (attempt ${job.attempts} of ${this.#maxAttempts}); retrying in ${retryInMs} ms: ${errorMessage(error)}`,
    );
  }
}
