import type { Write } from "../db/write.js";

/** `failed` means the job is in the dead-letter queue: it used up its attempts and waits for a replay. */
export type JobStatus = "queued" | "applied" | "failed";

export interface JobRecord {
  id: string;
  queue: string;
  /** Jobs with the same key are applied in id order; null: no order with other jobs. */
  key: string | null;
  type: string;
  payload: unknown;
  status: JobStatus;
  attempts: number;
  /** Epoch milliseconds before which the job is not tried (set by retry backoff). */
  run_at: number;
  /** The raw error of the last failed attempt (logs and operators only). */
  last_error: string | null;
  /** The API error code clients see for the last failure. */
  error_code: string | null;
  created_at: string;
  updated_at: string;
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
   * Keep an applied job's payload (for a queue whose handled payloads must stay readable, such
   * as webhook deliveries to redeliver). Default false: the payload becomes `null` in the same
   * write that marks the job applied, so applied jobs kept for their status (a day) hold a few
   * bytes each instead of, for article creates, the whole article again.
   */
  keepAppliedPayload?: boolean;
  /**
   * Whether a job of this queue that was pruned (applied jobs are kept a day) had been applied,
   * so `GET /api/v1/jobs/:id` still answers `applied` (say, because the record the job created exists).
   */
  appliedAfterPrune?: (id: string) => Promise<boolean>;
}

export interface QueueStats {
  queue: string;
  queued: number;
  failed: number;
}
