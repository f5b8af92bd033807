import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { readMemory } from "../lib/server.mjs";

/**
 * @typedef {object} Sample
 * @property {number} t seconds since the soak started
 * @property {number} life which run of the server (1, then 2 after a kill and restart, …)
 * @property {number} rssMb resident memory of the server
 * @property {number} fds open file descriptors of the server
 * @property {number} walMb size of the WAL
 * @property {number} dbMb size of the database file
 * @property {number} dataMb everything under the data directory
 * @property {number} backups generations in the backup target
 * @property {number} jobs rows of `_vellum_jobs` (queued, applied and failed, every queue)
 * @property {number} queued jobs waiting, every queue
 * @property {number} failed dead-lettered jobs, every queue
 * @property {number} events rows of the webhooks outbox
 */

const MB = 1024 * 1024;

function fileBytes(path) {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Bytes under `dir`, files only; entries that vanish while it walks count nothing. */
function treeBytes(dir) {
  let total = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? treeBytes(path) : fileBytes(path);
  }
  return total;
}

function countEntries(dir) {
  try {
    return readdirSync(dir).length;
  } catch {
    return 0;
  }
}

/** What the soak watches, read from outside the server: /proc, the files, and the database (read-only). */
export class Monitor {
  /** @param {{ dataDir: string, backupDir: string }} options */
  constructor({ dataDir, backupDir }) {
    this.dataDir = dataDir;
    this.backupDir = backupDir;
    this.dbPath = join(dataDir, "db", "vellum.sqlite");
    /** @type {Sample[]} */
    this.samples = [];
    this.started = performance.now();
  }

  /**
   * One sample of the server `pid` in its `life`-th run.
   * @returns {Sample}
   */
  sample(pid, life) {
    const memory = readMemory(pid);
    const db = new Database(this.dbPath, { readonly: true, fileMustExist: true });
    let rows;
    try {
      db.pragma("busy_timeout = 5000");
      rows = db
        .prepare(
          `SELECT count(*) AS jobs, coalesce(sum(status = 'queued'), 0) AS queued, coalesce(sum(status = 'failed'), 0) AS failed,
            (SELECT count(*) FROM webhook_events) AS events FROM _vellum_jobs`,
        )
        .get();
    } finally {
      db.close();
    }
    const sample = {
      t: (performance.now() - this.started) / 1000,
      life,
      rssMb: (memory?.rss ?? 0) / MB,
      fds: countEntries(`/proc/${pid}/fd`),
      walMb: fileBytes(`${this.dbPath}-wal`) / MB,
      dbMb: fileBytes(this.dbPath) / MB,
      dataMb: treeBytes(this.dataDir) / MB,
      backups: countEntries(this.backupDir),
      jobs: rows.jobs,
      queued: rows.queued,
      failed: rows.failed,
      events: rows.events,
    };
    this.samples.push(sample);
    return sample;
  }

  /**
   * The pids of the processes holding the queues' leases, read from the lease table beside the
   * database (a holder is `<host>/<pid>/<id>`).
   * @returns {Set<number>}
   */
  queueLeaseHolders() {
    const db = new Database(`${this.dbPath}.leases`, { readonly: true, fileMustExist: true });
    try {
      db.pragma("busy_timeout = 5000");
      const rows = db.prepare("SELECT holder FROM leases WHERE name LIKE 'queue:%'").all();
      return new Set(rows.map((row) => Number(row.holder.split("/").at(-2))));
    } finally {
      db.close();
    }
  }
}
