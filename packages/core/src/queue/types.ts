import type { Transaction } from "kysely";

/** `failed` means the job is in the dead-letter queue: it used up its attempts and waits for a replay. */
export type JobStatus = "queued" | "applied" | "failed";

export interface JobRecord {
  id: string;
  queue: string;
  type: string;
  payload: unknown;
  status: JobStatus;
  attempts: number;
  /** Epoch milliseconds before which the job is not tried (set by retry backoff). */
  run_at: number;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** Work a transactional handler wants done once its effects are committed (hooks, cache purges). */
export type AfterCommit = () => void | Promise<void>;

/**
 * Runs inside the apply transaction: its database effects and the job's `applied` mark commit
 * together, so a job is applied exactly once even across crashes.
 */
// Each queue's handler narrows the schema to its own tables; handlers that return nothing are plain `async` functions.
// eslint-disable-next-line @typescript-eslint/no-explicit-any, @typescript-eslint/no-invalid-void-type
export type TransactionalHandler = (job: JobRecord, trx: Transaction<any>) => Promise<void | AfterCommit>;

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
}

export interface QueueStats {
  queue: string;
  queued: number;
  failed: number;
}
