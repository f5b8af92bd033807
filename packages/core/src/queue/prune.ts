import { sql } from "kysely";
import { encodeTime } from "ulidx";
import { deleteInChunks } from "../db/chunked-delete.js";
import { PreparedQuery } from "../db/prepared.js";
import type { AnyDb } from "../db/types.js";

/** Applied jobs deleted per statement: each delete is brief, and requests are served between them. */
export const PRUNE_CHUNK = 1_000;

/** The lowest job id made at `ms` (Unix ms): job ids are ULIDs, their first ten characters the time they were made. */
function lowestIdAt(ms: number): string {
  return `${encodeTime(Math.max(0, Math.floor(ms)), 10)}${"0".repeat(16)}`;
}

/**
 * Deletes applied jobs past their queue's retention, a chunk at a time with the event loop free
 * between chunks. With the synchronous SQLite driver one statement holds the event loop for all
 * of its work: a single `DELETE` of an hour's applied jobs under steady writes (hundreds of
 * thousands of rows) held every request for a second or more, once an hour.
 *
 * Each chunk is a range of the `(queue, status, id)` index: a job is updated after it is made, so
 * one last updated before the cutoff was made before it, and its id (a ULID of the time it was
 * made) is below the lowest id of the cutoff's millisecond. Jobs kept longer (a queue's own
 * retention, seven days of webhook deliveries) are never read. The queues come from a walk of the
 * `(status, queue)` index, one seek per queue, so jobs of a queue whose plugin is gone go too.
 */
export class AppliedJobsPruner {
  readonly #db: AnyDb;
  readonly #nextQueue: PreparedQuery<{ queue: string | null }>;
  readonly #deleteChunk: PreparedQuery;

  constructor(db: AnyDb) {
    this.#db = db;
    this.#nextQueue = new PreparedQuery(
      sql<{ queue: string | null }>`SELECT MIN(queue) AS queue FROM _vellum_jobs INDEXED BY _vellum_jobs_status_queue
        WHERE status = 'applied' AND queue > ${""}`.compile(db),
      1,
    );
    this.#deleteChunk = new PreparedQuery(
      sql`DELETE FROM _vellum_jobs WHERE id IN (
        SELECT id FROM _vellum_jobs INDEXED BY _vellum_jobs_queue_status_id
        WHERE queue = ${""} AND status = 'applied' AND id < ${""} AND updated_at < ${""}
        ORDER BY id LIMIT ${0})`.compile(db),
      4,
    );
  }

  /** Prunes every queue, each after `retentionMs(queue)`; returns how many jobs went. */
  async prune(retentionMs: (queue: string) => number, now = Date.now()): Promise<number> {
    let deleted = 0;
    for (const queue of await this.#queues()) deleted += await this.#pruneQueue(queue, now - retentionMs(queue));
    return deleted;
  }

  /** The queues that hold applied jobs. */
  async #queues(): Promise<string[]> {
    const queues: string[] = [];
    for (let after = ""; ;) {
      const [row] = await this.#nextQueue.rows(this.#db, [after]);
      if (row?.queue === null || row?.queue === undefined) return queues;
      queues.push(row.queue);
      after = row.queue;
    }
  }

  #pruneQueue(queue: string, cutoff: number): Promise<number> {
    const parameters = [queue, lowestIdAt(cutoff), new Date(cutoff).toISOString()];
    return deleteInChunks(this.#db, this.#deleteChunk, parameters, PRUNE_CHUNK);
  }
}
