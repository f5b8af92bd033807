import { statSync } from "node:fs";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

export interface BackgroundCheckpoint {
  /** Frames in the WAL and frames copied into the database file by this checkpoint. */
  log: number;
  checkpointed: number;
  busy: boolean;
  durationMs: number;
}

export interface WalCheckpointerOptions {
  /** The database file; its WAL is `<path>-wal`. */
  path: string;
  /** How often the WAL is looked at. */
  intervalMs: number;
  /** The thread starts once the WAL file first reaches this size. */
  startBytes: number;
  onCheckpoint?(checkpoint: BackgroundCheckpoint): void;
  onError(error: Error): void;
}

/**
 * The thread's code (CommonJS, run with `eval`, so the same text works from `src/` and `dist/`).
 * It opens its own connection and, whenever the WAL changed since its last look, runs a PASSIVE
 * checkpoint: that copies committed frames into the database file without taking the writer lock,
 * so commits on the main connection go on meanwhile. It never waits for a lock (busy_timeout 0).
 */
const THREAD = `
const { parentPort, workerData } = require("node:worker_threads");
const { statSync } = require("node:fs");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma("busy_timeout = 0");
let seen = "";
const look = () => {
  let wal;
  try { wal = statSync(workerData.path + "-wal"); } catch { return; }
  const key = wal.size + ":" + wal.mtimeMs;
  if (key === seen) return;
  seen = key;
  const started = performance.now();
  try {
    const [row] = db.pragma("wal_checkpoint(PASSIVE)");
    // -1: another checkpoint (the health plugin's, SQLite's own) was running; look again next time.
    if (row.log < 0) seen = "";
    parentPort.postMessage({ type: "checkpoint", log: row.log, checkpointed: row.checkpointed,
      busy: row.busy !== 0, durationMs: performance.now() - started });
  } catch (error) {
    seen = "";
    if (error && String(error.code).startsWith("SQLITE_BUSY")) return;
    parentPort.postMessage({ type: "error", message: String(error && error.message || error) });
  }
};
const timer = setInterval(look, workerData.intervalMs);
parentPort.on("message", () => {
  clearInterval(timer);
  db.close();
  parentPort.postMessage({ type: "stopped" });
});
`;

type ThreadMessage =
  ({ type: "checkpoint" } & BackgroundCheckpoint) | { type: "error"; message: string } | { type: "stopped" };

const fileSize = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

/**
 * Keeps the write-ahead log short from a worker thread, so the event loop never stalls on a
 * checkpoint under sustained writes. Without it, SQLite's automatic checkpoint runs inside a
 * commit on the main connection and blocks everything for as long as copying the WAL takes
 * (about half a second for 64 MB here). The thread starts when the WAL first reaches
 * `startBytes`, so short-lived and read-mostly instances never pay for it.
 */
export function startWalCheckpointer(options: WalCheckpointerOptions): { stop(): Promise<void> } {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  let worker: Worker | undefined;
  let stopped = false;
  const watch = setInterval(() => {
    if (worker || fileSize(`${options.path}-wal`) < options.startBytes) return;
    clearInterval(watch);
    worker = new Worker(THREAD, {
      eval: true,
      workerData: { driver, path: options.path, intervalMs: options.intervalMs },
    });
    worker.on("message", (message: ThreadMessage) => {
      if (message.type === "checkpoint") options.onCheckpoint?.(message);
      else if (message.type === "error") options.onError(new Error(`WAL checkpoint thread: ${message.message}`));
    });
    worker.on("error", (error) => options.onError(error));
    worker.unref();
  }, options.intervalMs);
  watch.unref();

  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(watch);
      const running = worker;
      if (!running) return;
      const done = new Promise<void>((resolve) => {
        running.on("message", (message: ThreadMessage) => {
          if (message.type === "stopped") resolve();
        });
        running.once("exit", () => resolve());
      });
      running.ref(); // keep the process alive until the thread has closed its connection
      running.postMessage("stop");
      await done;
      await running.terminate();
    },
  };
}
