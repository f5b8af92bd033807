import { VPBK_EXIT, VpbkError, type VpbkExitCode } from "../format/errors.js";

/**
 * Why a restore (backup-format.md §3.2) refused or failed, beyond the archive's own checks (those
 * stay {@link VpbkError}s with the §2.7 codes):
 *
 * - `E_PRECONDITION` (exit 5): the parent of `dest` is missing, `dest` is a symlink or not a
 *   directory, or the staging directory is not on the parent's filesystem.
 * - `E_LOCKED` (exit 5): a live Vellum holds `<dest>/.vellum.lock` (or the lock cannot be read).
 * - `E_NO_SPACE` (exit 4): the space pre-flight failed, or a write hit ENOSPC or EDQUOT.
 * - `E_IO` (exit 4): any other file-system failure while staging or swapping.
 * - `E_DB_INTEGRITY` (exit 1): the restored database does not open or `PRAGMA integrity_check`
 *   is not `ok`.
 * - `E_DB_VERSION` (exit 5): the caller's database check refused the restored database (a backup
 *   from a newer app).
 * - `E_SWAP_INCOMPLETE` (exit 4): the old data dir was moved aside but the staging directory could
 *   not be moved into place; the journal is kept, so crash recovery rolls forward.
 * - `E_RECOVERY` (exit 4): a journal names a swap that can no longer be completed.
 */
export const RESTORE_CODES = {
  E_PRECONDITION: VPBK_EXIT.precondition,
  E_LOCKED: VPBK_EXIT.precondition,
  E_NO_SPACE: VPBK_EXIT.io,
  E_IO: VPBK_EXIT.io,
  E_DB_INTEGRITY: VPBK_EXIT.integrity,
  E_DB_VERSION: VPBK_EXIT.precondition,
  E_SWAP_INCOMPLETE: VPBK_EXIT.io,
  E_RECOVERY: VPBK_EXIT.io,
} as const satisfies Record<string, VpbkExitCode>;

export type RestoreErrorCode = keyof typeof RESTORE_CODES;

/** A refusal or failure of the restore procedure that is not the archive's fault. */
export class RestoreError extends Error {
  override readonly name = "RestoreError";
  readonly code: RestoreErrorCode;
  /** The path the error is about, when there is one. */
  readonly path: string | undefined;

  constructor(code: RestoreErrorCode, message: string, details: { path?: string; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.path = details.path;
  }

  /** 1 integrity, 4 I/O or space, 5 precondition (§2.7's exit codes). */
  get exitCode(): VpbkExitCode {
    return RESTORE_CODES[this.code];
  }

  /** The message as the CLI prints it. */
  describe(): string {
    return `${this.code}: ${this.message}`;
  }

  static is(value: unknown, code?: RestoreErrorCode): value is RestoreError {
    return value instanceof RestoreError && (code === undefined || value.code === code);
  }
}

/** What a restore can throw: the archive's errors and the procedure's own. */
export type RestoreFailure = VpbkError | RestoreError;

const NO_SPACE = new Set(["ENOSPC", "EDQUOT"]);

/** The `code` of a Node system error, if it is one. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const { code } = error as { code: unknown };
    if (typeof code === "string") return code;
  }
  return undefined;
}

/**
 * `error` as a {@link RestoreFailure}: format and restore errors pass unchanged, a file-system
 * error becomes `E_NO_SPACE` or `E_IO` (exit 4) with `doing` in its message.
 */
export function asRestoreFailure(error: unknown, doing: string): RestoreFailure {
  if (error instanceof VpbkError || error instanceof RestoreError) return error;
  const code = errnoCode(error);
  const reason = error instanceof Error ? error.message : String(error);
  return new RestoreError(code !== undefined && NO_SPACE.has(code) ? "E_NO_SPACE" : "E_IO", `${doing}: ${reason}`, {
    cause: error,
  });
}

/** The exit code for any error a restore threw (4 for one that is neither kind). */
export function restoreExitCode(error: unknown): VpbkExitCode {
  if (error instanceof VpbkError || error instanceof RestoreError) return error.exitCode;
  return VPBK_EXIT.io;
}
