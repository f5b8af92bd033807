import { type FileHandle, open } from "node:fs/promises";
import { readFull } from "../file-io.js";
import { VpbkError } from "./errors.js";

/**
 * Where an archive's bytes come from: a file, a byte array, or any (async) iterable of chunks such
 * as a stream. Reads are sequential and copy into the caller's buffer (the frame reader's one
 * frame buffer); what a source holds besides is fixed, never sized by the archive's contents.
 */
export interface ByteSource {
  /** The total size when known (a file or a byte array), else undefined. */
  readonly size: number | undefined;
  /**
   * Fills `target[offset, offset + length)` unless the source ends first; returns how many bytes
   * were read (fewer than `length` only at the end). A failing source is `E_IO`.
   */
  read(target: Buffer, offset: number, length: number): Promise<number>;
  /** Stops reading and releases the file, if any. */
  close(): Promise<void>;
}

/** An archive to read: a file path, the bytes themselves, or a stream of chunks. */
export type VpbkSource = string | Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

/**
 * Bytes of each of a file source's two read buffers: one is read from while the next read fills
 * the other, so disk reads overlap with decryption instead of costing a thread-pool round trip per
 * frame (about twice the verify throughput). Fixed (512 KiB in all, allocated once), within §6's
 * "1 MiB of frame buffers".
 */
const READ_AHEAD_BYTES = 256 * 1024;

/** Opens `source` for sequential reading (`E_IO` when a file cannot be opened). */
export async function openSource(source: VpbkSource): Promise<ByteSource> {
  if (typeof source === "string") return openFile(source);
  if (source instanceof Uint8Array) return new ChunkSource([source], source.length);
  return new ChunkSource(source, undefined);
}

async function openFile(path: string): Promise<ByteSource> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, "r");
    const stat = await handle.stat();
    if (!stat.isFile()) throw new Error("not a regular file");
    return new FileSource(handle, stat.size);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    throw ioError(`cannot open ${path}`, error);
  }
}

/**
 * A file read sequentially into two fixed buffers in turn: the next read is in flight while the
 * bytes of the last are copied out, and a buffer is refilled only once all its bytes were. The
 * first read goes straight into the caller's buffer; the buffers are made and the read-ahead starts
 * at the second. The header is read before Argon2id, whose 64 MiB are the peak of a verify or a
 * restore: no read-ahead byte is in memory until Argon2id is done.
 */
class FileSource implements ByteSource {
  readonly size: number;
  readonly #handle: FileHandle;
  /** The buffer the read in flight fills, and the other one (the current chunk's); made at the second read. */
  #filling = Buffer.alloc(0);
  #spare = Buffer.alloc(0);
  #chunk = Buffer.alloc(0);
  #at = 0;
  #position = 0;
  /** The read filling `#filling`; undefined until the second read, null once the file ended or the source closed. */
  #ahead: Promise<number> | undefined | null;

  constructor(handle: FileHandle, size: number) {
    this.#handle = handle;
    this.size = size;
  }

  async read(target: Buffer, offset: number, length: number): Promise<number> {
    if (this.#ahead === undefined) {
      if (this.#position === 0) return this.#readFirst(target, offset, length);
      this.#filling = Buffer.allocUnsafe(READ_AHEAD_BYTES);
      this.#spare = Buffer.allocUnsafe(READ_AHEAD_BYTES);
      this.#ahead = this.#readAhead();
    }
    let done = 0;
    while (done < length) {
      if (this.#at === this.#chunk.length && !(await this.#next())) break;
      const n = this.#chunk.copy(
        target,
        offset + done,
        this.#at,
        Math.min(this.#chunk.length, this.#at + length - done),
      );
      this.#at += n;
      done += n;
    }
    return done;
  }

  async close(): Promise<void> {
    const ahead = this.#ahead;
    this.#ahead = null;
    await ahead?.catch(() => undefined);
    await this.#handle.close().catch(() => undefined);
  }

  async #readFirst(target: Buffer, offset: number, length: number): Promise<number> {
    let done: number;
    try {
      done = await readFull(this.#handle, target.subarray(offset, offset + length), 0);
    } catch (error) {
      this.#ahead = null;
      throw ioError("reading the archive failed", error);
    }
    this.#position = done;
    if (done < length) this.#ahead = null;
    return done;
  }

  /** Takes the read in flight as the current chunk and starts the next; false at the end. */
  async #next(): Promise<boolean> {
    if (!this.#ahead) return false;
    let got: number;
    try {
      got = await this.#ahead;
    } catch (error) {
      this.#ahead = null;
      throw ioError("reading the archive failed", error);
    }
    if (got === 0) {
      this.#ahead = null;
      return false;
    }
    this.#chunk = this.#filling.subarray(0, got);
    this.#at = 0;
    this.#position += got;
    [this.#filling, this.#spare] = [this.#spare, this.#filling];
    this.#ahead = this.#readAhead();
    return true;
  }

  #readAhead(): Promise<number> {
    const read = this.#handle
      .read(this.#filling, 0, READ_AHEAD_BYTES, this.#position)
      .then((result) => result.bytesRead);
    read.catch(() => undefined); // awaited by #next or close; a failure must not go unhandled meanwhile
    return read;
  }
}

class ChunkSource implements ByteSource {
  readonly size: number | undefined;
  readonly #iterator: AsyncIterator<Uint8Array> | Iterator<Uint8Array>;
  readonly #release: (() => void) | undefined;
  #chunk: Uint8Array = new Uint8Array(0);
  #at = 0;
  #ended = false;

  constructor(
    chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    size: number | undefined,
    release?: () => void,
  ) {
    this.size = size;
    this.#release = release;
    this.#iterator =
      Symbol.asyncIterator in chunks
        ? (chunks as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]()
        : (chunks as Iterable<Uint8Array>)[Symbol.iterator]();
  }

  async read(target: Buffer, offset: number, length: number): Promise<number> {
    let done = 0;
    while (done < length) {
      if (this.#at === this.#chunk.length) {
        if (this.#ended) break;
        let next: IteratorResult<Uint8Array>;
        try {
          next = await this.#iterator.next();
        } catch (error) {
          throw ioError("reading the archive failed", error);
        }
        if (next.done) {
          this.#ended = true;
          break;
        }
        if (!(next.value instanceof Uint8Array)) throw ioError("the archive stream yielded something not bytes");
        this.#chunk = next.value;
        this.#at = 0;
        continue;
      }
      const n = Math.min(length - done, this.#chunk.length - this.#at);
      target.set(this.#chunk.subarray(this.#at, this.#at + n), offset + done);
      this.#at += n;
      done += n;
    }
    return done;
  }

  async close(): Promise<void> {
    if (!this.#ended) {
      this.#ended = true;
      try {
        await this.#iterator.return?.();
      } catch {
        // The archive is closed either way.
      }
    }
    this.#release?.();
  }
}

function ioError(message: string, cause?: unknown): VpbkError {
  const reason = cause instanceof Error ? `: ${cause.message}` : "";
  return new VpbkError("E_IO", `${message}${reason}`, { cause });
}
