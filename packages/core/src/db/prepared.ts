import type { CompiledQuery, Kysely } from "kysely";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- runs on any executor: the instance's handle or a transaction on it
type Executor = Kysely<any>;

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
    if (query.parameters.length !== arity) {
      throw new Error(`statement has ${query.parameters.length} parameters, expected ${arity}: ${query.sql}`);
    }
    this.#query = query;
  }

  /** The rows the statement returns. */
  async rows(executor: Executor, parameters: readonly unknown[]): Promise<R[]> {
    return (await executor.executeQuery<R>({ ...this.#query, parameters })).rows;
  }

  /** Runs a write; returns the number of rows it changed. */
  async run(executor: Executor, parameters: readonly unknown[]): Promise<number> {
    return Number((await executor.executeQuery({ ...this.#query, parameters })).numAffectedRows ?? 0);
  }
}
