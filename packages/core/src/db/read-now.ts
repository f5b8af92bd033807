import type { CompiledQuery } from "kysely";

/** Runs a read at once, or returns undefined when it must wait its turn on the connection. */
export type ReadNow = (sql: string, parameters: readonly unknown[]) => unknown[] | undefined;

const readers = new WeakMap<object, ReadNow>();

/**
 * Lets `PreparedQuery.rowsNow` and `PreparedColumn.valuesNow` run reads on `kysely`'s connection
 * without its driver's queue of promises. Registered by the SQLite driver only, whose calls are
 * synchronous; any other executor (a transaction, another dialect) takes the normal path.
 */
export function allowReadsNow(kysely: object, read: ReadNow): void {
  readers.set(kysely, read);
}

/** The rows of `query` with `parameters` read at once, or undefined (then run it through `executor`). */
export function readNow(executor: object, query: CompiledQuery, parameters: readonly unknown[]): unknown[] | undefined {
  return readers.get(executor)?.(query.sql, parameters);
}
