/**
 * The errors of the `.vpbk` v1 format (backup-format.md §2.7) and the exit code each one maps to.
 * Every refusal of the reader and the writer is a {@link VpbkError} with one of these codes; the
 * CLI prints the message (which names the failed check and where) and exits with
 * {@link VpbkError.exitCode}.
 */

/** Exit codes of `backup`, `restore` and `restore -verify` (contract §9 as refined by §2.7). */
export const VPBK_EXIT = {
  ok: 0,
  /** The archive is damaged, tampered with or malformed. */
  integrity: 1,
  /** Usage or configuration: a bad option, an empty passphrase, KDF parameters out of bounds. */
  usage: 2,
  /** Wrong passphrase or damaged header. */
  unlock: 3,
  /** Reading or writing failed, or no space. */
  io: 4,
  /** A precondition refused the operation (used by the plugin, not by the format). */
  precondition: 5,
} as const;

export type VpbkExitCode = (typeof VPBK_EXIT)[keyof typeof VPBK_EXIT];

/** The error codes and, for each, the exit code it maps to. */
const CODES = {
  // §2.7 check 1 and 2: the cleartext header's structure.
  E_SHORT: VPBK_EXIT.integrity,
  E_MAGIC: VPBK_EXIT.integrity,
  E_VERSION: VPBK_EXIT.integrity,
  E_HEADER: VPBK_EXIT.integrity,
  // Check 3: the KDF parameters, before any KDF work.
  E_KDF_LIMITS: VPBK_EXIT.integrity,
  // Check 4 and 5: the passphrase (or data key) and the header MAC.
  E_UNLOCK: VPBK_EXIT.unlock,
  E_HEADER_MAC: VPBK_EXIT.integrity,
  // Check 6: frames.
  E_TRUNCATED: VPBK_EXIT.integrity,
  E_SEQ: VPBK_EXIT.integrity,
  E_KIND: VPBK_EXIT.integrity,
  E_FRAME_RSVD: VPBK_EXIT.integrity,
  E_LEN: VPBK_EXIT.integrity,
  E_FRAME_AUTH: VPBK_EXIT.integrity,
  // Check 7: the record stream.
  E_RECORD_TYPE: VPBK_EXIT.integrity,
  E_RECORD_HEADER: VPBK_EXIT.integrity,
  E_RECORD_PATH: VPBK_EXIT.integrity,
  E_RECORD_ORDER: VPBK_EXIT.integrity,
  E_RECORD_PARENT: VPBK_EXIT.integrity,
  E_RECORD_SIZE: VPBK_EXIT.integrity,
  E_RECORD_HASH: VPBK_EXIT.integrity,
  E_RECORD_STRUCTURE: VPBK_EXIT.integrity,
  E_RECORD_JSON: VPBK_EXIT.integrity,
  // Check 8: the FINAL frame and what follows it.
  E_NO_FINAL: VPBK_EXIT.integrity,
  E_TRAILING: VPBK_EXIT.integrity,
  E_TRAILER: VPBK_EXIT.integrity,
  // Not the archive's fault.
  E_USAGE: VPBK_EXIT.usage,
  E_IO: VPBK_EXIT.io,
} as const satisfies Record<string, VpbkExitCode>;

/**
 * A format error code.
 *
 * - `E_SHORT` … `E_TRAILER` are the codes of backup-format.md §2.7 and §5; `E_FRAME_RSVD` is a
 *   frame header's reserved byte set (§5 test 6).
 * - The record stream's `E_RECORD_*` family (§2.7 check 7) is split by what failed: `E_RECORD_TYPE`
 *   (unknown type byte), `E_RECORD_HEADER` (flags not 0, mtime out of range), `E_RECORD_PATH`
 *   (path rules and allowlist), `E_RECORD_ORDER` (not strictly ascending, case-folded
 *   duplicate), `E_RECORD_PARENT` (a parent not declared as DIR), `E_RECORD_SIZE` (a size over
 *   its cap, over what the archive can hold, or past the end of the data), `E_RECORD_HASH` (a
 *   content digest), `E_RECORD_STRUCTURE` (MANIFEST first, exactly one SQLITE_DB, END last, the
 *   data ending exactly at END) and `E_RECORD_JSON` (MANIFEST or END not the JSON §2.5 describes).
 * - `E_USAGE` (bad options to the writer or reader) and `E_IO` (the source or the file failed) are
 *   not about the archive.
 */
export type VpbkErrorCode = keyof typeof CODES;

/** Where an error was found, and the error it wraps. */
export interface VpbkErrorDetails {
  /** The frame index (its `seq` position in the file) being read. */
  index?: number;
  /** The archive byte offset of that frame (or of the header field). */
  offset?: number;
  /** The record's position in the record stream (0 = MANIFEST). */
  record?: number;
  /** The record's path, when it has one and it is printable. */
  path?: string;
  cause?: unknown;
}

/** A refusal of the `.vpbk` reader or writer: {@link code} says which check failed. */
export class VpbkError extends Error {
  override readonly name = "VpbkError";
  readonly code: VpbkErrorCode;
  /** The frame index, when the failure is in or about a frame. */
  index: number | undefined;
  /** The archive byte offset of that frame or header field. */
  offset: number | undefined;
  /** The record's position in the record stream, for `E_RECORD_*`. */
  readonly record: number | undefined;
  /** The record's path, for `E_RECORD_*`. */
  readonly path: string | undefined;

  constructor(code: VpbkErrorCode, message: string, details: VpbkErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.index = details.index;
    this.offset = details.offset;
    this.record = details.record;
    this.path = details.path;
  }

  /** The process exit code for this error (§2.7): 1 integrity, 2 usage, 3 unlock, 4 I/O. */
  get exitCode(): VpbkExitCode {
    return vpbkExitCode(this.code);
  }

  /** The message with the frame and offset, as the CLI prints it. */
  describe(): string {
    const where: string[] = [];
    if (this.index !== undefined) where.push(`frame ${this.index}`);
    if (this.offset !== undefined) where.push(`byte offset ${this.offset}`);
    if (this.record !== undefined) where.push(`record ${this.record}`);
    if (this.path !== undefined) where.push(`path ${JSON.stringify(this.path)}`);
    return `${this.code}: ${this.message}${where.length > 0 ? ` (${where.join(", ")})` : ""}`;
  }

  static is(value: unknown, code?: VpbkErrorCode): value is VpbkError {
    return value instanceof VpbkError && (code === undefined || value.code === code);
  }
}

/** The exit code of `code` (§2.7). */
export function vpbkExitCode(code: VpbkErrorCode): VpbkExitCode {
  return CODES[code];
}

/** Fills in the frame index and offset of an error raised below the frame layer. */
export function locate<E>(error: E, index: number, offset: number): E {
  if (error instanceof VpbkError && error.index === undefined) {
    error.index = index;
    error.offset = offset;
  }
  return error;
}
