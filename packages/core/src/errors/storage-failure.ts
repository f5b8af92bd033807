import type { ConsolaInstance } from "consola";
import { ApiError } from "./api-error.js";

/**
 * Why the database or the data directory could not serve a request, though nothing is wrong with
 * the request itself: the disk is full, another process holds the lock, the disk fails or is
 * read-only, or the database file is damaged.
 */
export type StorageFailureKind = "disk_full" | "locked" | "disk_error" | "damaged";

export interface StorageFailure {
  kind: StorageFailureKind;
  /** The code found on the error or one it wraps (`SQLITE_FULL`, `ENOSPC`, `SQLITE_BUSY`, …). */
  code: string;
}

interface KindInfo {
  /** What the client reads (contract §3's `service_unavailable`). */
  message: string;
  /** `Retry-After`: an operator has to free space; a lock is usually let go within moments. */
  retryAfterSeconds: string;
  /** What the log says of it. */
  log: string;
  /** What the log line ends with: what the operator does about it, when waiting does not help. */
  advice?: string;
}

const KINDS: Record<StorageFailureKind, KindInfo> = {
  disk_full: {
    message: "The change cannot be stored: the data disk is full.",
    retryAfterSeconds: "30",
    log: "the data disk is full",
  },
  locked: {
    message: "The database is locked by another process; retry shortly.",
    retryAfterSeconds: "1",
    log: "the database is locked by another connection",
  },
  disk_error: {
    message: "The data disk cannot be read or written.",
    retryAfterSeconds: "30",
    log: "the data disk cannot be read or written",
  },
  damaged: {
    message: "The database cannot be used: its file is damaged or its disk failed.",
    retryAfterSeconds: "300",
    log: "the database file is damaged or its disk failed",
    advice:
      '; check the disk, then restore the data dir from a backup (docs/operations.md, "When the database file is damaged or its disk fails")',
  },
};

/** SQLite's extended codes (`SQLITE_BUSY_SNAPSHOT`, …) count as their primary code. */
function kindOf(code: string): StorageFailureKind | undefined {
  if (code === "ENOSPC" || code === "EDQUOT" || code === "SQLITE_FULL") return "disk_full";
  if (/^SQLITE_(BUSY|LOCKED)(_|$)/.test(code)) return "locked";
  if (/^SQLITE_(CORRUPT(_|$)|NOTADB$)/.test(code)) return "damaged";
  if (code === "EIO" || code === "EROFS" || /^SQLITE_(IOERR|READONLY|CANTOPEN)(_|$)/.test(code)) return "disk_error";
  return undefined;
}

/** Errors wrap their cause; a few levels is all the kernel's own wrapping needs. */
const MAX_CAUSES = 8;
/** Such a failure fails every write: one log line per this interval and kind, with the count since the last. */
const LOG_EVERY_MS = 10_000;

/** The storage failure behind `error` (on it, or on an error it wraps as `cause`), or undefined. */
export function storageFailure(error: unknown): StorageFailure | undefined {
  let current = error;
  for (let depth = 0; depth < MAX_CAUSES && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    const kind = typeof code === "string" ? kindOf(code) : undefined;
    if (kind) return { kind, code: code as string };
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** What a request whose write met `failure` answers: 503 `service_unavailable` with `Retry-After`. */
export function storageFailureError(failure: StorageFailure): ApiError {
  const { message, retryAfterSeconds } = KINDS[failure.kind];
  return new ApiError("service_unavailable", message, { headers: { "retry-after": retryAfterSeconds } });
}

/**
 * Reports storage failures in one line, not a stack trace each: the first of a kind at once, then
 * at most one line every 10 s with how many more failed meanwhile, so that a full disk or a held
 * lock, which fails every write and every queue look, floods neither the log nor error subscribers.
 * `onFailure` sees every one, logged or not.
 */
export function createStorageFailureLog(logger: ConsolaInstance, onFailure?: (failure: StorageFailure) => void) {
  const last = new Map<StorageFailureKind, { at: number; unlogged: number }>();
  return {
    /**
     * For a storage failure: true when it was logged now (pass it on to error subscribers too),
     * false when it was only counted. Undefined for any other error.
     */
    report(error: unknown, where: string): boolean | undefined {
      const failure = storageFailure(error);
      if (failure === undefined) return undefined;
      onFailure?.(failure);
      const now = performance.now();
      const seen = last.get(failure.kind);
      if (seen && now - seen.at < LOG_EVERY_MS) {
        seen.unlogged++;
        return false;
      }
      const more = seen?.unlogged ? `; ${seen.unlogged} more failures since the last report` : "";
      const { log, advice = "" } = KINDS[failure.kind];
      logger.error(`${log} (${failure.code}): ${where} failed${more}${advice}`);
      last.set(failure.kind, { at: now, unlogged: 0 });
      return true;
    },
  };
}
