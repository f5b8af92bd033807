import type { PreparingDatabase } from "./statement-cache.js";

/** How kysely's SQLite driver opens a transaction. */
const KYSELY_BEGIN = "begin";

/**
 * Opens kysely's transactions with `BEGIN IMMEDIATE`: the write lock is taken at the start, and a
 * transaction that finds it held waits for it (`busy_timeout`). With kysely's plain (deferred)
 * `begin`, a transaction that read first and then wrote, while another process had committed in
 * between, failed at once with `SQLITE_BUSY` instead of waiting: with two processes on one
 * database about one create in five answered `503`. One process sees no difference: it has one
 * connection, so its transactions never meet.
 */
export function withImmediateBegin(database: PreparingDatabase): PreparingDatabase {
  return {
    prepare: (sql) => database.prepare(sql === KYSELY_BEGIN ? "begin immediate" : sql),
    close: () => database.close(),
  };
}
