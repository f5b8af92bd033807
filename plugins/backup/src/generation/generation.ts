import { createHash, randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { type FileHandle, lstat, open, realpath, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { join, relative, sep } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  createVpbkWriter,
  DEFAULT_KDF,
  deriveKekAhead,
  FRAME_OVERHEAD_BYTES,
  FRAME_PLAINTEXT_BYTES,
  type KdfParams,
  type KekDerivation,
  type PreparedKek,
  type VpbkWriteSummary,
} from "../format/index.js";
import { BackupError } from "../snapshot/errors.js";
import { type FileCopyHooks, type SkippedEntry, walkDataDir, writeDataFiles } from "../snapshot/files.js";
import { type DbSnapshot, snapshotDatabase } from "../snapshot/sqlite.js";
import { listGenerations } from "../policy/generations.js";
import { PACKAGE_VERSION } from "../version.js";
import { acquireLock, withMutex } from "./lock.js";
import { generationName } from "./naming.js";
import { publish, readAfterWrite, removeOldPartials } from "./publish.js";
import { fsyncDir } from "../restore/durable.js";

/**
 * What the writer's output buffers before it waits for the file: 16 whole frames (about 1 MiB),
 * handed to the file in writes of that size. With the writer's default of four frames, each
 * 256 KiB write was a thread-pool round trip the sealing waited on (docs/benchmarks.md, "Backup").
 */
const OUTPUT_BUFFER_BYTES = 16 * (FRAME_PLAINTEXT_BYTES + FRAME_OVERHEAD_BYTES);

export interface WriteGenerationOptions {
  /** The data dir (`<dataDir>/db/vellum.sqlite`, `media/`, `mailboxes/`, `settings/`, `pgp/`). */
  dataDir: string;
  /** BACKUP_TARGET: an existing directory outside the data dir (and not containing it). */
  target: string;
  /** SERVICE_BACKUP_PASSPHRASE; must not be empty. */
  passphrase: string | Uint8Array;
  /** Argon2id parameters; default the format's (64 MiB, t 3, p 4). */
  kdf?: KdfParams | undefined;
  /** The Argon2id implementation (tests memoise it). */
  deriveKek?: KekDerivation | undefined;
  /**
   * The wall clock, Unix ms; default `Date.now`. T0 is read in the snapshot worker with its own
   * `Date.now()` and shifted by the offset between the two clocks.
   */
  now?: (() => number) | undefined;
  /** The live database; default `<dataDir>/db/vellum.sqlite`. */
  dbPath?: string | undefined;
  /** The snapshot cap; default min(2 GiB, 25 % of RAM). */
  maxDbBytes?: number | undefined;
  /** How long to wait for the wall clock to pass the newest generation's label; default 2 s, then `E_CLOCK_BEHIND`. */
  maxClockWaitMs?: number | undefined;
  /** MANIFEST `app`; default `{ name: "vellum", version: <this package's version> }`. */
  app?: { name: string; version: string } | undefined;
  /** MANIFEST `dataDirId`; default the first 32 hex digits of SHA-256 of the data dir's realpath. */
  dataDirId?: string | undefined;
  /** Warnings (skipped entries, the clock going backwards). */
  warn?: ((message: string) => void) | undefined;
  /**
   * Called as the file grows: bytes written so far, and the bytes expected (the database image and
   * the listed files; the archive adds about 0.05 %).
   */
  onProgress?: ((written: number, expected: number) => void) | undefined;
  /** Tests: hooks into the file copy. */
  fileHooks?: FileCopyHooks | undefined;
  /**
   * Tests only: called synchronously when the temporary `.partial-*` file was created, still empty
   * (`partial`), and when it is written, fsynced and checked but not yet published (`sealed`), so a crash
   * test can stop the process there. It must not throw.
   */
  onStep?: ((step: "partial" | "sealed") => void) | undefined;
}

/** A published, read-after-write verified generation. */
export interface GenerationResult {
  /** The published file. */
  path: string;
  /** Its name, `vk-YYYYMMDD-HHMMSS.vpbk`. */
  name: string;
  /** The generation id, lower-case hex. */
  id: string;
  /** T0, Unix ms. */
  createdMs: number;
  /** When the last source byte was read, Unix ms. */
  sealedMs: number;
  /** Bytes of the file. */
  bytes: number;
  /** Lower-case hex. */
  contentRoot: string;
  entries: number;
  fileBytes: number;
  /** What was not backed up (symlinks, special files, unrepresentable names, vanished files). */
  skipped: SkippedEntry[];
  /** Rows of each database table at T0 (also in the MANIFEST as `tables`). */
  tableCounts: Record<string, number>;
}

/**
 * Writes one generation of `dataDir` into `target` (backup-format.md §2.6, §3.1, §4):
 * 1. refuses an empty passphrase, and a target whose realpath equals, lies inside or contains the
 *    data dir's (`E_TARGET`);
 * 2. takes the in-process mutex and `target/.vellum-backup.lock` (`E_LOCKED` if another live
 *    writer holds it);
 * 3. waits for the first UTC second after the newest generation's label (at most one generation
 *    per second; labels only go up: if the clock is behind that label by more than
 *    `maxClockWaitMs`, `E_CLOCK_BEHIND`), then takes the database snapshot in a worker (T0 read
 *    after the pin; taken again if T0 still falls in a labelled second);
 * 4. streams MANIFEST, `db`, the image, the walked files and END through the encrypting writer
 *    into `.vk-….vpbk.partial-<rand>` (0600, O_EXCL), fsyncs it, publishes it with `link()`
 *    (EEXIST → `E_NAME_TAKEN`; without hard links: exists → error, else rename), unlinks the
 *    temporary name and fsyncs the directory;
 * 5. re-reads the published file with the in-memory data key (`E_VERIFY` on failure, the file is
 *    left for the catalog to report), then removes `*.partial-*` older than 1 h.
 * Any failure before publishing removes the temporary file. No plaintext is written anywhere: the
 * image stays in memory, files stream from their descriptors into the cipher.
 */
export async function writeGeneration(options: WriteGenerationOptions): Promise<GenerationResult> {
  if (options.passphrase.length === 0) {
    throw new BackupError("E_USAGE", "the backup passphrase is empty; there is no unencrypted backup");
  }
  const dataDir = await realDir(options.dataDir, "data dir");
  const target = await realDir(options.target, "backup target");
  const inside = (parent: string, child: string) => {
    const rel = relative(parent, child);
    return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !rel.startsWith(sep));
  };
  if (inside(dataDir, target) || inside(target, dataDir)) {
    throw new BackupError(
      "E_TARGET",
      `the backup target ${target} equals, lies inside or contains the data dir ${dataDir}; refused`,
    );
  }
  return withMutex(target, async () => {
    const lock = await acquireLock(target, options.now ?? Date.now);
    try {
      return await writeLocked(options, dataDir, target);
    } finally {
      await lock.release();
    }
  });
}

async function writeLocked(
  options: WriteGenerationOptions,
  dataDir: string,
  target: string,
): Promise<GenerationResult> {
  const now = options.now ?? Date.now;
  const warn = options.warn ?? (() => undefined);
  // Argon2id first, then the snapshot: its memory is released before the image is taken.
  const kek = await deriveKekAhead(options.passphrase, options.kdf ?? DEFAULT_KDF, options.deriveKek);
  const snapshot = await timedSnapshot(options, dataDir, target, now, warn);
  try {
    return await writeSnapshot(options, dataDir, target, snapshot, kek);
  } finally {
    await snapshot.close();
  }
}

/** Steps 4–6 of §2.6 for a taken snapshot: the partial file, publish, read-after-write. */
async function writeSnapshot(
  options: WriteGenerationOptions,
  dataDir: string,
  target: string,
  snapshot: DbSnapshot,
  kek: PreparedKek,
): Promise<GenerationResult> {
  const now = options.now ?? Date.now;
  const warn = options.warn ?? (() => undefined);
  const createdMs = snapshot.t0Ms;
  const name = generationName(createdMs);
  const finalPath = join(target, name);
  const manifest = {
    app: options.app ?? { name: "vellum", version: PACKAGE_VERSION },
    createdAt: new Date(createdMs).toISOString(),
    host: hostname(),
    dataDirId: options.dataDirId ?? createHash("sha256").update(dataDir).digest("hex").slice(0, 32),
    dbSchemaVersion: snapshot.userVersion,
    tables: snapshot.tableCounts,
    snapshot: {
      method: "sqlite-serialize",
      sqliteVersion: snapshot.sqliteVersion,
      pageSize: snapshot.pageSize,
      pageCount: snapshot.pageCount,
      t0Ms: createdMs,
    },
  };
  const writer = await createVpbkWriter({
    passphrase: options.passphrase,
    createdMs,
    manifest,
    kdf: options.kdf,
    kek,
    highWaterMark: OUTPUT_BUFFER_BYTES,
  });
  const tmpPath = join(target, `.${name}.partial-${randomBytes(6).toString("hex")}`);
  const handle = await open(
    tmpPath,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  options.onStep?.("partial");
  let summary: VpbkWriteSummary;
  let skipped: SkippedEntry[];
  let sealed = false;
  try {
    const walkStart = now();
    const walk = await walkDataDir(dataDir);
    const expected = snapshot.bytes + walk.entries.reduce((sum, entry) => sum + entry.size, 0);
    const sink = drain(writer.readable, handle, (written) => options.onProgress?.(written, expected)).catch(
      (error: unknown) => {
        throw targetWriteError(error, target);
      },
    );
    sink.catch(() => undefined); // awaited below; a failure also fails the writer's next call
    try {
      await writer.dir("db");
      await writer.sqliteDb(snapshot.content, { mtimeMs: createdMs, size: snapshot.bytes });
      const files = await writeDataFiles(writer, walk.entries, options.fileHooks);
      const walkEnd = now();
      skipped = [...walk.skipped, ...files.skipped].sort((a, b) =>
        Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)),
      );
      for (const entry of skipped) warn(`backup skipped ${JSON.stringify(entry.path)}: ${entry.reason}`);
      summary = await writer.end({ sealedMs: walkEnd, end: { walkStart, walkEnd, skipped } });
    } catch (error) {
      writer.abort(error instanceof Error ? error : new Error(String(error)));
      // A failed write to the target ends the writer's stream, and the writer's next call throws
      // only an AbortError: the sink's error says what happened (a full target, say).
      const written = await sink.then(
        () => undefined,
        (sinkError: unknown) => sinkError,
      );
      throw written instanceof BackupError && written !== error ? written : error;
    }
    await sink;
    const [synced, checked] = await Promise.allSettled([
      handle.sync(),
      readAfterWrite(tmpPath, finalPath, writer.dataKey, summary),
    ]);
    if (synced.status === "rejected") throw synced.reason;
    if (checked.status === "rejected") throw checked.reason;
    sealed = true;
    options.onStep?.("sealed");
  } finally {
    await handle.close();
    // Nothing that was not written whole, fsynced and checked is published: the partial file goes.
    if (!sealed) await unlink(tmpPath).catch(() => undefined);
  }
  try {
    await publish(tmpPath, finalPath);
  } finally {
    await unlink(tmpPath).catch(() => undefined);
  }
  await fsyncDir(target);
  await removeOldPartials(target, now());
  return {
    path: finalPath,
    name,
    id: summary.generationId,
    createdMs,
    sealedMs: summary.sealedMs,
    bytes: summary.archiveBytes,
    contentRoot: summary.contentRoot,
    entries: summary.entries,
    fileBytes: summary.fileBytes,
    skipped,
    tableCounts: snapshot.tableCounts,
  };
}

/**
 * §4's naming rules around the snapshot: T0 must fall in a UTC second after the newest label in
 * `target`. Waits (under a second) for the next second boundary; a clock behind the newest label
 * by more than `maxClockWaitMs` is refused with `E_CLOCK_BEHIND` after a warning.
 */
async function timedSnapshot(
  options: WriteGenerationOptions,
  dataDir: string,
  target: string,
  now: () => number,
  warn: (message: string) => void,
): Promise<DbSnapshot> {
  // Labels from authentic headers only: a stray file named like a future generation does not pause backups.
  const { generations } = await listGenerations(target);
  const labelled = generations.find((g) => g.nameMatches);
  const newest = labelled === undefined ? undefined : Math.floor(labelled.createdMs / 1000);
  const maxWait = options.maxClockWaitMs ?? 2000;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    if (newest !== undefined) {
      const wait = (newest + 1) * 1000 - now();
      if (wait > 1000) {
        warn(
          `backup clock went backwards: now is ${new Date(now()).toISOString()}, the newest generation is labelled ${new Date(newest * 1000).toISOString()}`,
        );
        if (wait > maxWait) {
          throw new BackupError(
            "E_CLOCK_BEHIND",
            `the wall clock is behind the newest generation (labelled ${new Date(newest * 1000).toISOString()}); generations pause until it has passed`,
          );
        }
      }
      if (wait > 0) await sleep(wait + 1);
    }
    const snapshot = await snapshotDatabase({
      dbPath: options.dbPath ?? join(dataDir, "db", "vellum.sqlite"),
      maxBytes: options.maxDbBytes,
    });
    // T0 came from the worker's Date.now(); express it on the caller's clock.
    snapshot.t0Ms += now() - Date.now();
    if (newest === undefined || Math.floor(snapshot.t0Ms / 1000) > newest) return snapshot;
    await snapshot.close();
  }
  throw new BackupError("E_CLOCK_BEHIND", "T0 kept falling in an already labelled second");
}

/**
 * A system call that failed writing the generation's partial file in `target` becomes
 * `E_NO_SPACE` for a full target, else `E_IO`, naming the target; any other error (the writer's
 * own, which ended its stream) is returned as it is.
 */
function targetWriteError(error: unknown, target: string): unknown {
  if ((error as NodeJS.ErrnoException | undefined)?.syscall === undefined) return error;
  const code = (error as NodeJS.ErrnoException).code;
  const reason = error instanceof Error ? error.message : String(error);
  if (code === "ENOSPC" || code === "EDQUOT")
    return new BackupError("E_NO_SPACE", `the backup target ${target} is full: ${reason}`, { cause: error });
  return new BackupError("E_IO", `writing a generation into ${target} failed: ${reason}`, { cause: error });
}

async function drain(
  readable: AsyncIterable<unknown>,
  handle: FileHandle,
  progress: (written: number) => void,
): Promise<void> {
  let total = 0;
  for await (const chunk of readable) {
    const bytes = chunk as Buffer;
    let written = 0;
    while (written < bytes.length) {
      const result = await handle.write(bytes, written, bytes.length - written);
      written += result.bytesWritten;
    }
    total += written;
    progress(total);
  }
}

async function realDir(path: string, what: string): Promise<string> {
  try {
    const real = await realpath(path);
    if (!(await lstat(real)).isDirectory()) throw new BackupError("E_TARGET", `the ${what} ${path} is not a directory`);
    return real;
  } catch (error) {
    if (error instanceof BackupError) throw error;
    throw new BackupError("E_TARGET", `the ${what} ${path} cannot be resolved: ${String(error)}`, { cause: error });
  }
}
