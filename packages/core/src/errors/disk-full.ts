import type { ConsolaInstance } from "consola";
import { ApiError } from "./api-error.js";

/** SQLite's code for a write that found no room, and the file system's (no space, over quota). */
const DISK_FULL_CODES = new Set(["SQLITE_FULL", "ENOSPC", "EDQUOT"]);
/** Errors wrap their cause; a few levels is all the kernel's own wrapping needs. */
const MAX_CAUSES = 8;
/** A full disk fails every write: one log line per this interval, with the count since the last. */
const LOG_EVERY_MS = 10_000;
/** Seconds a client is asked to wait: an operator has to free space first. */
const RETRY_AFTER_SECONDS = "30";

/** `SQLITE_FULL`, `ENOSPC` or `EDQUOT` when `error`, or an error it wraps (`cause`), failed for want of disk space. */
export function diskFullCode(error: unknown): string | undefined {
  let current = error;
  for (let depth = 0; depth < MAX_CAUSES && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && DISK_FULL_CODES.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** What a request whose write found the disk full answers: contract §3's `service_unavailable` (503). */
export function diskFullError(): ApiError {
  return new ApiError("service_unavailable", "The change cannot be stored: the data disk is full.", {
    headers: { "retry-after": RETRY_AFTER_SECONDS },
  });
}

/**
 * Reports failures for want of disk space in one line, not a stack trace each: the first at once,
 * then at most one line every 10 s with how many more failed meanwhile, so that a full disk,
 * which fails every write and every queue look, floods neither the log nor error subscribers.
 */
export function createDiskFullLog(logger: ConsolaInstance) {
  let loggedAt = Number.NEGATIVE_INFINITY;
  let unlogged = 0;
  return {
    /**
     * For a full disk: true when this failure was logged now (pass it on to error subscribers too),
     * false when it was only counted. Undefined for any other error.
     */
    report(error: unknown, where: string): boolean | undefined {
      const code = diskFullCode(error);
      if (code === undefined) return undefined;
      const now = performance.now();
      if (now - loggedAt < LOG_EVERY_MS) {
        unlogged++;
        return false;
      }
      const more = unlogged > 0 ? `; ${unlogged} more failures since the last report` : "";
      logger.error(`the data disk is full (${code}): ${where} failed${more}`);
      loggedAt = now;
      unlogged = 0;
      return true;
    },
  };
}
