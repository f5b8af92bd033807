import type { JobsTable } from "../db/types.js";
import type { Write } from "../db/write.js";

/** `failed` means the job is in the dead-letter queue: it used up its attempts and waits for a replay. */
export type JobStatus = "queued" | "applied" | "failed";

/** A job as the queue hands it out: its row, with the payload parsed. */
export interface JobRecord extends Omit<JobsTable, "payload" | "status"> {
  payload: unknown;
  status: JobStatus;
}

/** A job to enqueue: its type, its payload (JSON) and, for order per key, its key. */
export interface NewJob {
  type: string;
  payload: unknown;
  key?: string | null;
}

/**
 * Runs inside the apply transaction, as the owner of a write: its database effects, its commit
 * hooks and the job's `applied` mark commit together, so a job is applied exactly once even
 * across crashes.
 */
export type TransactionalHandler<DB = never> = (job: JobRecord, w: Write<DB>) => Promise<void>;

/**
 * Runs outside any transaction (network I/O); the job is marked applied after it resolves, so at
 * least once. What it resolves to (a small JSON value: a receiver's answer, a duration) replaces
 * the applied job's payload; `undefined` clears it. `signal` aborts when the queue stops (a
 * shutdown): a delivery that then fails is tried again later without using up an attempt.
 */
export type DeliveryHandler = (job: JobRecord, signal: AbortSignal) => Promise<unknown>;

export interface ProcessOptions {
  /** Default `transactional`. */
  mode?: "transactional" | "at-least-once";
  /** Transactional only: most jobs applied in one transaction when they pile up (group commit). Default 64. */
  batchSize?: number;
  /**
   * Transactional only: the queue holds background work (a fan-out, a rebuild) that yields to
   * queued writes as deliveries do. While another transactional queue applies batches it applies
   * a batch at most every 250 ms, and its own batches never make other queues yield. Default false.
   */
  background?: boolean;
  /** Attempts before the job moves to the dead-letter queue (status `failed`). Default 5. */
  maxAttempts?: number;
  /**
   * Delay before retrying after the given failed attempt (1-based), given what it threw (an error
   * may carry a delay the other side asked for). Default exponential with jitter from ~1 s.
   */
  backoffMs?: (attempt: number, error: unknown) => number;
  /**
   * At-least-once only: deliveries in flight at once, each of a different key (a key's jobs go one
   * at a time, in id order; a key's later jobs wait while an earlier one waits for its retry).
   * Default 1.
   */
  concurrency?: number;
  /** Safety poll for jobs enqueued by other processes, in milliseconds. Default 1000. */
  pollMs?: number;
  /** How long applied jobs are kept (their status, for `GET /api/v1/jobs/:id` and operators). Default one day. */
  retainAppliedMs?: number;
  /**
   * Whether a pruned job of this queue (applied jobs are kept a while) had been applied, so
   * `GET /api/v1/jobs/:id` still answers `applied` (say, because the record it created exists).
   */
  appliedAfterPrune?: (id: string) => Promise<boolean>;
}

export interface QueueStats {
  queue: string;
  queued: number;
  failed: number;
}

/** The jobs of one key of a queue that are not applied yet. */
export interface KeyStats {
  key: string | null;
  /** Waiting, retries included. */
  queued: number;
  /** Waiting for a retry after a failed attempt. */
  retrying: number;
  /** In the dead-letter queue. */
  failed: number;
}

/** Which jobs `list` and `replay` select; every field narrows. */
export interface JobFilter {
  ids?: readonly string[];
  key?: string;
  status?: JobStatus;
}
