import { constants, type BigIntStats } from "node:fs";
import { type FileHandle, lstat, open, readdir } from "node:fs/promises";
import { VpbkError, type VpbkWriter } from "../format/index.js";
import { pathViolation, printablePath } from "../format/paths.js";
import { BackupError } from "./errors.js";
import { isCode, readFull } from "../file-io.js";

/** The data dir folders a generation walks (§3.1 step 3), those present only; `db` is the snapshot. */
export const WALKED_FOLDERS: readonly string[] = Object.freeze(["mailboxes", "media", "pgp", "settings", "storage"]);

/**
 * Files up to this size are read whole into memory before any byte of them is written (so a change
 * is retried); larger files are streamed in reads of this size, into two buffers in turn.
 */
export const SMALL_FILE_BYTES = 1024 * 1024;

/** Reads of a file that keeps changing before the generation fails with `E_UNSTABLE_FILE`. */
export const STABLE_READ_TRIES = 3;

/** Something in the data dir a generation cannot represent, or that vanished: END's `skipped`. */
export interface SkippedEntry {
  /** The data dir relative path (non-UTF-8 bytes shown as escapes). */
  path: string;
  /** `symlink`, `fifo`, `socket`, `device`, `not a directory`, `vanished`, `unrepresentable path: …`. */
  reason: string;
}

/** A directory or regular file found by {@link walkDataDir}. */
export interface WalkEntry {
  kind: "dir" | "file";
  /** The data dir relative path, checked by the §2.5 rules. */
  path: string;
  /** Absolute path bytes (names are kept as bytes, as the file system has them). */
  absolute: Buffer;
  mode: number;
  mtimeMs: number;
  /** Bytes when listed (a file may change before it is read; the copy checks). */
  size: number;
}

/**
 * Lists the walked folders of `dataDir` with `lstat` (never following a link), in the order the
 * record stream needs: strictly ascending byte order of the full paths (`media/a-b` before
 * `media/a/b`, which a depth-first walk would not give), so the list is sorted as a whole. Memory
 * is proportional to the number of entries, not to their size. Symlinks, FIFOs, sockets, devices
 * and names the §2.5 rules cannot carry are not listed but returned in `skipped` (and not
 * descended into).
 */
export async function walkDataDir(
  dataDir: string,
  folders: readonly string[] = WALKED_FOLDERS,
): Promise<{ entries: WalkEntry[]; skipped: SkippedEntry[] }> {
  const entries: (WalkEntry & { key: Buffer })[] = [];
  const skipped: SkippedEntry[] = [];
  const root = Buffer.from(dataDir);

  const visit = async (relative: Buffer, top: boolean): Promise<void> => {
    const absolute = Buffer.concat([root, Buffer.from("/"), relative]);
    const path = printablePath(relative);
    const violation = pathViolation(relative);
    if (violation !== undefined) {
      skipped.push({ path, reason: `unrepresentable path: ${violation}` });
      return;
    }
    let stats;
    try {
      stats = await lstat(absolute);
    } catch (error) {
      if (isCode(error, "ENOENT")) {
        if (!top) skipped.push({ path, reason: "vanished" });
        return;
      }
      throw error;
    }
    const kind = stats.isDirectory() ? "dir" : stats.isFile() ? "file" : undefined;
    if (kind === undefined) {
      skipped.push({ path, reason: specialReason(stats) });
      return;
    }
    if (top && kind !== "dir") {
      skipped.push({ path, reason: "not a directory" });
      return;
    }
    entries.push({
      kind,
      path,
      absolute,
      mode: stats.mode & 0o7777,
      mtimeMs: Math.trunc(stats.mtimeMs),
      size: kind === "file" ? stats.size : 0,
      key: relative,
    });
    if (kind !== "dir") return;
    let names: Buffer[];
    try {
      names = await readdir(absolute, { encoding: "buffer" });
    } catch (error) {
      if (isCode(error, "ENOENT")) return;
      throw error;
    }
    for (const name of names) await visit(Buffer.concat([relative, Buffer.from("/"), name]), false);
  };

  for (const folder of folders) await visit(Buffer.from(folder), true);
  entries.sort((a, b) => Buffer.compare(a.key, b.key));
  skipped.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  return { entries: entries.map(({ key: _key, ...entry }) => entry), skipped };
}

/**
 * Test hooks: called after each read of a file, before the `fstat` that checks it. `check` is the
 * read before any byte of the file is written (the whole file, or a large file's first
 * {@link SMALL_FILE_BYTES}); `copy` is the rest of a large file, streamed into the generation.
 */
export interface FileCopyHooks {
  afterRead?: ((path: string, attempt: number, pass: "check" | "copy") => void | Promise<void>) | undefined;
}

/** What {@link writeDataFiles} wrote. */
export interface FilesWritten {
  dirs: number;
  files: number;
  fileBytes: number;
  skipped: SkippedEntry[];
}

/**
 * Writes the walked entries into the generation as DIR and FILE records, in order.
 *
 * A regular file is opened with `O_RDONLY|O_NOFOLLOW|O_NONBLOCK` (a FIFO swapped in after the walk
 * cannot block the open) and `fstat`ed before and after it is read; (size, mtime, ctime, inode,
 * links) must not change, and the file must end exactly at that size. Each file is read once, and
 * its SHA-256 is the writer's, over the bytes it encrypts. Bytes already streamed into the
 * generation cannot be taken back, so:
 * - the first read, of the whole file up to {@link SMALL_FILE_BYTES} or of a larger file's first
 *   {@link SMALL_FILE_BYTES}, comes before any byte of the file is written: a change seen by the
 *   `fstat` after it is retried (at most {@link STABLE_READ_TRIES} reads, then `E_UNSTABLE_FILE`).
 *   A small file goes in from memory: exactly one stable version;
 * - the rest of a larger file is streamed from the same descriptor, the next read overlapping the
 *   sealing of the last, so memory stays flat (two buffers of {@link SMALL_FILE_BYTES}). If it
 *   ends early or late, or the closing `fstat` differs, the generation fails (`E_UNSTABLE_FILE`,
 *   thrown from the content stream before the record's digest is written, so the writer fails the
 *   whole generation and the caller discards it): a torn file is never published, and nothing
 *   can be retried. The caller may take a new generation.
 * A file that vanished before it was opened (deleted after the walk) is reported in `skipped`
 * (`vanished`); one that turned into a symlink or a special file likewise.
 * A name refused by the writer's order rules (a case-folded duplicate, `E_RECORD_ORDER`) is skipped
 * and reported, as are the children of a skipped directory (`E_RECORD_PARENT`): those refusals
 * happen before any byte of the record is written.
 */
export async function writeDataFiles(
  writer: VpbkWriter,
  entries: readonly WalkEntry[],
  hooks: FileCopyHooks = {},
): Promise<FilesWritten> {
  const result: FilesWritten = { dirs: 0, files: 0, fileBytes: 0, skipped: [] };
  for (const entry of entries) {
    try {
      if (entry.kind === "dir") {
        await writer.dir(entry.path, { mode: entry.mode, mtimeMs: entry.mtimeMs });
        result.dirs += 1;
        continue;
      }
      const copied = await copyFile(writer, entry, hooks);
      if (typeof copied === "string") {
        result.skipped.push({ path: entry.path, reason: copied });
      } else {
        result.files += 1;
        result.fileBytes += copied;
      }
    } catch (error) {
      if (
        error instanceof VpbkError &&
        (error.code === "E_RECORD_ORDER" || error.code === "E_RECORD_PARENT" || error.code === "E_RECORD_PATH")
      ) {
        result.skipped.push({ path: entry.path, reason: `${error.code}: ${error.message}` });
        continue;
      }
      throw error;
    }
  }
  return result;
}

/** Copies one file: its size, or why it was skipped. */
async function copyFile(writer: VpbkWriter, entry: WalkEntry, hooks: FileCopyHooks): Promise<number | string> {
  for (let attempt = 1; attempt <= STABLE_READ_TRIES; attempt += 1) {
    let handle: FileHandle;
    try {
      handle = await open(entry.absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (error) {
      if (isCode(error, "ENOENT")) return "vanished";
      if (isCode(error, "ELOOP")) return "symlink";
      throw error;
    }
    try {
      const before = await handle.stat({ bigint: true });
      if (!before.isFile()) return specialReason(before);
      const size = Number(before.size);
      const meta = { mode: Number(before.mode) & 0o7777, mtimeMs: Number(before.mtimeMs), size };
      const whole = size <= SMALL_FILE_BYTES;
      const first = Buffer.allocUnsafe(whole ? size : SMALL_FILE_BYTES);
      const got = await readFull(handle, first, 0);
      const extra = whole ? await readFull(handle, Buffer.alloc(1), size) : 0;
      await hooks.afterRead?.(entry.path, attempt, "check");
      if (got !== first.length || extra !== 0 || !same(before, await handle.stat({ bigint: true }))) continue;
      const content = whole ? first : streamRest(handle, { path: entry.path, attempt, size, before, hooks }, first);
      await writer.file(entry.path, content, meta);
      return size;
    } finally {
      await handle.close();
    }
  }
  throw new BackupError(
    "E_UNSTABLE_FILE",
    `${entry.path} changed while it was read, ${STABLE_READ_TRIES} times; the generation was not written`,
    { path: entry.path },
  );
}

/**
 * A large file's content: `first` (its first read), then the rest, each read into one of two
 * buffers while the writer hashes and seals the other (it is done with a chunk before it asks for
 * the next), then the checks that the file ended at `size` and that its `fstat` did not change.
 */
async function* streamRest(
  handle: FileHandle,
  file: { path: string; attempt: number; size: number; before: BigIntStats; hooks: FileCopyHooks },
  first: Buffer,
): AsyncGenerator<Buffer> {
  let current: Buffer = first;
  let length = first.length;
  let other: Buffer = Buffer.allocUnsafe(first.length);
  let position = first.length;
  let ahead: Promise<number> | undefined;
  try {
    for (;;) {
      const want = Math.min(other.length, file.size - position);
      ahead = want > 0 ? readFull(handle, other.subarray(0, want), position) : undefined;
      ahead?.catch(() => undefined); // awaited below; a failure must not count as unhandled meanwhile
      yield current.subarray(0, length);
      if (ahead === undefined) break;
      const bytesRead = await ahead;
      ahead = undefined;
      position += bytesRead;
      if (bytesRead < want) break;
      [current, other, length] = [other, current, want];
    }
  } finally {
    // The writer stopped early (the generation failed): no read may outlive the descriptor.
    await ahead?.catch(() => undefined);
  }
  const extra = position === file.size ? await readFull(handle, other.subarray(0, 1), position) : 0;
  await file.hooks.afterRead?.(file.path, file.attempt, "copy");
  if (position !== file.size || extra !== 0 || !same(file.before, await handle.stat({ bigint: true }))) {
    throw new BackupError(
      "E_UNSTABLE_FILE",
      `${file.path} changed while it was copied into the generation; the generation was not written`,
      { path: file.path },
    );
  }
}

function same(a: BigIntStats, b: BigIntStats): boolean {
  return (
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs &&
    a.ino === b.ino &&
    a.dev === b.dev &&
    a.nlink === b.nlink
  );
}

function specialReason(stats: { isSymbolicLink(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (stats.isSymbolicLink()) return "symlink";
  if (stats.isFIFO()) return "fifo";
  if (stats.isSocket()) return "socket";
  return "device";
}
