import { lstat, unlink } from "node:fs/promises";
import { basename, join } from "node:path";
import { BackupError } from "../snapshot/errors.js";
import { type GenerationInfo, readGenerationHeader } from "./generations.js";
import { fsyncDir } from "../restore/durable.js";
import { isCode } from "../file-io.js";

/**
 * Retention (backup-format.md §4): "24 generations or 30 days, whichever keeps more". A
 * generation is deleted only when it is outside the newest `keepCount` **and** older than
 * `keepMs`; everything doubtful is kept.
 */

/** The seed's count: the newest 24 generations are always kept. */
export const DEFAULT_KEEP_COUNT = 24;
/** The seed's age: generations up to 30 days old are always kept. */
export const DEFAULT_KEEP_MS = 30 * 24 * 60 * 60 * 1000;

/** The policy's inputs. */
export interface RetentionOptions {
  /** The wall clock, Unix ms. */
  now: number;
  /** Generations kept by rank; default 24. At least 1. */
  keepCount?: number | undefined;
  /** Generations kept by age (now − created_ms ≤ keepMs); default 30 days. */
  keepMs?: number | undefined;
  /** The name of the newest generation that fully verified: never removed, whatever its rank and age. */
  protect?: string | undefined;
}

/** What to keep and what to delete; `keep` and `remove` partition the input. */
export interface RetentionPlan {
  /** Kept, newest first: by rank, by age, protected, suspicious or future-dated. */
  keep: GenerationInfo[];
  /** To delete, newest first: valid, rank > keepCount and age > keepMs, not protected. */
  remove: GenerationInfo[];
  /** Name and header disagree (§2.7 check 9): kept, left out of the ranking, to be reported. */
  suspicious: GenerationInfo[];
  /** created_ms after `now`: kept, counted toward `keepCount`, to be alerted on. */
  futureDated: GenerationInfo[];
}

/**
 * Plans a retention pass over `generations` (as listed by `listGenerations`; any order). The
 * valid generations (name and header agree) are ranked by created_ms descending, rank 1 the
 * newest, future-dated ones included. A valid generation is removed only if its rank is above
 * `keepCount` and `now − created_ms > keepMs`, and it is not `protect`. Suspicious generations are
 * not ranked (a renamed file cannot push an authentic one out) and are never removed. Pure: reads
 * nothing, deletes nothing.
 */
export function planRetention(generations: readonly GenerationInfo[], options: RetentionOptions): RetentionPlan {
  const keepCount = options.keepCount ?? DEFAULT_KEEP_COUNT;
  const keepMs = options.keepMs ?? DEFAULT_KEEP_MS;
  if (!Number.isSafeInteger(keepCount) || keepCount < 1) {
    throw new BackupError("E_USAGE", `retention keepCount must be an integer ≥ 1, not ${keepCount}`);
  }
  if (!(keepMs >= 0)) throw new BackupError("E_USAGE", `retention keepMs must be ≥ 0, not ${keepMs}`);
  if (!Number.isFinite(options.now)) throw new BackupError("E_USAGE", `retention needs a wall clock time`);

  const sorted = [...generations].sort((a, b) => b.createdMs - a.createdMs || (a.name < b.name ? 1 : -1));
  const plan: RetentionPlan = { keep: [], remove: [], suspicious: [], futureDated: [] };
  let rank = 0;
  for (const generation of sorted) {
    if (!generation.nameMatches) {
      plan.suspicious.push(generation);
      plan.keep.push(generation);
      continue;
    }
    rank += 1;
    if (generation.createdMs > options.now) plan.futureDated.push(generation);
    const expired = rank > keepCount && options.now - generation.createdMs > keepMs;
    if (expired && generation.name !== options.protect) plan.remove.push(generation);
    else plan.keep.push(generation);
  }
  return plan;
}

/**
 * Carries out `plan.remove` in `dir` and fsyncs the directory. Each file is removed only if it is
 * still a regular file (`lstat`, no symlink followed) of the listed size whose header still has
 * the listed generation id and created_ms; otherwise it is left alone. Resolves with the names
 * removed. Run it only after a new generation published and passed read-after-write (§2.6 step 7),
 * under the writer's lock.
 */
export async function applyRetention(dir: string, plan: Pick<RetentionPlan, "remove">): Promise<string[]> {
  const removed: string[] = [];
  for (const generation of plan.remove) {
    if (basename(generation.name) !== generation.name) continue;
    const path = join(dir, generation.name);
    if (!(await unchanged(path, generation))) continue;
    try {
      await unlink(path);
      removed.push(generation.name);
    } catch (error) {
      if (!isCode(error, "ENOENT")) throw error;
    }
  }
  if (removed.length > 0) await fsyncDir(dir);
  return removed;
}

/** Whether `path` is still the regular file `generation` describes. */
async function unchanged(path: string, generation: GenerationInfo): Promise<boolean> {
  try {
    const stats = await lstat(path);
    if (!stats.isFile() || stats.size !== generation.bytes) return false;
    const { header, bytes } = await readGenerationHeader(path);
    return (
      bytes === generation.bytes && header.generationId === generation.id && header.createdMs === generation.createdMs
    );
  } catch {
    // Vanished, unreadable, no longer a well-formed header: not what was planned, so not removed.
    return false;
  }
}
