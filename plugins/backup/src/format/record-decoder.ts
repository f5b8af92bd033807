import { createHash, type Hash } from "node:crypto";
import { VpbkError } from "./errors.js";
import { MAX_PATH_BYTES } from "./paths.js";
import {
  ContentRoot,
  RECORD_DIGEST_BYTES,
  RECORD_DIR,
  RECORD_END,
  RECORD_FILE,
  RECORD_HEADER_BYTES,
  RECORD_MANIFEST,
  RECORD_SQLITE_DB,
  type RecordEvent,
  type RecordHeader,
  type RecordInfo,
  RecordRules,
  type RecordSummary,
  type VpbkEnd,
  type VpbkManifest,
} from "./records.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

type State = "header" | "path" | "content" | "digest" | "done";

/**
 * A streaming, push-style decoder of the record stream: feed it authenticated plaintext with
 * {@link write} and it returns the events the bytes completed; call {@link finish} when the FINAL
 * frame arrived. It buffers only a record header, a path, a digest, and the MANIFEST or END JSON
 * (capped at 1 MiB and 64 KiB); file content passes through as slices of the given chunks, never
 * sized by what a record declares.
 *
 * Every record's content is hashed and compared with the SHA-256 that follows it, unless
 * `trustContentDigests` is set: then FILE and SQLITE_DB content is not hashed, and the digests as
 * carried in the stream go into the content root (still compared with the FINAL frame's by the
 * reader). That is for the writer's read-after-write check only (§2.6 step 6), which authenticates
 * every frame with the data key it sealed them with; a restore or `-verify` hashes everything
 * (§2.7 check 7).
 */
export class RecordDecoder {
  readonly #rules = new RecordRules();
  readonly #root = new ContentRoot();
  readonly #headerBytes = Buffer.alloc(RECORD_HEADER_BYTES);
  readonly #pathBytes = Buffer.alloc(MAX_PATH_BYTES);
  readonly #digestBytes = Buffer.alloc(RECORD_DIGEST_BYTES);
  readonly #maxDataBytes: number;
  readonly #trustContentDigests: boolean;
  #state: State = "header";
  #filled = 0;
  #consumed = 0;
  #header: RecordHeader | undefined;
  #path: Buffer = Buffer.alloc(0);
  #info: RecordInfo | undefined;
  #remaining = 0;
  #hash: Hash | undefined;
  #json: Buffer[] = [];
  #end: VpbkEnd | undefined;

  /**
   * @param maxDataBytes an upper bound of the plaintext bytes in the archive, when its size is
   *   known: a record declaring more than can still follow is refused (`E_RECORD_SIZE`) at once.
   * @param options.trustContentDigests skip hashing FILE and SQLITE_DB content (see the class).
   */
  constructor(maxDataBytes = Number.POSITIVE_INFINITY, options: { trustContentDigests?: boolean | undefined } = {}) {
    this.#maxDataBytes = maxDataBytes;
    this.#trustContentDigests = options.trustContentDigests === true;
  }

  /** Decodes the next plaintext bytes. */
  write(chunk: Buffer): RecordEvent[] {
    const events: RecordEvent[] = [];
    let at = 0;
    while (at < chunk.length) {
      switch (this.#state) {
        case "done":
          throw new VpbkError("E_RECORD_STRUCTURE", "bytes follow the END record", { record: this.#rules.index });
        case "header": {
          at = this.#fill(this.#headerBytes, RECORD_HEADER_BYTES, chunk, at);
          if (this.#filled === RECORD_HEADER_BYTES) this.#onHeader();
          break;
        }
        case "path": {
          const length = (this.#header as RecordHeader).pathLength;
          at = this.#fill(this.#pathBytes, length, chunk, at);
          if (this.#filled === length) this.#onPath(events);
          break;
        }
        case "content": {
          const n = Math.min(this.#remaining, chunk.length - at);
          const data = chunk.subarray(at, at + n);
          this.#hash?.update(data);
          const type = (this.#header as RecordHeader).type;
          if (type === RECORD_MANIFEST || type === RECORD_END) this.#json.push(Buffer.from(data));
          else events.push({ kind: "data", data });
          at += n;
          this.#consumed += n;
          this.#remaining -= n;
          if (this.#remaining === 0) this.#toDigest();
          break;
        }
        case "digest": {
          at = this.#fill(this.#digestBytes, RECORD_DIGEST_BYTES, chunk, at);
          if (this.#filled === RECORD_DIGEST_BYTES) this.#onDigest(events);
          break;
        }
      }
    }
    return events;
  }

  /** Ends the stream (the FINAL frame arrived): it must end exactly after END. */
  finish(): RecordSummary {
    if (this.#state !== "done") {
      const record = this.#rules.index;
      if (this.#state === "header" && this.#filled === 0) {
        throw new VpbkError("E_RECORD_STRUCTURE", "the record stream ends without an END record", { record });
      }
      throw new VpbkError("E_RECORD_SIZE", `the data ends inside record ${record}`, { record });
    }
    return {
      contentRoot: this.#root.digest(),
      entries: this.#rules.entries,
      fileBytes: this.#rules.fileBytes,
      end: this.#end as VpbkEnd,
    };
  }

  /** Copies bytes into `target` until it holds `length`; returns the new position in `chunk`. */
  #fill(target: Buffer, length: number, chunk: Buffer, at: number): number {
    const n = Math.min(length - this.#filled, chunk.length - at);
    chunk.copy(target, this.#filled, at, at + n);
    this.#filled += n;
    this.#consumed += n;
    return at + n;
  }

  #onHeader(): void {
    const b = this.#headerBytes;
    const mtime = b.readBigInt64BE(8);
    const size = b.readBigUInt64BE(16);
    const header: RecordHeader = {
      type: b.readUInt8(0),
      flags: b.readUInt8(1),
      pathLength: b.readUInt16BE(2),
      mode: b.readUInt32BE(4),
      mtimeMs: Number(mtime),
      size: size > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER + 1 : Number(size),
    };
    this.#rules.checkHeader(header);
    const record = this.#rules.index;
    if (mtime > BigInt(Number.MAX_SAFE_INTEGER) || mtime < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new VpbkError("E_RECORD_HEADER", `mtime_ms ${mtime} is out of range`, { record });
    }
    const needed = header.pathLength + header.size + RECORD_DIGEST_BYTES;
    if (this.#consumed + needed > this.#maxDataBytes) {
      throw new VpbkError(
        "E_RECORD_SIZE",
        `record declares ${header.size} bytes, more than the rest of the archive can hold`,
        { record },
      );
    }
    this.#header = header;
    this.#filled = 0;
    this.#state = "path";
    if (header.pathLength === 0) this.#onPath([]);
  }

  #onPath(events: RecordEvent[]): void {
    const header = this.#header as RecordHeader;
    // A copy: the rules keep a DIR's path while it may get children.
    this.#path = Buffer.from(this.#pathBytes.subarray(0, header.pathLength));
    const index = this.#rules.index;
    this.#rules.admit(header, this.#path);
    this.#info = {
      type: header.type,
      index,
      path: this.#path.toString("utf8"),
      mode: header.mode,
      mtimeMs: header.mtimeMs,
      size: header.size,
    };
    const content = header.type === RECORD_FILE || header.type === RECORD_SQLITE_DB;
    this.#hash = content && this.#trustContentDigests ? undefined : createHash("sha256");
    this.#json = [];
    this.#remaining = header.size;
    if (content) events.push({ kind: "begin", record: this.#info });
    if (this.#remaining === 0) this.#toDigest();
    else this.#state = "content";
  }

  #toDigest(): void {
    this.#filled = 0;
    this.#state = "digest";
  }

  #onDigest(events: RecordEvent[]): void {
    const header = this.#header as RecordHeader;
    const info = this.#info as RecordInfo;
    // Unhashed (trusted) content: the digest as carried, copied (the buffer is reused).
    const digest = this.#hash === undefined ? Buffer.from(this.#digestBytes) : this.#hash.digest();
    if (!digest.equals(this.#digestBytes)) {
      throw new VpbkError("E_RECORD_HASH", "the record's content does not match its SHA-256", {
        record: info.index,
        ...(info.path === "" ? {} : { path: info.path }),
      });
    }
    this.#root.add(header.type, this.#path, header.size, digest);
    this.#filled = 0;
    this.#state = "header";
    switch (header.type) {
      case RECORD_MANIFEST:
        events.push({ kind: "manifest", record: info, manifest: parseManifest(Buffer.concat(this.#json), info.index) });
        break;
      case RECORD_DIR:
        events.push({ kind: "dir", record: info });
        break;
      case RECORD_END: {
        const end = parseEnd(Buffer.concat(this.#json), info.index);
        if (end.entries !== this.#rules.entries || end.fileBytes !== this.#rules.fileBytes) {
          throw new VpbkError(
            "E_TRAILER",
            `END says ${end.entries} entries and ${end.fileBytes} bytes; the stream has ` +
              `${this.#rules.entries} and ${this.#rules.fileBytes}`,
            { record: info.index },
          );
        }
        this.#end = end;
        this.#state = "done";
        events.push({ kind: "end", record: info, end });
        break;
      }
      default:
        events.push({ kind: "verified", record: info, sha256: digest });
    }
    this.#json = [];
  }
}

function parseJsonObject(bytes: Buffer, what: string, record: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch (cause) {
    throw new VpbkError("E_RECORD_JSON", `the ${what} record is not UTF-8 JSON`, { record, cause });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new VpbkError("E_RECORD_JSON", `the ${what} record is not a JSON object`, { record });
  }
  return value as Record<string, unknown>;
}

function parseManifest(bytes: Buffer, record: number): VpbkManifest {
  const manifest = parseJsonObject(bytes, "MANIFEST", record);
  if (manifest.format !== "vellum-backup" || manifest.formatVersion !== 1) {
    throw new VpbkError("E_RECORD_JSON", 'the MANIFEST is not {format: "vellum-backup", formatVersion: 1}', {
      record,
    });
  }
  return manifest as VpbkManifest;
}

function parseEnd(bytes: Buffer, record: number): VpbkEnd {
  const end = parseJsonObject(bytes, "END", record);
  for (const key of ["entries", "fileBytes"]) {
    const value = end[key];
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      throw new VpbkError("E_RECORD_JSON", `the END record's ${key} is not a non-negative integer`, { record });
    }
  }
  return end as VpbkEnd;
}
