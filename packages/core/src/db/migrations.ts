import { createHash } from "node:crypto";
import type { AnyDb } from "./types.js";
import { storageFailure } from "../errors/storage-failure.js";
import { CoreErrors } from "../errors/vellum-error.js";

export interface Migration {
  up(db: AnyDb): Promise<void>;
  down?(db: AnyDb): Promise<void>;
}

export type MigrationSet = Record<string, Migration>;

export interface AppliedMigration {
  plugin: string;
  name: string;
  checksum: string;
  applied_at: string;
}

export interface MigrationDrift {
  plugin: string;
  name: string;
  kind: "missing_from_code" | "checksum_changed";
}

export interface MigrationStatus {
  applied: AppliedMigration[];
  pending: Array<{ plugin: string; name: string }>;
  drift: MigrationDrift[];
}

export interface MigrationResult {
  plugin: string;
  name: string;
  status: "applied" | "failed";
  error?: string;
}

export interface MigrateOutcome {
  results: MigrationResult[];
  error?: Error;
}

/**
 * The source of a migration function without what compilers disagree on: whitespace, comments
 * (a `//` after `:` is kept, as in a URL), trailing commas, and Vitest's rewriting of imported
 * names (`sql` becomes `__vite_ssr_import_0__.sql`). tsc and esbuild print the same function
 * differently, and a data dir migrated by the built code and reopened from source must not read
 * as drift; changing a token must.
 */
function normalizedSource(fn: Migration["up"]): string {
  return fn
    .toString()
    .replace(/(^|[^:])\/\/.*$/gm, "$1")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/\s+/g, "")
    .replace(/\(0,__vite_ssr_import_\d+__\.(\w+)\)/g, "$1")
    .replace(/__vite_ssr_import_\d+__\./g, "")
    .replace(/,([)\]}])/g, "$1");
}

/** Checksum of a migration: its name and the normalized source of its `up` (and `down`). */
export function migrationChecksum(name: string, migration: Migration): string {
  const hash = createHash("sha256").update(name).update("\0").update(normalizedSource(migration.up));
  if (migration.down) hash.update(normalizedSource(migration.down));
  return hash.digest("hex");
}

export function migrationTableName(plugin: string): string {
  return `_vellum_migrations_${plugin.replace(/[^a-zA-Z0-9_]/g, "_")}`;
}

async function ensureTable(db: AnyDb, table: string): Promise<void> {
  await db.schema
    .createTable(table)
    .ifNotExists()
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("checksum", "text", (c) => c.notNull())
    .addColumn("applied_at", "text", (c) => c.notNull())
    .execute();
}

/** Tables known to exist (they are never dropped), so status reads skip the introspection. */
const knownTables = new WeakMap<AnyDb, Set<string>>();

async function tableExists(db: AnyDb, table: string): Promise<boolean> {
  const known = knownTables.get(db) ?? new Set<string>();
  knownTables.set(db, known);
  if (known.has(table)) return true;
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  for (const t of tables) known.add(t.name);
  return known.has(table);
}

/** Applied migrations of a plugin; `create` makes the table first (migrate), status reads never write. */
async function readApplied(db: AnyDb, plugin: string, create = true): Promise<AppliedMigration[]> {
  const table = migrationTableName(plugin);
  if (create) await ensureTable(db, table);
  else if (!(await tableExists(db, table))) return [];
  const rows = await db.selectFrom(table).select(["name", "checksum", "applied_at"]).orderBy("name").execute();
  return rows.map((row) => ({ plugin, ...row }) as AppliedMigration);
}

/**
 * How long, in all, a migration run waits for the write lock while another process holds it. Two
 * processes starting together on one database both migrate it; SQLite's busy timeout gives up after
 * a few seconds while the other keeps taking the lock for its next migration, so without this the
 * later one could fail to start under load.
 */
const LOCKED_WAIT_MS = 60_000;

/** Runs `step`, again after a short pause whenever the database is locked, until `deadline`. */
async function whileLocked<T>(deadline: number, step: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await step();
    } catch (error) {
      if (storageFailure(error)?.kind !== "locked" || Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80));
    }
  }
}

/**
 * Per-plugin migrations kept in code. Each plugin has its own table `_vellum_migrations_<plugin>`
 * holding the name, a checksum of the migration's code and when it ran; names sort in order
 * (`NNNN_description`). Drift is an applied migration that is missing from the code or whose
 * checksum changed.
 */
export class MigrationRunner {
  readonly #db: AnyDb;
  readonly #sets = new Map<string, MigrationSet>();

  constructor(db: AnyDb) {
    this.#db = db;
  }

  register(plugin: string, set: MigrationSet): void {
    this.#sets.set(plugin, { ...this.#sets.get(plugin), ...set });
  }

  async status(): Promise<MigrationStatus> {
    const status: MigrationStatus = { applied: [], pending: [], drift: [] };
    for (const [plugin, set] of this.#sets) {
      const applied = await readApplied(this.#db, plugin, false);
      const byName = new Map(applied.map((a) => [a.name, a]));
      status.applied.push(...applied);
      for (const a of applied) {
        const code = set[a.name];
        if (!code) status.drift.push({ plugin, name: a.name, kind: "missing_from_code" });
        else if (migrationChecksum(a.name, code) !== a.checksum)
          status.drift.push({ plugin, name: a.name, kind: "checksum_changed" });
      }
      for (const name of Object.keys(set).sort()) if (!byName.has(name)) status.pending.push({ plugin, name });
    }
    return status;
  }

  /**
   * Applies pending migrations plugin by plugin (in the given order), each in its own transaction;
   * waits up to a minute for another process that holds the write lock (one migrating the same database).
   */
  async migrate(order: string[]): Promise<MigrateOutcome> {
    const results: MigrationResult[] = [];
    const deadline = Date.now() + LOCKED_WAIT_MS;
    const failed = (plugin: string, name: string, cause: unknown): MigrateOutcome => {
      const reason = cause instanceof Error ? cause.message : String(cause);
      results.push({ plugin, name, status: "failed", error: reason });
      return { results, error: CoreErrors.migrationFailed([plugin, name, reason], { plugin, cause }) };
    };
    for (const plugin of order) {
      const set = this.#sets.get(plugin);
      if (!set) continue;
      const table = migrationTableName(plugin);
      let applied: Set<string>;
      try {
        applied = new Set((await whileLocked(deadline, () => readApplied(this.#db, plugin))).map((a) => a.name));
      } catch (cause) {
        return failed(plugin, table, cause);
      }
      for (const name of Object.keys(set).sort()) {
        if (applied.has(name)) continue;
        const migration = set[name] as Migration;
        try {
          const ran = await whileLocked(deadline, () =>
            this.#db.transaction().execute(async (trx) => {
              // Another process starting on the same database may have applied it since `applied` was read.
              if (await trx.selectFrom(table).select("name").where("name", "=", name).executeTakeFirst()) return false;
              await migration.up(trx);
              await trx
                .insertInto(table)
                .values({ name, checksum: migrationChecksum(name, migration), applied_at: new Date().toISOString() })
                .execute();
              return true;
            }),
          );
          if (ran) results.push({ plugin, name, status: "applied" });
        } catch (cause) {
          return failed(plugin, name, cause);
        }
      }
    }
    return { results };
  }
}
