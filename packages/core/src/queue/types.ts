import type { JobsTable } from "../db/types.js";
import type { Write } from "../db/write.js";

/** `failed` means the job is in the dead-letter queue: it used up its attempts and waits for a replay. */
export type JobStatus = "queued" | "applied" | "failed";

/** A job as the queue hands it out: its row, with the payload parsed. */
export interface JobRecord extends Omit<JobsTable, "payload" | "status"> {
  payload: unknown;
  status: JobStatus;
}

/**
 * Runs inside the apply transaction, as the owner of a write: its database effects, its commit
 * hooks and the job's `applied` mark commit together, so a job is applied exactly once even
 * across crashes.
 */
export type TransactionalHandler<DB = never> = (job: JobRecord, w: Write<DB>) => Promise<void>;

/** Runs outside any transaction (network I/O); the job is marked applied after it resolves, so at least once. */
export type DeliveryHandler = (job: JobRecord) => Promise<void>;

export interface ProcessOptions {
  /** Default `transactional`. */
  mode?: "transactional" | "at-least-once";
  /** Transactional only: most jobs applied in one transaction when they pile up (group commit). Default 64. */
  batchSize?: number;
  /** Attempts before the job moves to the dead-letter queue (status `failed`). Default 5. */
  maxAttempts?: number;
  /** Delay before retrying after the given failed attempt (1-based). Default exponential with jitter from ~1 s. */
  backoffMs?: (attempt: number) => number;
  /** Safety poll for jobs enqueued by other processes, in milliseconds. Default 1000. */
  pollMs?: number;
  /**
   * Keep an applied job's payload (webhook deliveries to redeliver). Default false: the write that
   * marks the job applied sets it to `null`, so applied jobs kept for their status stay small.
   */
  keepAppliedPayload?: boolean;
  /**
   * Whether a pruned job of this queue (applied jobs are kept a day) had been applied, so
   * `GET /api/v1/jobs/:id` still answers `applied` (say, because the record it created exists).
   */
  appliedAfterPrune?: (id: string) => Promise<boolean>;
}

export interface QueueStats {
  queue: string;
  queued: number;
  failed: number;
}
