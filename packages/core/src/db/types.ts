import type { Kysely, Transaction } from "kysely";

/** The kernel's handle on any schema (its own code only; plugins get `PluginDb<Tables>`). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the kernel runs queries for every plugin, whatever its tables
export type AnyDb = Kysely<any>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export type AnyTransaction = Transaction<any>;

/** Dialect-specific operations kept behind one interface so a PostgreSQL dialect can follow. */
export interface DatabaseOps {
  readonly dialect: "sqlite";
  /** Round-trip latency of a trivial query, in milliseconds; throws when the database is unusable. */
  ping(): Promise<number>;
  /** Size of the write-ahead log in bytes (0 when there is none). */
  walSizeBytes(): number;
  /** Checkpoints the WAL (TRUNCATE mode) and returns how long it took. */
  checkpoint(): Promise<{ durationMs: number; busy: boolean }>;
  /** Bytes of the database files on disk. */
  sizeBytes(): number;
  isOpen(): boolean;
  /**
   * A number that changes when another connection (another process sharing the database) commits,
   * and never for this instance's own commits (SQLite's `data_version`): how a process learns that
   * what it keeps in memory may be stale.
   */
  dataVersion(): number;
  /**
   * The damage a query of this process met in the database file (`SQLITE_CORRUPT`,
   * `SQLITE_NOTADB`), or undefined. It stays until the process stops: a damaged file does not
   * mend itself; an operator restores it from a backup and restarts.
   */
  damage(): DatabaseDamage | undefined;
  /**
   * Runs `work` holding the connection, with commits that do not wait for the disk (SQLite
   * `synchronous = NORMAL`). Such a commit survives a process crash; after a power loss it may be
   * lost, but only as a whole and only until the next synchronous commit, which makes it durable.
   * For work that is safe to redo: the queue worker applies jobs this way, since a lost apply
   * leaves its job queued (the applied mark is in the same transaction) and it runs again.
   */
  withDeferredSync<T>(work: (connection: AnyDb) => Promise<T>): Promise<T>;
}

export interface DatabaseDamage {
  /** SQLite's code, as the first query that met the damage got it. */
  code: string;
  /** When that was (ISO 8601). */
  since: string;
}

export interface VellumDatabase {
  readonly kysely: AnyDb;
  readonly ops: DatabaseOps;
  /** The kernel's report that a query met damage in the file (`code` as SQLite gave it); the first one counts. */
  markDamaged(code: string): void;
  close(): Promise<void>;
}

export interface SqliteOptions {
  /** Path of the database file; `:memory:` for a throwaway database. */
  path: string;
  /** `FULL` (default) makes every commit durable against power loss; `NORMAL` only against process crashes. */
  synchronous?: "FULL" | "NORMAL";
  busyTimeoutMs?: number;
}

/** Called after every query the kernel's connection runs (slow-query logs; tests that count queries). */
export type QueryListener = (query: { sql: string; durationMs: number }) => void;

export interface DatabaseConfig {
  sqlite?: SqliteOptions;
  onQuery?: QueryListener;
}

/** A row of the kernel's job table (`_vellum_jobs`). */
export interface JobsTable {
  id: string;
  queue: string;
  /** Jobs with the same key are applied in id order, and a failing one delays only them; null: no order. */
  key: string | null;
  type: string;
  payload: string;
  status: string;
  attempts: number;
  /** Epoch milliseconds before which the job is not tried (set by retry backoff). */
  run_at: number;
  /** The raw error of the last failed attempt (logs and operators only, never clients). */
  last_error: string | null;
  /** What clients are told about the last failure: an API error code. */
  error_code: string | null;
  created_at: string;
  updated_at: string;
}

/** The kernel's tables, part of every plugin's typed `ctx.db`. */
export interface KernelTables {
  _vellum_jobs: JobsTable;
}
