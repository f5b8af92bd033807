import { sql } from "kysely";
import { PreparedQuery } from "../db/prepared.js";
import type { AnyDb, JobsTable } from "../db/types.js";
import { errorMessage, publicJobErrorCode } from "./job-error.js";
import { JOBS_TABLE } from "./migrations.js";
import type { JobRecord, JobStatus } from "./types.js";

/** A row of the job table as the queue hands it out: the payload parsed, numbers as numbers. */
export function toJobRecord(row: JobsTable): JobRecord {
  return {
    id: row.id,
    queue: row.queue,
    key: row.key,
    type: row.type,
    payload: JSON.parse(row.payload),
    status: row.status as JobStatus,
    attempts: Number(row.attempts),
    run_at: Number(row.run_at),
    last_error: row.last_error,
    error_code: row.error_code,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** One job by its id, compiled once: clients poll it (`GET /api/v1/jobs/:id`), and `applyNow` reads it in its write. */
export function jobById(db: AnyDb): PreparedQuery<JobsTable> {
  return new PreparedQuery<JobsTable>(sql<JobsTable>`SELECT * FROM _vellum_jobs WHERE id = ${""}`.compile(db), 1);
}

/**
 * The worker's fences around a batch of `queue`, compiled once: each takes the batch's ids as one
 * JSON parameter (`json_each`), so a batch of any size runs one prepared statement. With the queue
 * and the status, SQLite seeks each id in (queue, status, id); with `id IN (…)` and the status
 * alone, for five ids or more it chose (status, queue) and walked every queued job of every queue:
 * marking a batch of creates applied grew with a webhook backlog.
 */
export function batchFences(queue: string, db: AnyDb) {
  const queued = new PreparedQuery<{ id: string; attempts: number }>(
    sql`SELECT id, attempts FROM _vellum_jobs
      WHERE queue = ${queue} AND status = 'queued' AND id IN (SELECT value FROM json_each(${""}))`.compile(db),
    2,
  );
  const applied = new PreparedQuery(
    sql`UPDATE _vellum_jobs SET status = 'applied', updated_at = ${""}, payload = 'null'
      WHERE queue = ${queue} AND status = 'queued' AND id IN (SELECT value FROM json_each(${""}))`.compile(db),
    3,
  );
  const ids = (jobs: readonly JobRecord[]) => JSON.stringify(jobs.map((job) => job.id));
  return {
    /**
     * Those of `jobs` that are still queued with the attempts they were read with: inside a write
     * transaction (which holds the database's write lock), the ones this process may apply. The
     * others were applied or tried since they were read: by `applyNow` for a request, or by
     * another process whose lease this one's overlapped.
     */
    async stillQueued(executor: AnyDb, jobs: readonly JobRecord[]): Promise<JobRecord[]> {
      if (jobs.length === 0) return [];
      const rows = await queued.rows(executor, [queue, ids(jobs)]);
      const attempts = new Map(rows.map((row) => [row.id, Number(row.attempts)]));
      return jobs.filter((job) => attempts.get(job.id) === job.attempts);
    },
    /** Marks `jobs` applied if they are still queued; returns how many were. */
    async markApplied(executor: AnyDb, jobs: readonly JobRecord[]): Promise<number> {
      if (jobs.length === 0) return 0;
      return applied.run(executor, [new Date().toISOString(), queue, ids(jobs)]);
    },
  };
}

/**
 * Records a failed attempt of job `id`: queued again to run in `retryInMs`, or failed once `dead`.
 * A job applied meanwhile (a delivery another process finished) is left applied, not brought back.
 */
export async function recordFailedAttempt(
  executor: AnyDb,
  id: string,
  { attempts, dead, retryInMs }: { attempts: number; dead: boolean; retryInMs: number },
  error: unknown,
): Promise<void> {
  await executor
    .updateTable(JOBS_TABLE)
    .set({
      status: dead ? "failed" : "queued",
      attempts,
      run_at: Date.now() + retryInMs,
      last_error: errorMessage(error),
      error_code: publicJobErrorCode(error),
      updated_at: new Date().toISOString(),
    })
    .where("id", "=", id)
    .where("status", "=", "queued")
    .execute();
}

/** Notes why a delivery of job `id` was cut short by a shutdown, without using up one of its attempts. */
export async function recordInterruption(executor: AnyDb, id: string, error: unknown): Promise<void> {
  await executor
    .updateTable(JOBS_TABLE)
    .set({ last_error: errorMessage(error), updated_at: new Date().toISOString() })
    .where("id", "=", id)
    .where("status", "=", "queued")
    .execute();
}
