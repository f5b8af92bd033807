import type { AnyDb, JobsTable } from "../db/types.js";
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

/**
 * Those of `jobs` that are still queued in `queue` with the attempts they were read with: inside a
 * write transaction (which holds the database's write lock), the ones this process may apply. The
 * others were applied or tried since they were read: by `applyNow` for a request, or by another
 * process whose lease this one's overlapped.
 */
export async function stillQueued(executor: AnyDb, queue: string, jobs: readonly JobRecord[]): Promise<JobRecord[]> {
  if (jobs.length === 0) return [];
  const rows = await executor
    .selectFrom(JOBS_TABLE)
    .select(["id", "attempts"])
    .where("queue", "=", queue)
    .where("status", "=", "queued")
    .where(
      "id",
      "in",
      jobs.map((job) => job.id),
    )
    .execute();
  const attempts = new Map(rows.map((row) => [row.id, Number(row.attempts)]));
  return jobs.filter((job) => attempts.get(job.id) === job.attempts);
}

/**
 * Marks `jobs` of `queue` applied if they are still queued; returns how many were. The queue as
 * well: with (queue, status, id) SQLite seeks each id. With `id IN (…)` and the status alone, for
 * five ids or more it chose (status, queue) and walked every queued job of every queue: marking a
 * batch of creates applied grew with a webhook backlog.
 */
export async function markApplied(executor: AnyDb, queue: string, jobs: readonly JobRecord[]): Promise<number> {
  if (jobs.length === 0) return 0;
  const result = await executor
    .updateTable(JOBS_TABLE)
    .set({ status: "applied", updated_at: new Date().toISOString(), payload: "null" })
    .where("queue", "=", queue)
    .where("status", "=", "queued")
    .where(
      "id",
      "in",
      jobs.map((job) => job.id),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
