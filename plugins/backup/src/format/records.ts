import { createHash, type Hash } from "node:crypto";
import { VpbkError, type VpbkErrorCode } from "./errors.js";
import { MAX_PATH_BYTES, PathOrder, pathViolation, printablePath, SQLITE_DB_PATH } from "./paths.js";

/**
 * The plaintext record stream (backup-format.md §2.5):
 *
 * ```
 * record = u8 type ‖ u8 flags(=0) ‖ u16 path_len ‖ u32 mode ‖ i64 mtime_ms ‖ u64 size
 *          ‖ path[path_len] ‖ content[size] ‖ sha256(content)[32]
 * ```
 *
 * MANIFEST first, then DIR, FILE and exactly one SQLITE_DB in strictly ascending path order, then
 * END last. There is no type for links, FIFOs, sockets or devices.
 */

export const RECORD_MANIFEST = 0x01;
export const RECORD_DIR = 0x02;
export const RECORD_FILE = 0x03;
export const RECORD_SQLITE_DB = 0x04;
export const RECORD_END = 0x7f;

/** Bytes of a record's fixed header. */
export const RECORD_HEADER_BYTES = 24;
/** Bytes of a record's trailing digest. */
export const RECORD_DIGEST_BYTES = 32;
/** Most bytes of the MANIFEST JSON. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;
/** Most bytes of the END JSON. */
export const MAX_END_BYTES = 64 * 1024;
/** Most bytes of one FILE or SQLITE_DB record (64 GiB). */
export const MAX_FILE_BYTES = 64 * 1024 ** 3;

const TYPE_NAMES: Record<number, string> = {
  [RECORD_MANIFEST]: "MANIFEST",
  [RECORD_DIR]: "DIR",
  [RECORD_FILE]: "FILE",
  [RECORD_SQLITE_DB]: "SQLITE_DB",
  [RECORD_END]: "END",
};

/** A record's fixed header fields. */
export interface RecordHeader {
  type: number;
  flags: number;
  pathLength: number;
  /** Informational: restore creates directories 0700 and files 0600 whatever it says. */
  mode: number;
  mtimeMs: number;
  size: number;
}

/** Encodes a record's fixed header as given, without any check (the writer checks first). */
export function encodeRecordHeader(header: RecordHeader): Buffer {
  const b = Buffer.alloc(RECORD_HEADER_BYTES);
  b.writeUInt8(header.type, 0);
  b.writeUInt8(header.flags, 1);
  b.writeUInt16BE(header.pathLength, 2);
  b.writeUInt32BE(header.mode >>> 0, 4);
  b.writeBigInt64BE(BigInt(header.mtimeMs), 8);
  b.writeBigUInt64BE(BigInt(header.size), 16);
  return b;
}

/**
 * `content_root = SHA-256(for each record in order: type ‖ path_len ‖ path ‖ size ‖ sha256)`, with
 * the same widths as the record header (u8, u16, u64), over every record, MANIFEST and END
 * included.
 */
export class ContentRoot {
  readonly #hash: Hash = createHash("sha256");

  add(type: number, path: Uint8Array, size: number, digest: Uint8Array): void {
    const head = Buffer.alloc(3);
    head.writeUInt8(type, 0);
    head.writeUInt16BE(path.length, 1);
    const tail = Buffer.alloc(8);
    tail.writeBigUInt64BE(BigInt(size));
    this.#hash.update(head).update(path).update(tail).update(digest);
  }

  digest(): Buffer {
    return this.#hash.digest();
  }
}

/**
 * The record-level rules, shared by the writer (which refuses a record before writing any byte of
 * it) and the reader: the types and their sequence, flags, sizes, path rules and order. A record
 * is taken only when all its checks pass, so a refused record leaves the state as it was.
 */
export class RecordRules {
  readonly #order = new PathOrder();
  #index = 0;
  #dbSeen = false;
  #ended = false;
  /** DIR, FILE and SQLITE_DB records taken. */
  entries = 0;
  /** Content bytes of the FILE and SQLITE_DB records taken. */
  fileBytes = 0;

  /** The next record's position (0 = MANIFEST). */
  get index(): number {
    return this.#index;
  }

  /** Whether END was taken. */
  get ended(): boolean {
    return this.#ended;
  }

  /**
   * Checks a record's fixed header before its path and content are read: the type and where it may
   * stand, the flags, the size caps and the path length.
   */
  checkHeader(header: RecordHeader): void {
    const record = this.#index;
    const fail = (code: VpbkErrorCode, message: string) => new VpbkError(code, message, { record });
    const { type, size, pathLength } = header;
    const name = TYPE_NAMES[type];
    if (this.#ended) throw fail("E_RECORD_STRUCTURE", "a record follows the END record");
    if (name === undefined) {
      throw fail("E_RECORD_TYPE", `record type 0x${type.toString(16).padStart(2, "0")} does not exist`);
    }
    if (header.flags !== 0) throw fail("E_RECORD_HEADER", `${name} record has flags ${header.flags}, not 0`);
    if (record === 0 && type !== RECORD_MANIFEST) throw fail("E_RECORD_STRUCTURE", "the first record is not MANIFEST");
    if (record > 0 && type === RECORD_MANIFEST) throw fail("E_RECORD_STRUCTURE", "a second MANIFEST record");
    if (type === RECORD_SQLITE_DB && this.#dbSeen) throw fail("E_RECORD_STRUCTURE", "a second SQLITE_DB record");
    if (type === RECORD_END && !this.#dbSeen) throw fail("E_RECORD_STRUCTURE", "END comes before any SQLITE_DB");
    const cap =
      type === RECORD_MANIFEST
        ? MAX_MANIFEST_BYTES
        : type === RECORD_END
          ? MAX_END_BYTES
          : type === RECORD_DIR
            ? 0
            : MAX_FILE_BYTES;
    if (!Number.isSafeInteger(size) || size < 0 || size > cap) {
      throw fail("E_RECORD_SIZE", `${name} record declares ${size} bytes (at most ${cap})`);
    }
    if (type === RECORD_MANIFEST || type === RECORD_END) {
      if (pathLength !== 0) throw fail("E_RECORD_PATH", `${name} record has a path`);
    } else if (pathLength < 1 || pathLength > MAX_PATH_BYTES) {
      throw fail("E_RECORD_PATH", `${name} record has a path of ${pathLength} bytes (1 to ${MAX_PATH_BYTES})`);
    }
  }

  /**
   * Checks the record's path (the rules, the SQLITE_DB path, the order, its parents) and takes the
   * record. `path` must not change afterwards: it is kept while its directory may get children.
   */
  admit(header: RecordHeader, path: Buffer): void {
    const record = this.#index;
    const { type } = header;
    if (type !== RECORD_MANIFEST && type !== RECORD_END) {
      const violation = pathViolation(path);
      if (violation !== undefined) {
        throw new VpbkError("E_RECORD_PATH", violation, { record, path: printablePath(path) });
      }
      if (type === RECORD_SQLITE_DB && path.toString("utf8") !== SQLITE_DB_PATH) {
        throw new VpbkError("E_RECORD_PATH", `the SQLITE_DB record's path is ${SQLITE_DB_PATH}`, {
          record,
          path: printablePath(path),
        });
      }
      this.#order.admit(path, type === RECORD_DIR, record);
      this.entries += 1;
      if (type !== RECORD_DIR) this.fileBytes += header.size;
    }
    if (type === RECORD_SQLITE_DB) this.#dbSeen = true;
    if (type === RECORD_END) this.#ended = true;
    this.#index += 1;
  }
}

/** The MANIFEST's JSON (§2.5); `format` and `formatVersion` are checked, the rest is the writer's. */
export interface VpbkManifest {
  format: "vellum-backup";
  formatVersion: 1;
  [key: string]: unknown;
}

/** The END record's JSON: the totals (checked against the stream) and whatever the writer adds. */
export interface VpbkEnd {
  /** DIR, FILE and SQLITE_DB records. */
  entries: number;
  /** Content bytes of the FILE and SQLITE_DB records. */
  fileBytes: number;
  [key: string]: unknown;
}

/** A record's metadata as decoded. */
export interface RecordInfo {
  type: number;
  /** The record's position in the stream (0 = MANIFEST). */
  index: number;
  /** The path ("" for MANIFEST and END). */
  path: string;
  mode: number;
  mtimeMs: number;
  size: number;
}

/** What the decoder reports, in stream order. */
export type RecordEvent =
  /** MANIFEST, with its JSON, after its digest verified. */
  | { kind: "manifest"; record: RecordInfo; manifest: VpbkManifest }
  /** A DIR, after its digest verified. */
  | { kind: "dir"; record: RecordInfo }
  /** A FILE or SQLITE_DB record's header: its content follows as `data`, then `verified`. */
  | { kind: "begin"; record: RecordInfo }
  /** The next piece of the current FILE or SQLITE_DB record's content (from authenticated frames). */
  | { kind: "data"; data: Buffer }
  /**
   * The current FILE or SQLITE_DB record's content matched its SHA-256 (with the decoder's
   * `trustContentDigests`: its content ended, and `sha256` is the digest as carried, not recomputed).
   */
  | { kind: "verified"; record: RecordInfo; sha256: Buffer }
  /** END, with its JSON, after its digest verified and its totals matched the stream. */
  | { kind: "end"; record: RecordInfo; end: VpbkEnd };

/** What the whole record stream amounted to. */
export interface RecordSummary {
  contentRoot: Buffer;
  entries: number;
  fileBytes: number;
  end: VpbkEnd;
}
