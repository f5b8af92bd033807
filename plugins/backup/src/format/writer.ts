import { createHash, type Hash } from "node:crypto";
import { Readable } from "node:stream";
import { VpbkError } from "./errors.js";
import { FRAME_OVERHEAD_BYTES, FRAME_PLAINTEXT_BYTES, FrameSealer, MAX_SEAL_DELAY_MS } from "./frames.js";
import { createHeader, type PreparedKek, type VpbkHeader } from "./header.js";
import { DEFAULT_KDF, type KdfParams, type KekDerivation } from "./kdf.js";
import type { VpbkKeys } from "./keys.js";
import { pathBytes, SQLITE_DB_PATH } from "./paths.js";
import {
  ContentRoot,
  encodeRecordHeader,
  RECORD_DIR,
  RECORD_END,
  RECORD_FILE,
  RECORD_MANIFEST,
  RECORD_SQLITE_DB,
  type RecordHeader,
  RecordRules,
} from "./records.js";

export interface VpbkWriterOptions {
  /** `SERVICE_BACKUP_PASSPHRASE`: UTF-8 bytes of the string as given, no normalisation. */
  passphrase: string | Uint8Array;
  /** T0: the wall clock read right after the DB snapshot was pinned (§3.1), Unix ms UTC. */
  createdMs: number;
  /**
   * The MANIFEST JSON (§2.5: app, createdAt, host, dataDirId, dbSchemaVersion, snapshot…);
   * `format: "vellum-backup"` and `formatVersion: 1` are set by the writer. At most 1 MiB.
   */
  manifest: Record<string, unknown>;
  /** Argon2id parameters; default {@link DEFAULT_KDF}. They must lie within the reader's bounds. */
  kdf?: KdfParams | undefined;
  /** The Argon2id implementation; default the `argon2` package. */
  deriveKek?: KekDerivation | undefined;
  /** A KEK derived ahead with `deriveKekAhead` and the same `kdf`: the writer then runs no Argon2id. */
  kek?: PreparedKek | undefined;
  /**
   * Encrypted bytes the output stream buffers before the writer waits for its reader; default four
   * full frames (256 KiB and 128 bytes). Frames are pushed in buffers of as many whole frames as
   * that holds (at least one).
   */
  highWaterMark?: number | undefined;
}

/** A record's informational metadata. */
export interface VpbkRecordMeta {
  /** Permission bits, informational (restore uses 0700 and 0600); default 0o700 for DIR, 0o600 else. */
  mode?: number | undefined;
  /** Modification time, Unix ms; default 0. */
  mtimeMs?: number | undefined;
}

/**
 * What a FILE or SQLITE_DB record's content may be given as. The writer is done with each chunk
 * (hashed, and sealed or copied) before it asks for the next, so a source may refill one buffer.
 */
export type VpbkContent = Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

/** What {@link VpbkWriter.end} adds to the END record and FINAL frame. */
export interface VpbkEndOptions {
  /** The wall clock after the last source byte was read; default now. In [createdMs, createdMs + 24 h]. */
  sealedMs?: number | undefined;
  /**
   * More END JSON (walk times, `skipped: [{path, reason}]`…). `entries` and `fileBytes` are always
   * the writer's own counts. At most 64 KiB in all.
   */
  end?: Record<string, unknown> | undefined;
}

/** A finished generation. */
export interface VpbkWriteSummary {
  generationId: string;
  createdMs: number;
  sealedMs: number;
  /** DATA frames. */
  dataFrames: number;
  /** Plaintext bytes (the record stream). */
  dataBytes: number;
  /** Bytes of the whole `.vpbk` file, up to the end of its FINAL frame. */
  archiveBytes: number;
  /** DIR, FILE and SQLITE_DB records. */
  entries: number;
  /** Content bytes of the FILE and SQLITE_DB records. */
  fileBytes: number;
  /** The content root, lower-case hex. */
  contentRoot: string;
}

/**
 * Writes one generation: records in, the encrypted `.vpbk` byte stream out through
 * {@link readable}. Memory stays flat: each method waits while the output is not being read, and
 * at most one frame of plaintext and one output buffer of sealed frames (the high-water mark's
 * worth) are held besides.
 *
 * Records go in stream order: the MANIFEST (written by {@link createVpbkWriter}), then DIRs, FILEs
 * and the one SQLITE_DB in strictly ascending byte order of their full paths (note that `media/a-b`
 * sorts before `media/a/b`), each parent DIR before its children, then {@link end}. Calls must not
 * overlap.
 *
 * A record refused by the rules (`E_RECORD_*`, `E_USAGE`) is refused before any of its bytes is
 * written: the writer stays usable. Any later failure (content not matching its declared size, a
 * failing content source, the output closed) fails the generation: the output stream is
 * destroyed with the error, and the partial output must be discarded.
 */
export interface VpbkWriter {
  /** The encrypted bytes: header, frames, FINAL frame. Ends after {@link end}. */
  readonly readable: Readable;
  /** The header as written (generation id, created time, KDF parameters). */
  readonly header: VpbkHeader;
  /**
   * The generation's data key, for the read-after-write check (`openVpbk(file, { dataKey })`, no
   * KDF). Secret: keep it in memory only.
   */
  readonly dataKey: Buffer;
  /** A DIR record. */
  dir(path: string, meta?: VpbkRecordMeta): Promise<void>;
  /** A FILE record; `meta.size` is required unless `content` is a byte array. */
  file(path: string, content: VpbkContent, meta?: VpbkRecordMeta & { size?: number | undefined }): Promise<void>;
  /** The SQLITE_DB record (`db/vellum.sqlite`, after a `db` DIR): the serialized image. */
  sqliteDb(content: VpbkContent, meta?: VpbkRecordMeta & { size?: number | undefined }): Promise<void>;
  /** Writes END and the FINAL frame and ends {@link readable}. */
  end(options?: VpbkEndOptions): Promise<VpbkWriteSummary>;
  /** Fails the generation: the output stream is destroyed with `reason`. */
  abort(reason?: Error): void;
}

/**
 * Starts a generation: derives the KEK (Argon2id, about 0.1–0.8 s with the default parameters)
 * unless one was prepared, draws a fresh DK, writes the header and the MANIFEST record.
 */
export async function createVpbkWriter(options: VpbkWriterOptions): Promise<VpbkWriter> {
  const { header, keys } = await createHeader({
    passphrase: options.passphrase,
    createdMs: options.createdMs,
    kdf: options.kdf ?? DEFAULT_KDF,
    deriveKek: options.deriveKek,
    kek: options.kek,
  });
  const writer = new Writer(header, keys, options.highWaterMark ?? 4 * (FRAME_OVERHEAD_BYTES + FRAME_PLAINTEXT_BYTES));
  await writer.start({ ...options.manifest, format: "vellum-backup", formatVersion: 1 });
  return writer;
}

class Writer implements VpbkWriter {
  readonly readable: Readable;
  readonly header: VpbkHeader;
  readonly #keys: VpbkKeys;
  readonly #sealer: FrameSealer;
  readonly #rules = new RecordRules();
  readonly #root = new ContentRoot();
  #archiveBytes = 0;
  #resume: (() => void) | undefined;
  #busy = false;
  #failure: Error | undefined;
  #ended = false;

  constructor(header: VpbkHeader, keys: VpbkKeys, highWaterMark: number) {
    this.header = header;
    this.#keys = keys;
    this.#sealer = new FrameSealer(keys, {
      framesPerBuffer: Math.floor(highWaterMark / (FRAME_OVERHEAD_BYTES + FRAME_PLAINTEXT_BYTES)),
    });
    this.readable = new Readable({
      highWaterMark,
      read: () => this.#wake(),
      destroy: (error, callback) => {
        if (!this.#ended) {
          this.#failure ??= error ?? new VpbkError("E_IO", "the output stream was closed before the generation ended");
        }
        this.#wake();
        callback(error);
      },
    });
  }

  get dataKey(): Buffer {
    return this.#keys.dataKey;
  }

  async start(manifest: Record<string, unknown>): Promise<void> {
    await this.#emit([this.header.bytes]);
    await this.#record(RECORD_MANIFEST, Buffer.alloc(0), {}, jsonBytes(manifest), undefined);
  }

  async dir(path: string, meta: VpbkRecordMeta = {}): Promise<void> {
    return this.#record(RECORD_DIR, pathBytes(path), meta, new Uint8Array(0), 0);
  }

  async file(
    path: string,
    content: VpbkContent,
    meta: VpbkRecordMeta & { size?: number | undefined } = {},
  ): Promise<void> {
    return this.#record(RECORD_FILE, pathBytes(path), meta, content, meta.size);
  }

  async sqliteDb(content: VpbkContent, meta: VpbkRecordMeta & { size?: number | undefined } = {}): Promise<void> {
    return this.#record(RECORD_SQLITE_DB, pathBytes(SQLITE_DB_PATH), meta, content, meta.size);
  }

  async end(options: VpbkEndOptions = {}): Promise<VpbkWriteSummary> {
    const createdMs = this.header.createdMs;
    const sealedMs = options.sealedMs ?? Date.now();
    if (!Number.isSafeInteger(sealedMs) || sealedMs < createdMs || sealedMs > createdMs + MAX_SEAL_DELAY_MS) {
      throw new VpbkError(
        "E_USAGE",
        `sealedMs ${sealedMs} is not within 24 h after createdMs ${createdMs} (did the clock step back?)`,
      );
    }
    const end = { ...options.end, entries: this.#rules.entries, fileBytes: this.#rules.fileBytes };
    await this.#record(RECORD_END, Buffer.alloc(0), {}, jsonBytes(end), undefined);
    const contentRoot = this.#root.digest();
    this.#enter();
    try {
      await this.#emit(this.#sealer.finish({ sealedMs, contentRoot }));
      this.#ended = true;
      this.readable.push(null);
    } catch (error) {
      throw this.#fail(error);
    } finally {
      this.#busy = false;
    }
    return {
      generationId: this.header.generationId,
      createdMs,
      sealedMs,
      dataFrames: this.#sealer.dataFrames,
      dataBytes: this.#sealer.dataBytes,
      archiveBytes: this.#archiveBytes,
      entries: end.entries,
      fileBytes: end.fileBytes,
      contentRoot: contentRoot.toString("hex"),
    };
  }

  abort(reason: Error = new VpbkError("E_USAGE", "the generation was aborted")): void {
    this.#fail(reason);
  }

  async #record(
    type: number,
    path: Buffer,
    meta: VpbkRecordMeta,
    content: VpbkContent,
    declaredSize: number | undefined,
  ): Promise<void> {
    this.#enter();
    try {
      const size = content instanceof Uint8Array ? content.length : declaredSize;
      if (size === undefined) throw new VpbkError("E_USAGE", "a streamed record needs its size");
      if (content instanceof Uint8Array && declaredSize !== undefined && declaredSize !== size) {
        throw new VpbkError("E_USAGE", `size ${declaredSize} differs from the content's ${size} bytes`);
      }
      const mode = meta.mode ?? (type === RECORD_DIR ? 0o700 : 0o600);
      const mtimeMs = meta.mtimeMs ?? 0;
      if (!Number.isInteger(mode) || mode < 0 || mode > 0xffff_ffff) throw new VpbkError("E_USAGE", `bad mode ${mode}`);
      if (!Number.isSafeInteger(mtimeMs)) throw new VpbkError("E_USAGE", `bad mtimeMs ${mtimeMs}`);
      const header: RecordHeader = { type, flags: 0, pathLength: path.length, mode, mtimeMs, size };
      this.#rules.checkHeader(header);
      this.#rules.admit(header, path);
      // From here on, bytes of the record are out: any failure fails the generation.
      try {
        await this.#write(type, header, path, content, size);
      } catch (error) {
        throw this.#fail(error);
      }
    } finally {
      this.#busy = false;
    }
  }

  async #write(type: number, header: RecordHeader, path: Buffer, content: VpbkContent, size: number): Promise<void> {
    await this.#plaintext(encodeRecordHeader(header));
    await this.#plaintext(path);
    const hash = createHash("sha256");
    let written = 0;
    const chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array> =
      content instanceof Uint8Array ? [content] : content;
    for await (const chunk of chunks) {
      if (!(chunk instanceof Uint8Array)) throw new VpbkError("E_USAGE", "record content yielded something not bytes");
      written += chunk.length;
      if (written > size) {
        throw new VpbkError("E_RECORD_SIZE", `the content is longer than the declared ${size} bytes`, {
          path: path.toString("utf8"),
        });
      }
      await this.#plaintext(chunk, hash);
    }
    if (written !== size) {
      throw new VpbkError("E_RECORD_SIZE", `the content has ${written} bytes, not the declared ${size}`, {
        path: path.toString("utf8"),
      });
    }
    const digest = hash.digest();
    await this.#plaintext(digest);
    this.#root.add(type, path, size, digest);
  }

  #enter(): void {
    if (this.#failure !== undefined) {
      throw new VpbkError("E_USAGE", "the generation failed and cannot be continued", { cause: this.#failure });
    }
    if (this.#ended) throw new VpbkError("E_USAGE", "the generation is already ended");
    if (this.#busy) throw new VpbkError("E_USAGE", "writer calls must not overlap: await each one");
    this.#busy = true;
  }

  /**
   * Hashes (with `hash`) and seals `data` a frame's worth at a time, pushing each buffer of frames
   * as it completes: the reader writes one buffer while the next is sealed.
   */
  async #plaintext(data: Uint8Array, hash?: Hash): Promise<void> {
    for (let at = 0; at < data.length; at += FRAME_PLAINTEXT_BYTES) {
      const piece = data.subarray(at, at + FRAME_PLAINTEXT_BYTES);
      hash?.update(piece);
      const buffers = this.#sealer.write(piece);
      if (buffers.length > 0) await this.#emit(buffers);
    }
  }

  async #emit(buffers: Buffer[]): Promise<void> {
    for (const buffer of buffers) {
      this.#check();
      this.#archiveBytes += buffer.length;
      if (!this.readable.push(buffer)) {
        await new Promise<void>((resolve) => {
          this.#resume = resolve;
        });
      }
    }
    this.#check();
  }

  #check(): void {
    if (this.#failure !== undefined) throw this.#failure;
  }

  #wake(): void {
    const resume = this.#resume;
    this.#resume = undefined;
    resume?.();
  }

  #fail(error: unknown): Error {
    const failure = error instanceof Error ? error : new VpbkError("E_IO", String(error));
    this.#failure ??= failure;
    if (!this.readable.destroyed) this.readable.destroy(failure);
    this.#wake();
    return failure;
  }
}

function jsonBytes(value: Record<string, unknown>): Buffer {
  return Buffer.from(JSON.stringify(value), "utf8");
}
