/**
 * The errors of taking a generation (backup-format.md §2.6, §3.1, §4), as distinct from the
 * format's own {@link VpbkError}s: what refused or failed, and the exit code `vellum backup` maps
 * it to (contract §9 as refined by §2.7: 1 integrity, 2 usage or configuration, 4 I/O, 5
 * precondition refused).
 */
const CODES = {
  /** Usage: the passphrase is missing or empty (there is no unencrypted fallback), or a bad option such as `--at`. */
  E_USAGE: 2,
  /** BACKUP_TARGET is missing, not a directory, or equals, lies inside or contains the data dir. */
  E_TARGET: 2,
  /** Another writer holds `BACKUP_TARGET/.vellum-backup.lock`. */
  E_LOCKED: 5,
  /** The wall clock is behind the newest generation's label (an NTP step back): generations pause. */
  E_CLOCK_BEHIND: 5,
  /** The generation's name was taken when it was published (`link()` gave EEXIST): nothing replaced. */
  E_NAME_TAKEN: 5,
  /** The database is above the in-memory snapshot cap, min(2 GiB, 25 % of RAM); never a temp file. */
  E_DB_TOO_LARGE: 5,
  /** The snapshot worker failed (the database could not be opened or read). */
  E_SNAPSHOT: 4,
  /** A data dir file kept changing while it was read (3 tries), or changed while it was copied. */
  E_UNSTABLE_FILE: 4,
  /** Reading or writing failed. */
  E_IO: 4,
  /** The backup target ran out of space (ENOSPC, EDQUOT) while the generation was written; nothing was published. */
  E_NO_SPACE: 4,
  /** A new generation failed its read-after-write check (and was not published). */
  E_VERIFY: 1,
  /** BACKUP_OFF=true: a manual backup is refused (restore and verify still work). */
  E_DISABLED: 5,
  /** Point in time: no generation at or before the requested time passed its checks (§4). */
  E_NO_GENERATION: 5,
} as const;

export type BackupErrorCode = keyof typeof CODES;

/** A refusal or failure of the snapshot or of writing a generation; {@link code} says which. */
export class BackupError extends Error {
  override readonly name = "BackupError";
  readonly code: BackupErrorCode;
  /** The data dir relative path concerned, when there is one. */
  readonly path: string | undefined;

  constructor(code: BackupErrorCode, message: string, details: { path?: string; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.path = details.path;
  }

  get exitCode(): number {
    return CODES[this.code];
  }

  static is(value: unknown, code?: BackupErrorCode): value is BackupError {
    return value instanceof BackupError && (code === undefined || value.code === code);
  }
}
