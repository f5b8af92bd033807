import type { CompiledQuery } from "kysely";

/** What a statement run at once gave: its rows (a read, or a write with `RETURNING`) and the rows it changed. */
export interface RunResult {
  rows: unknown[];
  changes: number;
}

/** Runs a statement at once, or returns undefined when it must wait its turn on the connection. */
export type RunNow = (sql: string, parameters: readonly unknown[]) => RunResult | undefined;

/** How the kernel's SQLite connection runs statements without kysely's queue of promises. */
export interface StatementsNow {
  /** On the database itself: reads only, and only while no transaction is open on the connection. */
  outside: RunNow;
  /** In a transaction the kernel holds on the connection (`inTransactionNow`): every statement. */
  inside: RunNow;
}

/** By database: its reads outside transactions. */
const readers = new WeakMap<object, RunNow>();
/** By database: the statements of the transactions the kernel holds on it. */
const insideRunners = new WeakMap<object, RunNow>();
/** By transaction, while the kernel holds it (`inTransactionNow`). */
const transactions = new WeakMap<object, RunNow>();

/**
 * Lets the prepared statements (`PreparedQuery`, `PreparedColumn`, `PreparedInsert`) and the
 * kernel's savepoints run on `kysely`'s connection without its driver's queue of promises.
 * Registered by the SQLite driver only, whose calls are synchronous; any other executor (another
 * dialect, a transaction the kernel does not hold) takes the normal path.
 */
export function allowStatementsNow(kysely: object, now: StatementsNow): void {
  readers.set(kysely, now.outside);
  insideRunners.set(kysely, now.inside);
}

/**
 * Lets the statements of transaction `trx`, opened by the kernel on `db`'s connection, run at
 * once, until the returned function is called (when the transaction ends). Sound because the
 * kernel's steps run one after the other: a statement starts only once the one before it, and
 * every step before it, has finished, so none waits in kysely's queue to run before it.
 */
export function inTransactionNow(db: object, trx: object): () => void {
  const inside = insideRunners.get(db);
  if (!inside) return () => undefined;
  transactions.set(trx, inside);
  return () => transactions.delete(trx);
}

/**
 * `query` with `parameters` run at once when `executor` is a transaction the kernel holds, or
 * undefined (then run it through kysely, in its turn).
 */
export function runNow(executor: object, query: CompiledQuery, parameters: readonly unknown[]): RunResult | undefined {
  return transactions.get(executor)?.(query.sql, parameters);
}

/**
 * As `runNow`, and also a read on the database itself while no transaction is open: it sees
 * committed rows only, as it would after waiting its turn, though it may run before statements
 * still waiting in kysely's queue. For reads whose caller does not depend on such a statement.
 */
export function readNow(executor: object, query: CompiledQuery, parameters: readonly unknown[]): RunResult | undefined {
  return runNow(executor, query, parameters) ?? readers.get(executor)?.(query.sql, parameters);
}
