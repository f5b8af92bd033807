import { constants } from "node:fs";
import { access, statfs } from "node:fs/promises";
import { type DatabaseOps, walkFiles } from "@vellum/core";

export interface DiskUsage {
  total_bytes: number;
  available_bytes: number;
  /** Share of the disk in use, as `df` computes it: used / (used + available to us). */
  used_ratio: number;
}

export interface StorageSnapshot {
  used_bytes: number;
  quota_bytes: number;
  used_ratio: number;
  /** Files under the data dir outside `db/`, kept current between rescans by `storage:changed`. */
  files_bytes: number;
  /** Of those, the folders whose plugin keeps their accounting (`storage:accounted`), by folder. */
  accounted: Record<string, number>;
  /** Database files, read live. */
  database_bytes: number;
  /** When the last full walk of the data dir finished (null before the first). */
  scanned_at: string | null;
  /** The disk holding the data dir, or null when it could not be read. */
  disk: DiskUsage | null;
  /** Whether this process may write to the data dir. */
  writable: boolean;
}

/** Ratios are reported to six decimals; thresholds compare the exact value. */
export const roundRatio = (value: number) => Math.round(value * 1_000_000) / 1_000_000;

async function diskUsage(dir: string): Promise<DiskUsage | null> {
  try {
    const s = await statfs(dir);
    const used = (s.blocks - s.bfree) * s.bsize;
    const available = s.bavail * s.bsize;
    const usable = used + available;
    return { total_bytes: s.blocks * s.bsize, available_bytes: available, used_ratio: usable > 0 ? used / usable : 0 };
  } catch {
    return null;
  }
}

async function writable(dir: string): Promise<boolean> {
  try {
    await access(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Bytes used under the data dir, kept current without walking it per request: one walk at start
 * and periodic rescans give the file total, plugins report changes in between through the
 * `storage:changed` hook, and the database's size is read live (it changes with every write).
 */
export class StorageUsage {
  readonly #dataDir: string;
  readonly #database: DatabaseOps;
  readonly #quotaBytes: number;
  /** Walked files outside `db/` and the accounted folders. */
  #filesBytes = 0;
  readonly #accounted = new Map<string, number>();
  #scannedAt: Date | undefined;
  #scan: Promise<void> | undefined;

  constructor(dataDir: string, database: DatabaseOps, quotaBytes: number) {
    this.#dataDir = dataDir;
    this.#database = database;
    this.#quotaBytes = quotaBytes;
  }

  get quotaBytes(): number {
    return this.#quotaBytes;
  }

  /**
   * Walks the data dir (skipping `db/`, whose size is read live) and replaces the running total.
   * A change reported while the walk runs may or may not be in its result; the next rescan settles it.
   */
  rescan(): Promise<void> {
    const skipped = [...this.#accounted.keys()].map((folder) => `!${folder}/**`);
    this.#scan ??= walkFiles(this.#dataDir, ["**/*", "!db/**", ...skipped])
      .then((files) => {
        this.#filesBytes = files.reduce((sum, f) => sum + f.bytes, 0);
        this.#scannedAt = new Date();
      })
      .finally(() => {
        this.#scan = undefined;
      });
    return this.#scan;
  }

  /** Applies a change reported through `storage:changed`; ignores anything that is not a finite number. */
  apply(change: { bytes?: unknown; mount?: unknown } | undefined): void {
    const bytes = change?.bytes;
    if (typeof bytes !== "number" || !Number.isFinite(bytes)) return;
    const folder = typeof change?.mount === "string" ? change.mount : undefined;
    const accounted = folder === undefined ? undefined : this.#accounted.get(folder);
    if (folder !== undefined && accounted !== undefined) this.#accounted.set(folder, Math.max(0, accounted + bytes));
    else this.#filesBytes = Math.max(0, this.#filesBytes + bytes);
  }

  /**
   * Takes a plugin's own total for `folder` (`storage:accounted`) in place of walking it; the walk
   * that follows the first one leaves it out, so it is never counted twice. A later total for the
   * same folder replaces the one before, without a walk.
   */
  account(folder: string, bytes: number): Promise<void> {
    if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(folder) || folder === "db" || !Number.isFinite(bytes)) {
      return Promise.resolve();
    }
    const known = this.#accounted.has(folder);
    this.#accounted.set(folder, Math.max(0, bytes));
    if (known) return Promise.resolve();
    return this.#scan ? this.#scan.then(() => this.rescan()) : this.rescan();
  }

  #accountedBytes(except?: string): number {
    let total = 0;
    for (const [folder, bytes] of this.#accounted) if (folder !== except) total += bytes;
    return total;
  }

  /** The database's bytes on disk; 0 when it cannot be read. */
  databaseBytes(): number {
    try {
      return this.#database.sizeBytes();
    } catch {
      return 0;
    }
  }

  /** `except`: a folder with a total of its own left out (`StorageQuotaService.usedBytes`). */
  usedBytes(except?: string): number {
    return this.#filesBytes + this.#accountedBytes(except) + this.databaseBytes();
  }

  async snapshot(): Promise<StorageSnapshot> {
    const databaseBytes = this.databaseBytes();
    const filesBytes = this.#filesBytes + this.#accountedBytes();
    const used = filesBytes + databaseBytes;
    const [disk, canWrite] = await Promise.all([diskUsage(this.#dataDir), writable(this.#dataDir)]);
    return {
      used_bytes: used,
      quota_bytes: this.#quotaBytes,
      used_ratio: used / this.#quotaBytes,
      files_bytes: filesBytes,
      accounted: Object.fromEntries(this.#accounted),
      database_bytes: databaseBytes,
      scanned_at: this.#scannedAt?.toISOString() ?? null,
      disk,
      writable: canWrite,
    };
  }

  /** The disk holding the data dir (for the metrics scrape). */
  disk(): Promise<DiskUsage | null> {
    return diskUsage(this.#dataDir);
  }
}
