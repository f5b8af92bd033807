import { createHash } from "node:crypto";
import { constants, type BigIntStats } from "node:fs";
import { type FileHandle, lstat, open, readdir } from "node:fs/promises";
import { VpbkError, type VpbkWriter } from "../format/index.js";
import { pathViolation, printablePath } from "../format/paths.js";
import { BackupError } from "./errors.js";

/** The data dir folders a generation walks (§3.1 step 3), those present only; `db` is the snapshot. */
export const WALKED_FOLDERS: readonly string[] = Object.freeze(["mailboxes", "media", "pgp", "settings", "storage"]);

/** Files up to this size are read into memory and written from there (no second read). */
export const SMALL_FILE_BYTES = 1024 * 1024;

/** Reads of a file that keeps changing before the generation fails with `E_UNSTABLE_FILE`. */
export const STABLE_READ_TRIES = 3;

const CHUNK_BYTES = 64 * 1024;

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

/** Test hooks: called after each read of a file, before its closing `fstat`. */
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
 * links) must not change. Bytes already streamed into the generation cannot be taken back, so:
 * - a file up to {@link SMALL_FILE_BYTES} is read whole into memory, the read retried while it
 *   changes (at most {@link STABLE_READ_TRIES} times), then written from memory: what goes in is
 *   exactly one stable version;
 * - a larger file is first read once to hash it (retried the same way), then streamed from the same
 *   descriptor while being hashed again, so memory stays flat. If the second read differs from the
 *   first, or the `fstat` changed, the generation fails (`E_UNSTABLE_FILE`, thrown from the content
 *   stream, so the writer fails the whole generation and the caller discards it): a torn file is
 *   never published. The caller may take a new generation.
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
      if (size <= SMALL_FILE_BYTES) {
        const content = Buffer.alloc(size);
        const got = await readAt(handle, content, 0);
        const extra = await readAt(handle, Buffer.alloc(1), size);
        await hooks.afterRead?.(entry.path, attempt, "check");
        if (got !== size || extra !== 0 || !same(before, await handle.stat({ bigint: true }))) continue;
        await writer.file(entry.path, content, meta);
        return size;
      }
      const digest = await hashFile(handle, size);
      await hooks.afterRead?.(entry.path, attempt, "check");
      if (digest === undefined || !same(before, await handle.stat({ bigint: true }))) continue;
      await writer.file(entry.path, streamChecked(handle, entry.path, size, digest, before, hooks), meta);
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

/** SHA-256 of exactly `size` bytes, or undefined when the file is shorter or longer now. */
async function hashFile(handle: FileHandle, size: number): Promise<string | undefined> {
  const hash = createHash("sha256");
  const buffer = Buffer.alloc(CHUNK_BYTES);
  let position = 0;
  while (position < size) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK_BYTES, size - position), position);
    if (bytesRead === 0) return undefined;
    hash.update(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
  if ((await readAt(handle, Buffer.alloc(1), size)) !== 0) return undefined;
  return hash.digest("hex");
}

/** The second read of a large file, checked against the first as it ends (before its digest is written). */
async function* streamChecked(
  handle: FileHandle,
  path: string,
  size: number,
  digest: string,
  before: BigIntStats,
  hooks: FileCopyHooks,
): AsyncGenerator<Buffer> {
  const hash = createHash("sha256");
  let position = 0;
  while (position < size) {
    const chunk = Buffer.alloc(Math.min(CHUNK_BYTES, size - position));
    const bytesRead = await readAt(handle, chunk, position);
    if (bytesRead < chunk.length) break;
    hash.update(chunk);
    position += bytesRead;
    yield chunk;
  }
  await hooks.afterRead?.(path, 1, "copy");
  if (position !== size || hash.digest("hex") !== digest || !same(before, await handle.stat({ bigint: true }))) {
    throw new BackupError(
      "E_UNSTABLE_FILE",
      `${path} changed while it was copied into the generation; the generation was not written`,
      { path },
    );
  }
}

/** Reads until `buffer` is full or the file ends; the bytes read. */
async function readAt(handle: FileHandle, buffer: Buffer, position: number): Promise<number> {
  let got = 0;
  while (got < buffer.length) {
    const { bytesRead } = await handle.read(buffer, got, buffer.length - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got;
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

function isCode(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}
