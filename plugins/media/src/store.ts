import { createReadStream } from "node:fs";
import { open, readdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";

/** A stored file's name: `<id>.<ext>`, nothing that could leave the folder. */
export const STORED_NAME = /^[0-9A-HJKMNP-TV-Z]{26}\.(webp|pdf)$/;

/**
 * Where media files live. The file system under `<data>/media` today; the interface is what an
 * object store (S3) driver would implement: put a finished file, stream all or part of one,
 * remove one, list them.
 */
export interface MediaStore {
  /** Publishes the finished file at `from` as `name`, atomically and durably: whole or not at all. */
  put(name: string, from: string): Promise<void>;
  /** Its size, or undefined when there is no such file. */
  size(name: string): Promise<number | undefined>;
  /** Streams the file, or bytes `start` to `end` (inclusive) of it. */
  read(name: string, range?: { start: number; end: number }): Readable;
  remove(name: string): Promise<void>;
  /** Every stored file with its size and when it was last written (epoch ms). */
  list(): Promise<StoredFile[]>;
}

export interface StoredFile {
  name: string;
  size: number;
  modifiedMs: number;
}

async function fsync(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Files in one folder; `put` is fsync, rename (same file system), then fsync of the folder. */
export class FsMediaStore implements MediaStore {
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
  }

  #path(name: string): string {
    if (!STORED_NAME.test(name)) throw new Error(`'${name}' is not a media file name`);
    return join(this.#dir, name);
  }

  async put(name: string, from: string): Promise<void> {
    await fsync(from);
    await rename(from, this.#path(name));
    await fsync(this.#dir);
  }

  async size(name: string): Promise<number | undefined> {
    try {
      return (await stat(this.#path(name))).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  read(name: string, range?: { start: number; end: number }): Readable {
    return createReadStream(this.#path(name), range);
  }

  async remove(name: string): Promise<void> {
    await rm(this.#path(name), { force: true });
  }

  async list(): Promise<StoredFile[]> {
    const entries = await readdir(this.#dir, { withFileTypes: true });
    const files = entries.filter((entry) => entry.isFile() && STORED_NAME.test(entry.name));
    return Promise.all(
      files.map(async (entry) => {
        const { size, mtimeMs } = await stat(join(this.#dir, entry.name));
        return { name: entry.name, size, modifiedMs: mtimeMs };
      }),
    );
  }
}
