import type { Statement } from "better-sqlite3";
import type { PreparingDatabase } from "./statement-cache.js";

/** The end of a transaction, as kysely sends it (not `ROLLBACK TO` a savepoint: see `inSavepoint`). */
const ROLLBACK = /^rollback$/i;

/**
 * Lets kysely's `ROLLBACK` through only while a transaction is open. After some errors
 * (`SQLITE_FULL`, `SQLITE_IOERR`, `SQLITE_NOMEM`) SQLite has already rolled the whole transaction
 * back; the rollback kysely then sends would throw "cannot rollback - no transaction is active" and
 * replace the error that says what went wrong (a full disk answered 500 instead of 503). Such a
 * rollback runs a statement that does nothing instead.
 */
export function withRollbackGuard(
  database: PreparingDatabase,
  connection: { readonly inTransaction: boolean; prepare(sql: string): Statement },
): PreparingDatabase {
  let nothing: Statement | undefined;
  return {
    prepare(sql) {
      if (!connection.inTransaction && ROLLBACK.test(sql)) return (nothing ??= connection.prepare("SELECT 0 WHERE 0"));
      return database.prepare(sql);
    },
    close: () => database.close(),
  };
}
