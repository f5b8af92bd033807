import type { CompiledQuery } from "kysely";
import type { MaybePromise } from "../then-now.js";
import { readNow, runNow } from "./statements-now.js";
import { COLUMN_SQL_PREFIX } from "./statement-cache.js";
import type { AnyDb } from "./types.js";

function checkArity(query: CompiledQuery, arity: number): void {
  if (query.parameters.length !== arity) {
    throw new Error(`statement has ${query.parameters.length} parameters, expected ${arity}: ${query.sql}`);
  }
}

/**
 * A Kysely query compiled once and run many times with new parameters, in the compiled order.
 * Compiling (building and visiting the operation tree) costs more than SQLite's own work for the
 * point lookups and inserts of hot paths; the driver's statement cache then reuses the prepared
 * statement for the same SQL text. Compile with placeholder values and give the parameter count:
 * a mismatch is a programming error and throws at construction.
 */
export class PreparedQuery<R = unknown> {
  readonly #query: CompiledQuery;

  constructor(query: CompiledQuery, arity: number) {
    checkArity(query, arity);
    this.#query = query;
  }

  async rows(executor: AnyDb, parameters: readonly unknown[]): Promise<R[]> {
    const now = runNow(executor, this.#query, parameters);
    if (now) return now.rows as R[];
    return (await executor.executeQuery<R>({ ...this.#query, parameters })).rows;
  }

  /**
   * The rows at once when the executor can run the statement without waiting (the kernel's SQLite
   * connection while no transaction is open, or a transaction the kernel holds on it), else as
   * `rows` gives them. For the hot reads of a route that answers synchronously when it can: no
   * promise is made on the way.
   */
  rowsNow(executor: AnyDb, parameters: readonly unknown[]): MaybePromise<R[]> {
    return (readNow(executor, this.#query, parameters)?.rows as R[] | undefined) ?? this.rows(executor, parameters);
  }

  /** Runs a write; returns the number of rows it changed. */
  async run(executor: AnyDb, parameters: readonly unknown[]): Promise<number> {
    const now = runNow(executor, this.#query, parameters);
    if (now) return now.changes;
    return Number((await executor.executeQuery({ ...this.#query, parameters })).numAffectedRows ?? 0);
  }
}

/** Rows in one statement at most: 64 rows of 16 columns stay far under SQLite's 32,766 parameters. */
const MAX_ROWS_PER_INSERT = 64;

/**
 * A multi-row `INSERT` of `columns` into `table`, compiled once per row count (up to 64 rows a
 * statement; more are written in several). One statement for a batch's rows costs a fraction of a
 * statement per row: the driver call, the binding and the kernel's statement lookup come once.
 */
export class PreparedInsert {
  readonly #db: AnyDb;
  readonly #table: string;
  readonly #columns: readonly string[];
  /** The statement of `n` rows at index `n - 1`, compiled at its first use. */
  readonly #byCount: CompiledQuery[] = [];

  constructor(db: AnyDb, table: string, columns: readonly string[]) {
    this.#db = db;
    this.#table = table;
    this.#columns = columns;
  }

  /** Inserts `rows` (each its values in the order of the columns) through `executor`. */
  async run(executor: AnyDb, rows: ReadonlyArray<readonly unknown[]>): Promise<void> {
    for (let start = 0; start < rows.length; start += MAX_ROWS_PER_INSERT) {
      const chunk = rows.slice(start, start + MAX_ROWS_PER_INSERT);
      const parameters: unknown[] = [];
      for (const row of chunk) {
        if (row.length !== this.#columns.length)
          throw new Error(`a row of ${row.length} values for the ${this.#columns.length} columns of ${this.#table}`);
        parameters.push(...row);
      }
      const statement = this.#statement(chunk.length);
      if (!runNow(executor, statement, parameters)) await executor.executeQuery({ ...statement, parameters });
    }
  }

  #statement(rows: number): CompiledQuery {
    let query = this.#byCount[rows - 1];
    if (!query) {
      const placeholder = Object.fromEntries(this.#columns.map((column) => [column, null]));
      query = this.#db
        .insertInto(this.#table)
        .values(Array.from({ length: rows }, () => placeholder))
        .compile();
      this.#byCount[rows - 1] = query;
    }
    return query;
  }
}

/**
 * A `SELECT` of one column, compiled once like `PreparedQuery`, that returns the column's values.
 * On the kernel's SQLite connection the statement runs in better-sqlite3's pluck mode, so no
 * object is made per row. Rows that come back as objects (another driver) give their one value.
 */
export class PreparedColumn<V = unknown> {
  readonly #query: CompiledQuery;

  constructor(query: CompiledQuery, arity: number) {
    checkArity(query, arity);
    this.#query = { ...query, sql: `${COLUMN_SQL_PREFIX}${query.sql}` };
  }

  /** The first column of every row the statement returns. */
  async values(executor: AnyDb, parameters: readonly unknown[]): Promise<V[]> {
    const now = runNow(executor, this.#query, parameters);
    if (now) return now.rows as V[];
    const { rows } = await executor.executeQuery<unknown>({ ...this.#query, parameters });
    return rows.map((row) => (isRowObject(row) ? (Object.values(row)[0] as V) : (row as V)));
  }

  /** The values at once when the executor can run the statement without waiting, else as `values` gives them (`PreparedQuery.rowsNow`). */
  valuesNow(executor: AnyDb, parameters: readonly unknown[]): MaybePromise<V[]> {
    return (readNow(executor, this.#query, parameters)?.rows as V[] | undefined) ?? this.values(executor, parameters);
  }
}

/** A row as drivers return it (a plain object), as opposed to a column value (a BLOB is a Buffer). */
function isRowObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype;
}
