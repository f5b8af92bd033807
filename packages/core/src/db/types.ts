import type { Kysely } from "kysely";

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
  /** Whether the connection is open. */
  isOpen(): boolean;
}

export interface VellumDatabase {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each plugin narrows the schema to its own tables
  readonly kysely: Kysely<any>;
  readonly ops: DatabaseOps;
  close(): Promise<void>;
}

export interface SqliteOptions {
  /** Path of the database file; `:memory:` for a throwaway database. */
  path: string;
  /** `FULL` (default) makes every commit durable against power loss; `NORMAL` only against process crashes. */
  synchronous?: "FULL" | "NORMAL";
  busyTimeoutMs?: number;
}

export interface DatabaseConfig {
  sqlite?: SqliteOptions;
}
