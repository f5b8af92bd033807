import type { PreparedQuery } from "./prepared.js";
import type { AnyDb } from "./types.js";

/**
 * Runs `statement`, a `DELETE` of at most `chunk` rows (its last parameter, after `parameters`),
 * until a run deletes fewer, letting the event loop turn between runs; returns how many rows went.
 * With the synchronous SQLite driver a statement holds the event loop for all of its work, so a
 * large delete in one statement (an hour's applied jobs under steady writes) stalls every request.
 */
export async function deleteInChunks(
  executor: AnyDb,
  statement: PreparedQuery,
  parameters: readonly unknown[],
  chunk: number,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const count = await statement.run(executor, [...parameters, chunk]);
    deleted += count;
    if (count < chunk) return deleted;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
