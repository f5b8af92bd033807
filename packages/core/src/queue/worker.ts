import { sql } from "kysely";
import { PreparedQuery } from "../db/prepared.js";
import { DeliveryMarks } from "./delivery-marks.js";
import { type DueJobs, dueHeads, dueInBatches, keyHead } from "./due-jobs.js";
import type { AnyDb, JobsTable } from "../db/types.js";
import { inSavepoint, RequiredFlushError, rethrowIfLost } from "../db/write.js";
import { storageFailure } from "../errors/storage-failure.js";
import { defaultBackoffMs, errorMessage, type JobFailure } from "./job-error.js";
import { batchFences, jobById, recordFailedAttempt, recordInterruption, toJobRecord } from "./job-row.js";
import { type JobQueueOptions, queueLease } from "./job-queue.js";
import { CoreErrors } from "../errors/vellum-error.js";
import type { WritePressure } from "./write-pressure.js";
import type { DeliveryHandler, JobRecord, ProcessOptions, TransactionalHandler } from "./types.js";

export type QueueErrorHandler = (error: unknown, info: { queue: string; owner: string; jobId?: string }) => void;

/** Delivery queues: the least time between a look that found nothing to start and the next one a new job asks for. */
const IDLE_LOOK_MS = 10;

/**
 * Works one queue: a loop that applies the queue's due jobs in id order, in order per key. A job
 * waiting for its retry holds back only the later jobs of its own key; every other job goes on.
 * An at-least-once queue runs up to `concurrency` deliveries at once, never two of one key, and
 * starts few while a transactional queue applies writes (`WritePressure`); so does a background
 * transactional queue with its batches.
 */
export class QueueWorker {
  readonly #queue: string;
  /** The plugin that owns the queue: the owner of the writes its jobs make. */
  readonly #owner: string;
  readonly #handler: TransactionalHandler<unknown> | DeliveryHandler;
  readonly #shared: JobQueueOptions;
  readonly #deferSync: NonNullable<JobQueueOptions["deferSync"]>;
  readonly #transactional: boolean;
  /** Yields to the writes of the other transactional queues, and does not count as one of them. */
  readonly #yields: boolean;
  readonly #batchSize: number;
  readonly #maxAttempts: number;
  readonly #backoffMs: (attempt: number, error: unknown) => number;
  readonly #pollMs: number;
  readonly #concurrency: number;
  /** At-least-once: the deliveries running now, by job id. */
  readonly #inFlight = new Map<string, Promise<void>>();
  /** Handed to deliveries; aborted by `stop()` so a slow one does not hold a shutdown. */
  #abort = new AbortController();
  readonly #due: DueJobs;
  readonly #keyHead: ReturnType<typeof keyHead>;
  readonly #fences: ReturnType<typeof batchFences>;
  readonly #byId: PreparedQuery<JobsTable>;
  readonly #marks: DeliveryMarks;
  /** The last look found more due heads than free slots: a finished delivery hands its slot to the oldest. */
  #starved = false;
  readonly #nextRetry: PreparedQuery<{ next: number | null }>;
  #loop: Promise<void> | undefined;
  #stopped = true;
  #notified = false;
  /** Ends the loop's sleep; set while it sleeps, until `#wakeAt` (Unix ms). */
  #wake: (() => void) | undefined;
  #wakeAt = Number.POSITIVE_INFINITY;
  /** When a look last found no job to start (Unix ms). */
  #idleLookAt = 0;
  /** Shared by the queues of the instance: transactional ones mark it, delivery ones yield to it. */
  readonly #pressure: WritePressure;
  /** When a delivery, or a background queue's batch, last started (Unix ms). */
  #lastStartAt = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    queue: string,
    owner: string,
    handler: TransactionalHandler<unknown> | DeliveryHandler,
    options: ProcessOptions,
    shared: JobQueueOptions,
    pressure: WritePressure,
  ) {
    this.#queue = queue;
    this.#pressure = pressure;
    this.#owner = owner;
    this.#handler = handler;
    this.#shared = shared;
    this.#deferSync = shared.deferSync ?? ((work) => work(shared.db));
    this.#transactional = (options.mode ?? "transactional") === "transactional";
    this.#yields = !this.#transactional || options.background === true;
    this.#batchSize = this.#transactional ? Math.max(1, options.batchSize ?? 64) : 1;
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.#backoffMs = options.backoffMs ?? defaultBackoffMs;
    this.#pollMs = options.pollMs ?? 1000;
    this.#concurrency = this.#transactional ? 1 : Math.max(1, options.concurrency ?? 1);
    this.#due = this.#transactional ? dueInBatches(queue, shared.db) : dueHeads(queue, shared.db);
    this.#keyHead = keyHead(queue, shared.db);
    this.#fences = batchFences(queue, shared.db);
    this.#byId = jobById(shared.db);
    this.#marks = new DeliveryMarks(queue, shared.db, this.#deferSync);
    // Through the partial index of the jobs waiting for a retry, named: left to itself, SQLite took
    // (status, queue) and read every queued job of the queue (a growing backlog) on every look.
    this.#nextRetry = new PreparedQuery(
      sql<{ next: number | null }>`SELECT MIN(run_at) AS next FROM _vellum_jobs INDEXED BY _vellum_jobs_retrying
        WHERE queue = ${queue} AND status = 'queued' AND attempts > 0`.compile(shared.db),
      1,
    );
  }

  start(): void {
    if (this.#loop) return;
    this.#stopped = false;
    if (this.#abort.signal.aborted) this.#abort = new AbortController();
    this.#loop = this.#run();
  }

  /**
   * Stops taking new jobs, aborts the signal of the deliveries in progress, and resolves once they
   * and the batch in progress have finished.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    this.#wake?.();
    const loop = this.#loop;
    await loop;
    await Promise.all(this.#inFlight.values());
    if (this.#loop === loop) this.#loop = undefined;
  }

  /**
   * New jobs: look for due ones now. A delivery or background queue whose last look found nothing
   * to start (every key's head waiting for a retry or in flight, or yielding) looks again at most every
   * {@link IDLE_LOOK_MS}: with a receiver down, every create's delivery would otherwise cost a
   * look, one per create under load.
   */
  notify(): void {
    const next = this.#idleLookAt + IDLE_LOOK_MS;
    if (this.#yields && this.#wake !== undefined && next > Date.now()) {
      this.#wakeBy(next);
      return;
    }
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
        this.#shared.onError(error, { queue: this.#queue, owner: this.#owner });
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
      this.#wake = () => {
        clearTimeout(this.#timer);
        this.#wake = undefined;
        this.#wakeAt = Number.POSITIVE_INFINITY;
        resolve();
      };
      this.#wakeBy(Date.now() + ms);
    });
  }

  /**
   * Makes the loop look again by `at` (Unix ms): a retry due sooner than the loop's next look
   * (the poll) moves that look forward; during a look, the loop looks once more right after it.
   */
  #wakeBy(at: number): void {
    const wake = this.#wake;
    if (wake === undefined) {
      this.#notified = true;
      return;
    }
    if (at >= this.#wakeAt) return;
    clearTimeout(this.#timer);
    this.#wakeAt = at;
    this.#timer = setTimeout(wake, Math.max(0, at - Date.now()));
    this.#timer.unref();
  }

  /**
   * Applies the due jobs (or starts their deliveries) unless another process may have taken the
   * queue over (this one could not renew its lease); returns how long to wait before looking again.
   */
  async #tick(): Promise<number> {
    const now = Date.now();
    const { db } = this.#shared;
    const free = this.#concurrency - this.#inFlight.size;
    if (free <= 0 || this.#shared.leases?.holds(queueLease(this.#queue)) === false) return this.#pollMs;
    // Deliveries and background work yield to queued writes being applied (`WritePressure`), for a while at a time.
    const yieldMs = this.#yields ? this.#pressure.wait(this.#lastStartAt, now) : 0;
    if (yieldMs > 0) {
      this.#idleLookAt = now;
      return yieldMs;
    }
    // Deliveries: one more than the free slots, to learn whether some due job must wait for a slot.
    const limit = this.#transactional ? this.#batchSize : free + this.#inFlight.size + 1;
    const rows = (await this.#due.rows(db, now, limit)).filter(
      (row) => !this.#inFlight.has(row.id) && !this.#marks.held(row.id, now),
    );
    if (rows.length === 0) {
      this.#idleLookAt = now;
      const next = Number((await this.#nextRetry.rows(db, [this.#queue]))[0]?.next ?? Number.NaN);
      return Number.isFinite(next) && next > now ? Math.min(next - now, this.#pollMs) : this.#pollMs;
    }
    const due = rows.map(toJobRecord);
    if (this.#transactional) await this.#applyBatch(due);
    else {
      this.#starved = due.length > free;
      for (const job of due.slice(0, free)) this.#startDelivery(job);
    }
    return 0;
  }

  /**
   * Group commit: the batch is one write of the queue's owner, each job in a savepoint. A job that
   * throws is rolled back (with what it collected and deferred) and noted as failed; the later jobs
   * of its key wait, the others go on. Applied jobs are marked in the transaction of their effects,
   * whose commit need not wait for the disk: a power loss leaves the jobs queued to run again.
   */
  async #applyBatch(jobs: JobRecord[]): Promise<void> {
    if (this.#yields) this.#lastStartAt = Date.now();
    const done = this.#yields ? undefined : this.#pressure.applying(jobs.length);
    const failures = await this.#applyOrSplit(jobs).finally(() => done?.());
    for (const failure of failures) this.#reportFailure(failure);
  }

  /**
   * A required flush that fails (`RequiredFlushError`) fails the whole batch: it is then applied
   * again one job a transaction, so the failure counts against the job whose flush fails and the
   * others go on. Any other failure of the transaction leaves the jobs queued for the next look.
   */
  async #applyOrSplit(jobs: JobRecord[]): Promise<JobFailure[]> {
    try {
      return await this.#applyTogether(jobs);
    } catch (error) {
      // A full disk or a held lock is no job's failure: the batch waits for the next look like a failed commit.
      if (!(error instanceof RequiredFlushError) || storageFailure(error.cause)) throw error;
      const [only] = jobs;
      if (jobs.length === 1 && only)
        return [await this.#deferSync((connection) => this.#recordFailure(connection, only, error.cause))];
      const failures: JobFailure[] = [];
      const failedKeys = new Set<string>();
      for (const job of jobs) {
        const key = job.key ?? job.id;
        if (failedKeys.has(key)) continue;
        const failed = await this.#applyOrSplit([job]);
        if (failed.length > 0) failedKeys.add(key);
        failures.push(...failed);
      }
      return failures;
    }
  }

  /** `jobs` in one transaction: returns the failures of those that threw, their rows updated in it. */
  async #applyTogether(jobs: JobRecord[]): Promise<JobFailure[]> {
    const handler = this.#handler as TransactionalHandler<unknown>;
    const { writes } = this.#shared;
    const failures: JobFailure[] = [];
    const { committed } = await this.#deferSync((connection) =>
      writes.transaction(connection, this.#owner, async (trx, scope) => {
        const applied: JobRecord[] = [];
        const failedKeys = new Set<string>();
        const w = writes.bind(this.#owner, trx, scope);
        // Read before the transaction: a job applied or tried since then is left out, quietly.
        for (const job of await this.#fences.stillQueued(trx, jobs)) {
          const key = job.key ?? job.id;
          if (failedKeys.has(key)) continue;
          try {
            await inSavepoint(trx, () => handler(job, w), scope);
            applied.push(job);
          } catch (error) {
            rethrowIfLost(error);
            if (storageFailure(error)) throw error;
            failedKeys.add(key);
            failures.push(await this.#recordFailure(trx, job, error));
          }
        }
        // A fence: the write lock held since `stillQueued` keeps every other writer out, so this never throws.
        if ((await this.#fences.markApplied(trx, applied)) < applied.length) throw CoreErrors.jobsTaken([this.#queue]);
      }),
    );
    await committed();
    return failures;
  }

  /** Applies queued job `id` now, ahead of the worker, as one write; false when it is no longer queued. */
  async applyNow(id: string): Promise<boolean> {
    if (!this.#transactional)
      throw new Error(`queue '${this.#queue}' delivers at least once: applyNow is for transactional queues`);
    const handler = this.#handler as TransactionalHandler<unknown>;
    const { db, writes } = this.#shared;
    const { value, committed } = await writes.transaction(db, this.#owner, async (trx, scope) => {
      const [row] = await this.#byId.rows(trx, [id]);
      if (row?.status !== "queued") return false;
      const job = toJobRecord(row);
      await handler(job, writes.bind(this.#owner, trx, scope));
      await this.#fences.markApplied(trx, [job]);
      return true;
    });
    await committed();
    return value;
  }

  /** Runs a delivery beside the others; when it ends, its key's next job may start (`#followUp`). */
  #startDelivery(job: JobRecord): void {
    if (this.#inFlight.has(job.id)) return;
    this.#lastStartAt = Date.now();
    const report = (error: unknown) =>
      this.#shared.onError(error, { queue: this.#queue, owner: this.#owner, jobId: job.id });
    const delivery = this.#deliver(job)
      .catch(report)
      .finally(() => {
        this.#inFlight.delete(job.id);
        this.#followUp(job.key).catch(report);
      });
    this.#inFlight.set(job.id, delivery);
  }

  /**
   * After a delivery of `key` ends, its slot goes to the key's next job when that is due: one
   * indexed lookup instead of a look over every key. The loop looks over all of them when jobs
   * of other keys wait for a slot, for jobs without a key, and on its own schedule (retries).
   */
  async #followUp(key: string | null): Promise<void> {
    if (this.#stopped || this.#shared.leases?.holds(queueLease(this.#queue)) === false) return;
    if (key === null || this.#starved || this.#pressure.wait(this.#lastStartAt) > 0) {
      this.notify();
      return;
    }
    const head = await this.#keyHead.row(this.#shared.db, key);
    if (this.#stopped || !head || Number(head.run_at) > Date.now() || this.#marks.held(head.id)) return;
    if (this.#inFlight.size < this.#concurrency) this.#startDelivery(toJobRecord(head));
    else this.notify();
  }

  /**
   * At least once: the handler runs outside any transaction and the job is marked applied
   * afterwards, its payload replaced by what the handler resolved to, with the deliveries that end
   * in the same turn (`DeliveryMarks`). Neither that mark nor a failure's record waits for the
   * disk: a power loss can only send a delivery again.
   */
  async #deliver(job: JobRecord): Promise<void> {
    let result: unknown;
    try {
      result = await (this.#handler as DeliveryHandler)(job, this.#abort.signal);
    } catch (error) {
      // Cut short by `stop()` (a shutdown): noted, but it does not use up one of the job's attempts.
      if (this.#abort.signal.aborted) await recordInterruption(this.#shared.db, job.id, error);
      else this.#reportFailure(await this.#deferSync((connection) => this.#recordFailure(connection, job, error)));
      return;
    }
    await this.#marks.mark(job.id, JSON.stringify(result ?? null), this.#inFlight.size <= 1);
  }

  async #recordFailure(executor: AnyDb, job: JobRecord, error: unknown): Promise<JobFailure> {
    const attempts = job.attempts + 1;
    const dead = attempts >= this.#maxAttempts;
    const retryInMs = dead ? 0 : Math.max(0, this.#backoffMs(attempts, error));
    await recordFailedAttempt(executor, job.id, { attempts, dead, retryInMs }, error);
    return { job: { ...job, attempts }, error, dead, retryInMs };
  }

  #reportFailure({ job, error, dead, retryInMs }: JobFailure): void {
    if (dead) {
      this.#shared.onError(error, { queue: this.#queue, owner: this.#owner, jobId: job.id });
      return;
    }
    this.#shared.logger.warn(
      `job ${job.id} (${job.type}) on queue '${this.#queue}' failed (attempt ${job.attempts} of ${this.#maxAttempts}); retrying in ${retryInMs} ms: ${errorMessage(error)}`,
    );
    this.#wakeBy(Date.now() + retryInMs);
  }
}
