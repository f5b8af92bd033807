import { constants } from "node:fs";
import { lstat, open, readdir } from "node:fs/promises";
import { join } from "node:path";
import { HEADER_BYTES, parseHeader, type VpbkHeader, VpbkError } from "../format/index.js";
import { LOCK_NAME } from "../generation/lock.js";
import { isPartialName, nameSecond } from "../generation/naming.js";
import { BackupError } from "../snapshot/errors.js";
import { isCode, readFull } from "../file-io.js";

/**
 * What BACKUP_TARGET holds, read cheaply (backup-format.md §4): each generation's cleartext header
 * only, never a passphrase, never the KDF. The header is not authenticated here, so what this
 * reports is a claim; point-in-time selection authenticates it before relying on it.
 */

/** `vk-*.vpbk`: the files read as generations (any other name is foreign). */
const GENERATION_FILE = /^vk-.*\.vpbk$/;

/** One generation as its cleartext header and its name describe it. */
export interface GenerationInfo {
  /** The file, `<dir>/<name>`. */
  path: string;
  /** The file name. */
  name: string;
  /** The header's generation id, lower-case hex. */
  id: string;
  /** The header's created_ms (T0), Unix ms UTC. */
  createdMs: number;
  /** The file's size. */
  bytes: number;
  /**
   * §2.7 check 9: the name is `vk-YYYYMMDD-HHMMSS.vpbk` and its second is floor(created_ms / 1000)
   * in UTC. False for any other name too: such a file is suspicious (`E_NAME_TIME`).
   */
  nameMatches: boolean;
}

/** A writer's temporary `.vk-….vpbk.partial-<rand>` file. */
export interface PartialFile {
  name: string;
  path: string;
  bytes: number;
  mtimeMs: number;
}

/** A `vk-*.vpbk` file whose header could not be read or parsed. */
export interface UnreadableFile {
  name: string;
  /** Why, e.g. `E_MAGIC: not a .vpbk file (bad magic) (byte offset 0)`. */
  reason: string;
}

/** The contents of a generation directory, sorted; nothing in it was modified. */
export interface GenerationListing {
  /** Sorted by created_ms descending (then by name descending). */
  generations: GenerationInfo[];
  /** Temporary files of writers (running, or dead ones' leftovers), by name. */
  partials: PartialFile[];
  /**
   * Names of entries this does not understand, never to be touched: other names, directories,
   * symlinks and special files (a symlink named `vk-….vpbk` included). The writer's lock file is
   * not listed.
   */
  foreign: string[];
  /** `vk-*.vpbk` regular files without a readable, well-formed header, by name. */
  unreadable: UnreadableFile[];
}

/**
 * Lists the generations in `dir` (BACKUP_TARGET or a `-in` directory) from their 188-byte
 * cleartext headers (§2.7 checks 1–3, then check 9 against the name). Entries are examined with
 * `lstat` and opened with `O_NOFOLLOW`, so no symlink is followed. An entry that vanishes while it
 * is listed is left out. A missing or unreadable `dir` is `E_TARGET`.
 */
export async function listGenerations(dir: string): Promise<GenerationListing> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    throw new BackupError("E_TARGET", `cannot read the generation directory ${dir}: ${String(error)}`, {
      cause: error,
    });
  }
  const listing: GenerationListing = { generations: [], partials: [], foreign: [], unreadable: [] };
  for (const name of names.sort()) {
    if (name === LOCK_NAME) continue;
    const path = join(dir, name);
    let stats;
    try {
      stats = await lstat(path);
    } catch (error) {
      if (isCode(error, "ENOENT")) continue;
      throw error;
    }
    if (stats.isFile() && isPartialName(name)) {
      listing.partials.push({ name, path, bytes: stats.size, mtimeMs: stats.mtimeMs });
    } else if (!stats.isFile() || !GENERATION_FILE.test(name)) {
      listing.foreign.push(name);
    } else {
      try {
        const { header, bytes } = await readGenerationHeader(path);
        listing.generations.push({
          path,
          name,
          id: header.generationId,
          createdMs: header.createdMs,
          bytes,
          nameMatches: nameMatchesCreated(name, header.createdMs),
        });
      } catch (error) {
        if (isCode(error, "ENOENT")) continue;
        listing.unreadable.push({ name, reason: describe(error) });
      }
    }
  }
  listing.generations.sort((a, b) => b.createdMs - a.createdMs || (a.name < b.name ? 1 : -1));
  return listing;
}

/** §2.7 check 9: whether `name` labels the UTC second of `createdMs`. */
export function nameMatchesCreated(name: string, createdMs: number): boolean {
  return nameSecond(name) === Math.floor(createdMs / 1000);
}

/**
 * Reads and parses the cleartext header of the regular file at `path` (opened with `O_NOFOLLOW`,
 * `O_NONBLOCK`: a symlink or FIFO swapped in is refused, not followed or waited on), and its size.
 * Throws the header's {@link VpbkError}, or the file system's error.
 */
export async function readGenerationHeader(path: string): Promise<{ header: VpbkHeader; bytes: number }> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new VpbkError("E_IO", `${path} is not a regular file`);
    const head = Buffer.alloc(HEADER_BYTES);
    const got = await readFull(handle, head, 0);
    return { header: parseHeader(head.subarray(0, got)), bytes: stats.size };
  } finally {
    await handle.close();
  }
}

function describe(error: unknown): string {
  if (error instanceof VpbkError) return error.describe();
  return error instanceof Error ? error.message : String(error);
}
