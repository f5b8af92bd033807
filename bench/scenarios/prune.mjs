import { rm } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { encodeTime } from "ulidx";
import { migratedDataDir } from "../lib/migrated.mjs";

/** Applied jobs past their retention (env BENCH_PRUNE_ROWS), and as many kept (webhook deliveries, kept 7 days). */
const ROWS = Number(process.env.BENCH_PRUNE_ROWS) || 300_000;
const DAY = 86_400_000;
const COLUMNS =
  "id, queue, key, type, payload, status, attempts, run_at, last_error, error_code, created_at, updated_at";

/** A data dir with the default plugins migrated and `ROWS` applied article jobs two days old, `ROWS` deliveries a day old. */
async function seeded() {
  const dir = await migratedDataDir("vellum-bench-prune-");
  const db = new Database(join(dir, "db", "vellum.sqlite"));
  db.pragma("synchronous = OFF");
  const insert = db.prepare(`INSERT INTO _vellum_jobs (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const payload = '{"event":"01M87QZ6FTFPR1QGGKBEDMTTB9","status":204,"duration_ms":1}';
  db.transaction(() => {
    for (const [queue, ageMs, key] of [
      ["articles", 2 * DAY, "slug"],
      ["webhooks:deliveries", DAY, "http://127.0.0.1:9/hook"],
    ]) {
      const at = Date.now() - ageMs;
      const iso = new Date(at).toISOString();
      for (let i = 0; i < ROWS; i++) {
        const id = `${encodeTime(at + Math.floor(i / 100), 10)}${String(i).padStart(16, "0")}`;
        insert.run(id, queue, `${key}-${i % 50}`, "article.created", payload, "applied", 1, at, null, null, iso, iso);
      }
    }
  })();
  db.close();
  return dir;
}

/** Runs `work` on a ready instance of `dir`: its time, and the longest the event loop was held meanwhile (a 1 ms timer's longest gap). */
async function measure(dir, work) {
  const { createVellum } = await import("../../packages/core/dist/index.js");
  const { defaultPlugins } = await import("../../packages/vellum/dist/index.js");
  const instance = createVellum({ dataDir: dir, plugins: defaultPlugins(), logLevel: 0 });
  await instance.ready();
  let last = performance.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 1);
  try {
    await sleep(20);
    stallMs = 0;
    const started = performance.now();
    const deleted = await work(instance);
    const ms = performance.now() - started;
    // The timer's next turn notes a stall that lasted until the work's end.
    await sleep(5);
    return { deleted, ms, stallMs };
  } finally {
    clearInterval(timer);
    await instance.close();
  }
}

/**
 * The hourly prune of applied jobs (core's `prune-jobs`): `ROWS` jobs past the default retention
 * and `ROWS` webhook deliveries within their queue's 7 days. The kernel's prune (chunks of 1,000,
 * the event loop free between them, each chunk a range of old ids) against the same deletion as
 * one statement, as it was before: the total time, and the longest stretch the event loop (every
 * request) waited.
 * @type {import("./registry.mjs").Scenario}
 */
export default async function pruneScenario() {
  const lines = [];
  const failures = [];
  const dirs = [];
  try {
    process.stderr.write(`prune: seeding ${ROWS} old and ${ROWS} kept applied jobs, twice\n`);
    const [chunked, single] = [await seeded(), await seeded()];
    dirs.push(chunked, single);
    const now = await measure(chunked, (instance) => instance.queue().prune(DAY));
    const before = await measure(single, async (instance) => {
      const cutoff = (ms) => new Date(Date.now() - ms).toISOString();
      const db = instance.db();
      const kept = await db
        .deleteFrom("_vellum_jobs")
        .where("status", "=", "applied")
        .where("queue", "=", "webhooks:deliveries")
        .where("updated_at", "<", cutoff(7 * DAY))
        .executeTakeFirst();
      const rest = await db
        .deleteFrom("_vellum_jobs")
        .where("status", "=", "applied")
        .where("updated_at", "<", cutoff(DAY))
        .where("queue", "not in", ["webhooks:deliveries"])
        .executeTakeFirst();
      return Number(kept.numDeletedRows) + Number(rest.numDeletedRows);
    });
    for (const [name, run] of [
      ["the kernel's prune (chunks of 1,000)", now],
      ["the same deletion in one statement per queue, as before", before],
    ])
      lines.push(
        `prune, ${name}: ${run.deleted} of ${2 * ROWS} applied jobs deleted in ${run.ms.toFixed(0)} ms; ` +
          `the event loop held at most ${run.stallMs.toFixed(0)} ms`,
      );
    if (now.deleted !== ROWS || before.deleted !== ROWS) failures.push(`prune: expected ${ROWS} deleted by each`);
  } catch (err) {
    failures.push(`prune: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  }
  return { lines, failures };
}
