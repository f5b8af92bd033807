import { rm } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { articleBody } from "../scenarios/articles-data.mjs";
import { migratedDataDir } from "./migrated.mjs";

const ROUNDS = 20_000;
const JOB_COLUMNS =
  "id, queue, key, type, payload, status, attempts, run_at, last_error, error_code, created_at, updated_at";

/**
 * The floor of the outbox's cost: SQLite alone (better-sqlite3, prepared statements, no Kysely, no
 * event loop, `synchronous = OFF` so no fsync) writing one webhook event row and `k` delivery job
 * rows per create, `batch` creates per transaction (the create worker commits a batch of up to 64
 * creates at once under load), on the schema the built plugins migrate. Whatever the plugin's own
 * code does, a create that writes these rows costs at least this much more CPU.
 * @param {number} [batch] creates per transaction
 * @returns {Promise<Record<number, number>>} µs per create for 0, 1 and 3 delivery rows
 */
export async function outboxRowCost(batch = 1) {
  const dir = await migratedDataDir("vellum-outbox-rows-");
  try {
    const db = new Database(join(dir, "db", "vellum.sqlite"));
    db.pragma("synchronous = OFF");
    const event = db.prepare("INSERT INTO webhook_events (id, type, body, created_at) VALUES (?, ?, ?, ?)");
    const job = db.prepare(`INSERT INTO _vellum_jobs (${JOB_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    let n = 0;
    /** @type {Record<number, number>} */
    const result = {};
    for (const rows of [0, 1, 3]) {
      const one = () => {
        const id = `E${String(++n).padStart(25, "0")}`;
        const at = new Date().toISOString();
        const body = JSON.stringify({
          id,
          type: "article.created",
          created_at: at,
          data: { article: articleBody(`s-${n}`, n) },
        });
        event.run(id, "article.created", body, at);
        for (let r = 0; r < rows; r++) {
          const jobId = `J${String(++n).padStart(25, "0")}`;
          const payload = JSON.stringify({ event: id });
          job.run(
            jobId,
            "webhooks:deliveries",
            `http://127.0.0.1:${9000 + r}/hook`,
            "article.created",
            payload,
            "queued",
            0,
            Date.now(),
            null,
            null,
            at,
            at,
          );
        }
      };
      const write = db.transaction(() => {
        for (let b = 0; b < batch; b++) one();
      });
      const started = process.hrtime.bigint();
      for (let i = 0; i < ROUNDS / batch; i++) write();
      result[rows] = Number(process.hrtime.bigint() - started) / ROUNDS / 1000;
    }
    db.close();
    return result;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
