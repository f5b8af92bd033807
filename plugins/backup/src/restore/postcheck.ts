import { chmod, lstat, mkdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import { SQLITE_DB_PATH } from "../format/paths.js";
import { errnoCode, RestoreError } from "./errors.js";
import { fsyncDir, writeNewFile } from "./durable.js";

/** A check of the restored database beyond its integrity, e.g. "its migrations are ≤ ours". */
export type RestoredDbCheck = (db: BetterSqlite3.Database) => void | Promise<void>;

async function loadDriver(): Promise<typeof BetterSqlite3> {
  try {
    const mod = (await import("better-sqlite3")) as { default?: typeof BetterSqlite3 };
    return mod.default ?? (mod as unknown as typeof BetterSqlite3);
  } catch (cause) {
    throw new RestoreError("E_IO", "better-sqlite3 could not be loaded to check the restored database", { cause });
  }
}

/**
 * §3.2 step 6, first half: opens `staging/db/vellum.sqlite`, requires `PRAGMA integrity_check` ==
 * `ok` (`E_DB_INTEGRITY`, exit 1), runs `check` if given (a throw refuses with `E_DB_VERSION`,
 * exit 5) and closes cleanly, so `-wal` and `-shm` are checkpointed away.
 *
 * The "migrations ≤ what this binary supports" check is the caller's `check`: this module does not
 * know the application's migration sets.
 */
export async function checkRestoredDb(staging: string, check?: RestoredDbCheck): Promise<void> {
  const Database = await loadDriver();
  const path = join(staging, ...SQLITE_DB_PATH.split("/"));
  let db: BetterSqlite3.Database;
  try {
    db = new Database(path, { fileMustExist: true });
  } catch (cause) {
    throw new RestoreError("E_DB_INTEGRITY", `the restored database does not open: ${message(cause)}`, {
      path,
      cause,
    });
  }
  try {
    let rows: unknown[];
    try {
      rows = db.pragma("integrity_check") as unknown[];
    } catch (cause) {
      throw new RestoreError("E_DB_INTEGRITY", `the restored database is not readable: ${message(cause)}`, {
        path,
        cause,
      });
    }
    const result = rows.map((row) => Object.values(row as Record<string, unknown>).join(" "));
    if (result.length !== 1 || result[0] !== "ok") {
      throw new RestoreError(
        "E_DB_INTEGRITY",
        `PRAGMA integrity_check on the restored database: ${result.slice(0, 5).join("; ")}`,
        { path },
      );
    }
    if (check !== undefined) {
      try {
        await check(db);
      } catch (cause) {
        if (cause instanceof RestoreError) throw cause;
        throw new RestoreError("E_DB_VERSION", `the restored database was refused: ${message(cause)}`, {
          path,
          cause,
        });
      }
    }
  } finally {
    db.close();
  }
}

/** `staging/.vellum/restored-from.json` (§3.2 step 6). */
export interface RestoredFrom {
  generationId: string;
  /** ISO 8601 UTC. */
  createdAt: string;
  /** ISO 8601 UTC. */
  restoredAt: string;
  /** The archive, as given (absolute). */
  file: string;
  /** Lower-case hex. */
  contentRoot: string;
}

/**
 * Writes `staging/.vellum/restored-from.json` (0600, fsynced), creating `.vellum` (0700) when the
 * archive had none and replacing a marker the archive carried from an earlier restore. Returns
 * whether `.vellum` was created here.
 */
export async function writeRestoredFrom(staging: string, marker: RestoredFrom): Promise<boolean> {
  const dir = join(staging, ".vellum");
  let created = false;
  try {
    await mkdir(dir, { mode: 0o700 });
    await chmod(dir, 0o700);
    created = true;
  } catch (error) {
    if (errnoCode(error) !== "EEXIST") throw error;
    if (!(await lstat(dir)).isDirectory()) throw error;
  }
  const file = join(dir, "restored-from.json");
  await unlink(file).catch((error: unknown) => {
    if (errnoCode(error) !== "ENOENT") throw error;
  });
  await writeNewFile(file, Buffer.from(`${JSON.stringify(marker, null, 2)}\n`));
  return created;
}

/**
 * fsyncs every directory of the staging tree bottom-up (deepest first), then staging itself, then
 * its parent (§3.2 step 6's end). `dirs` are relative to `staging`.
 */
export async function fsyncTree(staging: string, dirs: readonly string[], parent: string): Promise<void> {
  const depth = (path: string) => path.split("/").length;
  const ordered = [...dirs].sort((a, b) => depth(b) - depth(a) || (a < b ? 1 : a > b ? -1 : 0));
  for (const dir of ordered) await fsyncDir(join(staging, ...dir.split("/")));
  await fsyncDir(staging);
  await fsyncDir(parent);
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
