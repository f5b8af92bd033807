import { statSync } from "node:fs";
import type BetterSqlite3Module from "better-sqlite3";
import { Kysely, type LogEvent, SqliteDialect, sql } from "kysely";
import { storageFailure } from "../errors/storage-failure.js";
import { VellumError } from "../errors/vellum-error.js";
import { withImmediateBegin } from "./immediate-begin.js";
import { allowStatementsNow, type RunNow } from "./statements-now.js";
import { withRollbackGuard } from "./rollback-guard.js";
import { withStatementCache } from "./statement-cache.js";
import type { DatabaseDamage, DatabaseOps, QueryListener, SqliteOptions, VellumDatabase } from "./types.js";

type BetterSqlite3 = typeof BetterSqlite3Module;

/** Pages in the WAL after which a commit runs SQLite's automatic (PASSIVE) checkpoint. */
export const WAL_AUTOCHECKPOINT_PAGES = 1000;

/** better-sqlite3, loaded on demand: a missing native addon is a clear error, not a failed import. */
export async function loadDriver(): Promise<BetterSqlite3> {
  try {
    const mod = await import("better-sqlite3");
    return (mod.default ?? mod) as BetterSqlite3;
  } catch (cause) {
    throw new VellumError(
      "VELLUM_DATABASE_DRIVER_MISSING",
      "better-sqlite3 could not be loaded; install it with 'npm install better-sqlite3' (it builds a native addon)",
      { cause },
    );
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** How long opening waits, in all, to switch a database that another process is creating to WAL. */
const WAL_SWITCH_WAIT_MS = 30_000;

/**
 * Puts the database in WAL mode. Two processes opening a new database file at once both switch it,
 * and the one that finds the other's lock gets `SQLITE_BUSY` at once, without its busy timeout (a
 * `vellum serve` then failed to start): it tries again after a short pause. When it cannot switch,
 * it closes the connection and throws. For the database and the lease table beside it.
 */
export async function enableWal(raw: BetterSqlite3Module.Database): Promise<void> {
  const deadline = Date.now() + WAL_SWITCH_WAIT_MS;
  for (;;) {
    try {
      raw.pragma("journal_mode = WAL");
      return;
    } catch (error) {
      if (storageFailure(error)?.kind !== "locked" || Date.now() >= deadline) {
        raw.close();
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40));
    }
  }
}

/** `run`, each statement it runs (or fails) reported to `onQuery`; those it leaves to kysely are reported there. */
function reported(run: RunNow, onQuery: QueryListener): RunNow {
  return (sql, parameters) => {
    const started = performance.now();
    const report = () => onQuery({ sql, durationMs: performance.now() - started });
    let result: ReturnType<RunNow>;
    try {
      result = run(sql, parameters);
    } catch (error) {
      report();
      throw error;
    }
    if (result !== undefined) report();
    return result;
  };
}

/** Opens a SQLite file in WAL mode with a busy timeout and foreign keys, wrapped in Kysely. */
export async function openSqlite(options: SqliteOptions, onQuery?: QueryListener): Promise<VellumDatabase> {
  const Database = await loadDriver();
  const raw = new Database(options.path);
  await enableWal(raw);
  const synchronous = options.synchronous ?? "FULL";
  raw.pragma(`synchronous = ${synchronous}`);
  raw.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  raw.pragma("foreign_keys = ON");
  // Every queued job and every commit subscriber runs in a savepoint, whose statement journal SQLite
  // writes to a deleted file in the temp dir once it passes 64 KiB: about two write calls in three
  // of a create's (docs/benchmarks.md), and SQLITE_IOERR_GETTEMPPATH where no temp dir is writable
  // (a read-only root file system). In memory it lasts as long as its transaction, which the
  // queue's batches bound.
  raw.pragma("temp_store = MEMORY");
  // Small PASSIVE checkpoints after the commit that passes 1,000 pages (4 MB): each blocks the event
  // loop briefly instead of one long TRUNCATE of a large WAL, which cut the create p99 and CPU under
  // sustained creates (docs/architecture.md). Truncating the WAL is left to `DatabaseOps.checkpoint()`.
  raw.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  raw.pragma("journal_size_limit = 67108864");
  const log =
    onQuery && ((event: LogEvent) => onQuery({ sql: event.query.sql, durationMs: event.queryDurationMillis }));
  const statements = withStatementCache(raw);
  const kysely = new Kysely({
    dialect: new SqliteDialect({ database: withImmediateBegin(withRollbackGuard(statements, raw)) }),
    ...(log && { log }),
  });
  // A read while no transaction is open sees committed rows only, as it would after waiting for the
  // connection; in a transaction the kernel holds, a statement runs where kysely would run it (and
  // if SQLite ended that transaction itself, after SQLITE_FULL say, kysely's path meets what
  // follows). The query listener sees them as it sees every query kysely runs.
  const runner =
    (inTransaction: boolean): RunNow =>
    (sql, parameters) => {
      if (raw.inTransaction !== inTransaction) return undefined;
      const statement = statements.prepare(sql);
      if (statement.busy || (!inTransaction && !statement.reader)) return undefined;
      if (statement.reader) return { rows: statement.all(parameters) as unknown[], changes: 0 };
      return { rows: [], changes: statement.run(parameters).changes };
    };
  const inside = runner(true);
  const outside = runner(false);
  allowStatementsNow(kysely, {
    outside: onQuery ? reported(outside, onQuery) : outside,
    inside: onQuery ? reported(inside, onQuery) : inside,
  });
  const memory = options.path === ":memory:";
  const dataVersion = raw.prepare("PRAGMA data_version").pluck();
  let damage: DatabaseDamage | undefined;

  const ops: DatabaseOps = {
    dialect: "sqlite",
    async ping() {
      const started = performance.now();
      raw.prepare("SELECT 1").get();
      return performance.now() - started;
    },
    walSizeBytes: () => (memory ? 0 : fileSize(`${options.path}-wal`)),
    async checkpoint() {
      const started = performance.now();
      const row = raw.pragma("wal_checkpoint(TRUNCATE)") as Array<{ busy: number }>;
      return { durationMs: performance.now() - started, busy: (row[0]?.busy ?? 0) !== 0 };
    },
    sizeBytes: () => (memory ? 0 : fileSize(options.path) + fileSize(`${options.path}-wal`)),
    isOpen: () => raw.open,
    dataVersion: () => dataVersion.get() as number,
    damage: () => damage,
    withDeferredSync(work) {
      if (synchronous === "NORMAL") return work(kysely);
      // One connection: holding it keeps every other query (and its commit) out until FULL is back.
      return kysely.connection().execute(async (connection) => {
        await sql`PRAGMA synchronous = NORMAL`.execute(connection);
        try {
          return await work(connection);
        } finally {
          await sql`PRAGMA synchronous = FULL`.execute(connection);
        }
      });
    },
  };

  return {
    kysely,
    ops,
    markDamaged(code) {
      damage ??= { code, since: new Date().toISOString() };
    },
    async close() {
      if (!raw.open) return;
      if (!memory) raw.pragma("wal_checkpoint(TRUNCATE)");
      await kysely.destroy();
    },
  };
}
