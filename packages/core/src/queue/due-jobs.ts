import { sql } from "kysely";
import { PreparedQuery } from "../db/prepared.js";
import type { AnyDb, JobsTable } from "../db/types.js";

/** The jobs of one queue a worker may start now, oldest first. */
export interface DueJobs {
  rows(db: AnyDb, now: number, limit: number): Promise<JobsTable[]>;
}

/**
 * Transactional queues: every due job, in id order, except those held back by an earlier job of
 * their key that waits for its retry (partial index `0002_job_keys`). A batch applies a key's jobs
 * in order within one transaction, so jobs of the same key may share a batch.
 */
export function dueInBatches(queue: string, db: AnyDb): DueJobs {
  const query = new PreparedQuery<JobsTable>(
    sql<JobsTable>`SELECT * FROM _vellum_jobs AS j
      WHERE j.queue = ${queue} AND j.status = 'queued' AND j.run_at <= ${0}
        AND NOT EXISTS (SELECT 1 FROM _vellum_jobs AS r
          WHERE r.queue = j.queue AND r.key = j.key AND r.status = 'queued' AND r.attempts > 0
            AND r.id < j.id AND r.run_at > ${0})
      ORDER BY j.id LIMIT ${0}`.compile(db),
    4,
  );
  return { rows: (executor, now, limit) => query.rows(executor, [queue, now, now, limit]) };
}

/**
 * At-least-once queues, where deliveries of different keys run at the same time: only the oldest
 * queued job of each key (its head) may start, and only once due, so a key's jobs go one at a time
 * in id order whatever else runs. The keys are walked with a skip scan of the partial index
 * `0003_queued_keys` (one index seek per key), so a long backlog behind a retrying head costs
 * nothing per look. Jobs without a key have no order and are all heads.
 */
export function dueHeads(queue: string, db: AnyDb): DueJobs {
  const query = new PreparedQuery<JobsTable>(
    sql<JobsTable>`WITH RECURSIVE keys(key) AS (
        SELECT MIN(key) FROM _vellum_jobs WHERE queue = ${queue} AND status = 'queued'
        UNION ALL
        SELECT (SELECT MIN(k.key) FROM _vellum_jobs AS k
          WHERE k.queue = ${queue} AND k.status = 'queued' AND k.key > keys.key)
        FROM keys WHERE keys.key IS NOT NULL
      )
      SELECT j.* FROM keys JOIN _vellum_jobs AS j ON j.id = (SELECT MIN(h.id) FROM _vellum_jobs AS h
        WHERE h.queue = ${queue} AND h.status = 'queued' AND h.key = keys.key)
      WHERE j.run_at <= ${0}
      UNION ALL
      SELECT * FROM (SELECT * FROM _vellum_jobs
        WHERE queue = ${queue} AND status = 'queued' AND key IS NULL AND run_at <= ${0} ORDER BY id LIMIT ${0})
      ORDER BY id LIMIT ${0}`.compile(db),
    8,
  );
  return {
    rows: (executor, now, limit) => query.rows(executor, [queue, queue, queue, now, queue, now, limit, limit]),
  };
}

/** The head of one key (its oldest queued job), whether due or not: what may follow a finished delivery of the key. */
export function keyHead(
  queue: string,
  db: AnyDb,
): { row(executor: AnyDb, key: string): Promise<JobsTable | undefined> } {
  const query = new PreparedQuery<JobsTable>(
    sql<JobsTable>`SELECT * FROM _vellum_jobs
      WHERE queue = ${queue} AND status = 'queued' AND key = ${""} ORDER BY id LIMIT 1`.compile(db),
    2,
  );
  return { row: async (executor, key) => (await query.rows(executor, [queue, key]))[0] };
}
