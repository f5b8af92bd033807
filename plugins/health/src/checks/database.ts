import { sql, type VellumPluginContext } from "@vellum/core";
import { DeadlineError, type FailureLog, withDeadline } from "./state.js";

export interface DatabaseCheck {
  state: "ok" | "unavailable";
  /** Round trip of a trivial query plus a read of the schema, in milliseconds; null when it failed. */
  latency_ms: number | null;
  wal_size_bytes: number;
  size_bytes: number;
  /**
   * Why it is unavailable: the connection is closed, a query met damage in the database file (it
   * stays so until a restore and restart), the check's query failed, or it did not answer in time.
   */
  reason?: "closed" | "damaged" | "query_failed" | "timeout";
}

function read(fn: () => number): number {
  try {
    return fn();
  } catch {
    return 0;
  }
}

/**
 * Pings the database and reads its schema table through the same connection requests use (so a
 * request stuck behind a long transaction shows up as latency or a timeout). Never throws: the
 * cause stays in the server log, the client sees only a coarse reason.
 */
export async function checkDatabase(
  ctx: VellumPluginContext<object>,
  timeoutMs: number,
  log: FailureLog,
): Promise<DatabaseCheck> {
  const db = ctx.database;
  const sizes = { wal_size_bytes: read(() => db.walSizeBytes()), size_bytes: read(() => db.sizeBytes()) };
  if (!db.isOpen()) {
    log.failed("database", "the connection is closed");
    return { state: "unavailable", latency_ms: null, ...sizes, reason: "closed" };
  }
  const damage = db.damage();
  if (damage) {
    log.failed(
      "database",
      `the database file is damaged or its disk failed (${damage.code}, first met ${damage.since})`,
    );
    return { state: "unavailable", latency_ms: null, ...sizes, reason: "damaged" };
  }
  const started = performance.now();
  try {
    await withDeadline(
      (async () => {
        await db.ping();
        await sql`select count(*) as n from sqlite_master`.execute(ctx.db);
      })(),
      timeoutMs,
      "database check",
    );
    log.passed("database");
    return { state: "ok", latency_ms: Math.round((performance.now() - started) * 1000) / 1000, ...sizes };
  } catch (error) {
    const reason = error instanceof DeadlineError ? "timeout" : db.isOpen() ? "query_failed" : "closed";
    log.failed("database", error);
    return { state: "unavailable", latency_ms: null, ...sizes, reason };
  }
}
