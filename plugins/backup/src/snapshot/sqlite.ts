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

/** Bytes of the image the worker hands over at a time. */
const SLICE_BYTES = 1024 * 1024;

/**
 * A consistent image of the database as of T0, in the worker's memory only: {@link content} hands
 * it over a slice at a time, so the image is never held twice. {@link close} ends the worker (the
 * image goes with it); call it whether or not the content was read.
 */
export interface DbSnapshot {
  /** Bytes of the image (`page_count × page_size`). */
  bytes: number;
  /** The image, in order, 1 MiB at a time; read once. */
  content: AsyncIterable<Buffer>;
  close(): Promise<void>;
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

type Meta = Omit<DbSnapshot, "content" | "close">;
type WorkerReply =
  | { pinned: true; t0Ms: number }
  | ({ ok: true } & Meta)
  | { ok: false; code: "E_DB_TOO_LARGE" | "E_SNAPSHOT"; message: string }
  | { slice: ArrayBuffer }
  | { done: true };

/**
 * Takes the live snapshot of backup-format.md §3.1 step 1 in a `worker_thread`: its own read-only
 * connection, `BEGIN`, one read to pin the WAL read snapshot, then T0, `serialize()`, `COMMIT`.
 * Writers on other connections go on committing meanwhile; what they commit after the pin is not
 * in the image. The size is checked against the cap before `serialize()` allocates anything
 * (`E_DB_TOO_LARGE`), and the image never touches the disk: the worker keeps it and hands it over
 * in slices as they are asked for.
 */
export async function snapshotDatabase(options: SnapshotOptions): Promise<DbSnapshot> {
  const maxBytes = options.maxBytes ?? defaultSnapshotCap();
  const gate = options.onPinned === undefined ? undefined : new SharedArrayBuffer(4);
  const worker = new Worker(WORKER, {
    workerData: { dbPath: options.dbPath, maxBytes, sliceBytes: SLICE_BYTES, gate },
  });
  const replies = new ReplyQueue(worker);
  try {
    let reply = await replies.next();
    if ("pinned" in reply) {
      const flag = new Int32Array(gate as SharedArrayBuffer);
      try {
        await options.onPinned?.();
      } finally {
        Atomics.store(flag, 0, 1);
        Atomics.notify(flag, 0);
      }
      reply = await replies.next();
    }
    if (!("ok" in reply)) throw new BackupError("E_SNAPSHOT", "the snapshot worker answered out of turn");
    if (!reply.ok) throw new BackupError(reply.code, `database snapshot of ${options.dbPath}: ${reply.message}`);
    const { ok: _ok, ...meta } = reply;
    return { ...meta, content: slices(worker, replies), close: () => worker.terminate().then(() => undefined) };
  } catch (error) {
    await worker.terminate();
    throw error;
  }
}

/** The image's slices, each asked for when the previous one was taken. */
async function* slices(worker: Worker, replies: ReplyQueue): AsyncGenerator<Buffer> {
  for (;;) {
    worker.postMessage({ next: true });
    const reply = await replies.next();
    if ("done" in reply) return;
    if (!("slice" in reply)) throw new BackupError("E_SNAPSHOT", "the snapshot worker answered out of turn");
    yield Buffer.from(reply.slice);
  }
}

/** The worker's messages in order; its error or early exit fails the next wait. */
class ReplyQueue {
  readonly #queued: WorkerReply[] = [];
  #waiting: { resolve(reply: WorkerReply): void; reject(error: Error): void } | undefined;
  #failure: Error | undefined;

  constructor(worker: Worker) {
    worker.on("message", (message: WorkerReply) => {
      const waiting = this.#waiting;
      this.#waiting = undefined;
      if (waiting) waiting.resolve(message);
      else this.#queued.push(message);
    });
    const fail = (error: Error) => {
      this.#failure ??= error;
      this.#waiting?.reject(error);
      this.#waiting = undefined;
    };
    worker.once("error", (error) =>
      fail(new BackupError("E_SNAPSHOT", `the snapshot worker failed: ${error.message}`, { cause: error })),
    );
    worker.once("exit", (code) =>
      fail(new BackupError("E_SNAPSHOT", `the snapshot worker exited (${code}) before it answered`)),
    );
  }

  next(): Promise<WorkerReply> {
    const queued = this.#queued.shift();
    if (queued) return Promise.resolve(queued);
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }
}
