import { readVpbkTrailer, VpbkError, type VpbkUnlock } from "../format/index.js";
import { BackupError } from "../snapshot/errors.js";
import { type GenerationInfo, listGenerations } from "./generations.js";

/**
 * Point-in-time selection (backup-format.md §4, `restore --at <RFC 3339 time> -dest <dir>`): the
 * newest generation whose every state lies at or before T, fully verified, falling back only to
 * earlier generations.
 */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))?$/;

/**
 * Parses an RFC 3339 date-time into Unix ms. The offset is required: `Z` or `±HH:MM` (`E_USAGE`
 * "ambiguous: give an offset or Z" without one; `E_USAGE` for anything else malformed or out of
 * range, seconds 60 included). A fraction finer than a millisecond is truncated, which is exact
 * for "at or before": created_ms and sealed_ms are whole milliseconds. Whether T lies in the
 * future is for the caller to judge ({@link selectAt} warns).
 */
export function parseAtTime(text: string): number {
  const match = RFC3339.exec(text.trim());
  if (match === null) {
    throw new BackupError("E_USAGE", `--at ${JSON.stringify(text)} is not an RFC 3339 time (2026-01-15T10:30:00Z)`);
  }
  const [, year, month, day, hour, minute, second, fraction, zulu, sign, offsetHour, offsetMinute] = match;
  if (zulu === undefined && sign === undefined) {
    throw new BackupError("E_USAGE", `--at ${JSON.stringify(text)} is ambiguous: give an offset or Z`);
  }
  const fields = [year, month, day, hour, minute, second].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const [y, mo, d, h, mi, s] = fields;
  const offsetH = Number(offsetHour ?? 0);
  const offsetM = Number(offsetMinute ?? 0);
  const date = new Date(Date.UTC(2000, mo - 1, d, h, mi, s));
  date.setUTCFullYear(y);
  const valid =
    mo >= 1 &&
    mo <= 12 &&
    date.getUTCMonth() === mo - 1 &&
    date.getUTCDate() === d &&
    h <= 23 &&
    mi <= 59 &&
    s <= 59 &&
    offsetH <= 23 &&
    offsetM <= 59;
  if (!valid) throw new BackupError("E_USAGE", `--at ${JSON.stringify(text)} is not a valid date and time`);
  const ms = Number((fraction ?? "").padEnd(3, "0").slice(0, 3));
  const offsetMs = (sign === "-" ? -1 : 1) * (offsetH * 60 + offsetM) * 60_000;
  return date.getTime() + ms - offsetMs;
}

/** How {@link selectAt} reads and checks candidates. */
export interface SelectAtOptions {
  /** Opens headers (the passphrase, and the previous one after a rotation). */
  unlock: VpbkUnlock;
  /** Fully verifies the generation at `path` (the caller uses `verifyVpbk`); rejects when it fails. */
  verify: (path: string) => Promise<void>;
  /** Loud warnings: T in the future, excluded or failed generations, fallbacks. */
  warn: (line: string) => void;
  /** The wall clock, Unix ms, to warn about a T in the future; default `Date.now()`. */
  now?: number | undefined;
}

/** A generation passed over, and why. */
export interface Rejection {
  name: string;
  /** `E_NAME_TIME`, `E_SEALED_AFTER`, `E_CHANGED`, or the failed check's own code (`E_UNLOCK`, `E_FRAME_AUTH`, …). */
  code: string;
  reason: string;
}

/** The chosen generation. */
export interface PointInTime {
  generation: GenerationInfo;
  /** Its authenticated sealed_ms: every state in it lies at or before this, and this ≤ T. */
  sealedMs: number;
  /** The candidates passed over, newest first (name/header mismatches first). */
  rejected: Rejection[];
}

/**
 * Chooses the generation in `dir` to restore for T = `atMs` (§4 PITR):
 * 1. candidates are the generations whose cleartext created_ms ≤ T (inclusive), newest first; a
 *    file whose name disagrees with its header is excluded (`E_NAME_TIME`, warned);
 * 2. for each, the header is unlocked and the FINAL frame authenticated from the tail
 *    (`readVpbkTrailer`); it must be the listed generation (`E_CHANGED` otherwise) and sealed_ms
 *    must be ≤ T (`E_SEALED_AFTER` otherwise: its files may postdate T), else the next earlier
 *    candidate is tried;
 * 3. the first that passes is fully verified with `verify`; if that or step 2 fails, a loud
 *    warning names it and the next **earlier** candidate is tried, never a later one.
 *
 * No candidate left: `E_NO_GENERATION` (exit 5), "no generation at or before T (earliest is …)".
 * When there were candidates and every one failed to unlock, the last `E_UNLOCK` {@link VpbkError}
 * is thrown instead (exit 3): a wrong passphrase, not a missing generation.
 */
export async function selectAt(dir: string, atMs: number, options: SelectAtOptions): Promise<PointInTime> {
  const at = new Date(atMs).toISOString();
  if (atMs > (options.now ?? Date.now())) {
    options.warn(`restore --at ${at} is in the future; choosing the newest generation sealed at or before it`);
  }
  const { generations } = await listGenerations(dir);
  const rejected: Rejection[] = [];
  const candidates: GenerationInfo[] = [];
  for (const generation of generations) {
    if (generation.createdMs > atMs) continue;
    if (generation.nameMatches) {
      candidates.push(generation);
      continue;
    }
    const reason = `its name disagrees with its header's created time ${new Date(generation.createdMs).toISOString()}`;
    rejected.push({ name: generation.name, code: "E_NAME_TIME", reason });
    options.warn(`restore --at: excluded ${generation.name}: ${reason} (E_NAME_TIME)`);
  }
  let lastUnlockFailure: VpbkError | undefined;
  let unlockFailures = 0;
  for (const generation of candidates) {
    let sealedMs: number;
    try {
      const { header, trailer } = await readVpbkTrailer(generation.path, options.unlock);
      if (header.generationId !== generation.id || header.createdMs !== generation.createdMs) {
        rejected.push({ name: generation.name, code: "E_CHANGED", reason: "the file changed while it was examined" });
        options.warn(`restore --at: ${generation.name} changed while it was examined; trying an earlier generation`);
        continue;
      }
      sealedMs = trailer.sealedMs;
      if (sealedMs > atMs) {
        const reason = `sealed at ${new Date(sealedMs).toISOString()}, after ${at}: its files may postdate it`;
        rejected.push({ name: generation.name, code: "E_SEALED_AFTER", reason });
        continue;
      }
      await options.verify(generation.path);
    } catch (error) {
      const failure = describeFailure(error);
      rejected.push({ name: generation.name, ...failure });
      if (VpbkError.is(error, "E_UNLOCK")) {
        lastUnlockFailure = error;
        unlockFailures += 1;
      }
      options.warn(
        `restore --at: generation ${generation.name} FAILED its checks (${failure.code}: ${failure.reason}); falling back to an earlier generation`,
      );
      continue;
    }
    return { generation, sealedMs, rejected };
  }
  if (lastUnlockFailure !== undefined && unlockFailures === candidates.length) throw lastUnlockFailure;
  const valid = generations.filter((g) => g.nameMatches);
  const earliest = valid.length === 0 ? "none" : new Date((valid.at(-1) as GenerationInfo).createdMs).toISOString();
  const passedOver = candidates.length === 0 ? "" : `; ${candidates.length} candidate(s) were passed over`;
  throw new BackupError("E_NO_GENERATION", `no generation at or before ${at} (earliest is ${earliest})${passedOver}`);
}

/** The failed check's code (`E_VERIFY` when the error has none) and what it says, with where for a format error. */
function describeFailure(error: unknown): { code: string; reason: string } {
  if (error instanceof VpbkError) return { code: error.code, reason: error.describe().slice(error.code.length + 2) };
  const code = (error as { code?: unknown } | null)?.code;
  return {
    code: typeof code === "string" ? code : "E_VERIFY",
    reason: error instanceof Error ? error.message : String(error),
  };
}
