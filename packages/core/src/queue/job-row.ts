import type { JobsTable } from "../db/types.js";
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
