import { totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { BackupError } from "./errors.js";

/**
 * The worker is plain JavaScript, shipped as is in `src/snapshot/` and resolved against the
 * package's `src` from here: the same path works from the TypeScript sources (vitest) and from the
 * built `dist`, and nothing has to be built before a worker can start (the way
 * `plugins/media/src/decode/launch.ts` finds its child).
 */
const WORKER = fileURLToPath(new URL("../../src/snapshot/worker.mjs", import.meta.url));

/** 2 GiB: the largest image the in-memory snapshot takes, whatever the RAM. */
export const MAX_SNAPSHOT_BYTES = 2 * 1024 ** 3;

/** The snapshot cap of §3.1: min(2 GiB, 25 % of this machine's RAM). */
export function defaultSnapshotCap(): number {
  return Math.min(MAX_SNAPSHOT_BYTES, Math.floor(totalmem() / 4));
}

export interface SnapshotOptions {
  /** The live database (WAL mode or not); opened read-only, never created. */
  dbPath: string;
  /** Refuse (`E_DB_TOO_LARGE`) above this many bytes (page_count × page_size); default {@link defaultSnapshotCap}. */
  maxBytes?: number | undefined;
  /**
   * Tests: called once the read snapshot is pinned and T0 read, before `serialize()`; the worker
   * waits (holding its read transaction) until the returned promise settles.
   */
  onPinned?: (() => void | Promise<void>) | undefined;
}

/** A consistent image of the database as of T0, in memory only. */
export interface DbSnapshot {
  /** The `serialize()` image (transferred from the worker, not copied). */
  image: Buffer;
  /** The wall clock read right after the read snapshot was pinned, Unix ms. */
  t0Ms: number;
  pageSize: number;
  pageCount: number;
  sqliteVersion: string;
  /** `PRAGMA user_version` in the snapshot: the schema version for the MANIFEST. */
  userVersion: number;
  /** Rows of each table in the same read snapshot (the restore drill compares them). */
  tableCounts: Record<string, number>;
}

type WorkerReply =
  | { pinned: true; t0Ms: number }
  | {
      ok: true;
      image: ArrayBuffer;
      t0Ms: number;
      pageSize: number;
      pageCount: number;
      sqliteVersion: string;
      userVersion: number;
      tableCounts: Record<string, number>;
    }
  | { ok: false; code: "E_DB_TOO_LARGE" | "E_SNAPSHOT"; message: string };

/**
 * Takes the live snapshot of backup-format.md §3.1 step 1 in a `worker_thread`: its own read-only
 * connection, `BEGIN`, one read to pin the WAL read snapshot, then T0, `serialize()`, `COMMIT`.
 * Writers on other connections go on committing meanwhile; what they commit after the pin is not
 * in the image. The size is checked against the cap before `serialize()` allocates anything
 * (`E_DB_TOO_LARGE`), and the image never touches the disk.
 */
export async function snapshotDatabase(options: SnapshotOptions): Promise<DbSnapshot> {
  const maxBytes = options.maxBytes ?? defaultSnapshotCap();
  const gate = options.onPinned === undefined ? undefined : new SharedArrayBuffer(4);
  const worker = new Worker(WORKER, { workerData: { dbPath: options.dbPath, maxBytes, gate } });
  try {
    const reply = await new Promise<Exclude<WorkerReply, { pinned: true }>>((resolve, reject) => {
      worker.on("message", (message: WorkerReply) => {
        if ("pinned" in message) {
          const release = () => {
            const flag = new Int32Array(gate as SharedArrayBuffer);
            Atomics.store(flag, 0, 1);
            Atomics.notify(flag, 0);
          };
          Promise.resolve()
            .then(options.onPinned)
            .then(release, (error: unknown) => {
              release();
              reject(error instanceof Error ? error : new Error(String(error)));
            });
          return;
        }
        resolve(message);
      });
      worker.once("error", (error) =>
        reject(new BackupError("E_SNAPSHOT", `the snapshot worker failed: ${error.message}`, { cause: error })),
      );
      worker.once("exit", (code) =>
        reject(new BackupError("E_SNAPSHOT", `the snapshot worker exited (${code}) before it answered`)),
      );
    });
    if (!reply.ok) throw new BackupError(reply.code, `database snapshot of ${options.dbPath}: ${reply.message}`);
    return {
      image: Buffer.from(reply.image),
      t0Ms: reply.t0Ms,
      pageSize: reply.pageSize,
      pageCount: reply.pageCount,
      sqliteVersion: reply.sqliteVersion,
      userVersion: reply.userVersion,
      tableCounts: reply.tableCounts,
    };
  } finally {
    await worker.terminate();
  }
}
