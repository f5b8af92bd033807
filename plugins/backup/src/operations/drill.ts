import { mkdtemp } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { PluginOfflineContext } from "@vellum/core";
import Database from "better-sqlite3";
import { BackupCatalog, type DrillResult, type GenerationRecord } from "../catalog.js";
import { describeFailure } from "../failure.js";
import { SQLITE_DB_PATH } from "../format/index.js";
import type { BackupOptions } from "../options.js";
import { type GenerationInfo, listGenerations } from "../policy/index.js";
import { removeBestEffort } from "../restore/durable.js";
import { restoreGeneration } from "../restore/index.js";
import { refuseNewerApp } from "../version.js";

/** How much older than the idle interval the newest generation may be before the drill fails it. */
export const FRESHNESS_GRACE_MS = 15 * 60_000;

export interface DrillScope {
  dataDir: string;
  options: Readonly<BackupOptions>;
  logger: PluginOfflineContext["logger"];
  now?: () => number;
}

/** A check of the drill that failed: which one, and why. */
class DrillFailure extends Error {
  constructor(
    readonly check: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The restore drill (backup-format.md §4): the newest generation in BACKUP_TARGET goes through the
 * whole §3.2 restore into a scratch directory beside the data dir (never on the target), which
 * includes every frame, digest and `PRAGMA integrity_check`; then the rows of each table are compared
 * with the counts taken at T0 (this data dir's record of the generation, else its MANIFEST), its
 * content root with the record when there is one, and
 * the newest generation must be fresh (younger than the idle interval plus 15 minutes). The scratch
 * directory is removed; only the last result is kept. A failure is logged as `restore drill
 * failure: <reason>` and shown by health until a drill passes.
 */
export async function runDrill(scope: DrillScope): Promise<DrillResult> {
  const now = scope.now ?? Date.now;
  const began = performance.now();
  const catalog = new BackupCatalog(scope.dataDir);
  let newest: GenerationInfo | undefined;
  let result: DrillResult;
  try {
    newest = await newestGeneration(scope.options);
    await drillGeneration(scope, newest, await catalog.generation(newest.name));
    const age = now() - newest.createdMs;
    if (age > scope.options.idleMaxMs + FRESHNESS_GRACE_MS) {
      throw new DrillFailure(
        "freshness",
        `the newest generation ${newest.name} is ${Math.round(age / 60_000)} min old`,
      );
    }
    result = outcome(newest, now, began, null, null);
  } catch (error) {
    const check = error instanceof DrillFailure ? error.check : "restore";
    const reason = error instanceof DrillFailure ? error.message : describeFailure(error).message;
    result = outcome(newest, now, began, check, reason);
    scope.logger.error(`restore drill failure: ${reason}${newest ? ` (generation ${newest.name})` : ""}`);
  }
  await catalog.recordDrill(result);
  return result;
}

function outcome(
  generation: GenerationInfo | undefined,
  now: () => number,
  began: number,
  failedCheck: string | null,
  error: string | null,
): DrillResult {
  return {
    at: new Date(now()).toISOString(),
    ok: failedCheck === null,
    durationMs: Math.round(performance.now() - began),
    generation: generation?.name ?? null,
    generationId: generation?.id ?? null,
    generationCreatedAt: generation ? new Date(generation.createdMs).toISOString() : null,
    failedCheck,
    error,
  };
}

async function newestGeneration(options: Readonly<BackupOptions>): Promise<GenerationInfo> {
  if (!options.target) throw new DrillFailure("configuration", "BACKUP_TARGET is not set");
  const { generations } = await listGenerations(options.target);
  const newest = generations.find((g) => g.nameMatches);
  if (!newest) throw new DrillFailure("generation", `no generation found in ${options.target}`);
  return newest;
}

/** Restores `generation` into a scratch dir beside the data dir, compares it, removes the scratch dir. */
async function drillGeneration(
  scope: DrillScope,
  generation: GenerationInfo,
  record: GenerationRecord | undefined,
): Promise<void> {
  const { options } = scope;
  const scratch = await mkdtemp(join(dirname(scope.dataDir), `.${basename(scope.dataDir)}.drill-`));
  try {
    const dest = join(scratch, "data");
    let manifestCounts: Record<string, number> | undefined;
    const restored = await restoreGeneration({
      file: generation.path,
      dest,
      passphrase: options.passphrase ?? "",
      previousPassphrase: options.previousPassphrase,
      checkManifest: (manifest) => {
        refuseNewerApp(manifest);
        manifestCounts = tableCounts(manifest.tables);
      },
    });
    if (record && record.contentRoot !== restored.summary.contentRoot) {
      throw new DrillFailure("content_root", `the content root differs from the one recorded at backup`);
    }
    const expected = record?.tableCounts ?? manifestCounts;
    if (!expected) throw new DrillFailure("row_counts", "the generation records no row counts to compare with");
    compareCounts(join(dest, ...SQLITE_DB_PATH.split("/")), expected);
  } finally {
    await removeBestEffort(scratch);
  }
}

/** The MANIFEST's `tables` (rows per table at T0), when it is such a map. */
function tableCounts(value: unknown): Record<string, number> | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const entries = Object.entries(value);
  return entries.every(([, rows]) => Number.isSafeInteger(rows))
    ? (Object.fromEntries(entries) as Record<string, number>)
    : undefined;
}

/** Rows of each table recorded at backup against the restored database. */
function compareCounts(dbPath: string, expected: Readonly<Record<string, number>>): void {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    for (const [table, rows] of Object.entries(expected)) {
      const found = db
        .prepare(`SELECT count(*) FROM "${table.replaceAll('"', '""')}"`)
        .pluck()
        .get() as number;
      if (found !== rows) {
        throw new DrillFailure("row_counts", `table ${table}: ${rows} rows at backup, ${found} restored`);
      }
    }
  } finally {
    db.close();
  }
}
