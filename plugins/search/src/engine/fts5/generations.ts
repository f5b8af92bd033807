import { sql } from "@vellum/core";
import type { Db, GenerationRow } from "../../tables.js";
import { RebuildRunningError } from "../types.js";
import { prepared } from "./prepared.js";
import {
  createGenerationTables,
  dropGenerationTables,
  dropTables,
  existingGenerations,
  type GenerationTables,
  generationComplete,
  generationTables,
  LAYOUT,
} from "./schema.js";

/** A build whose heartbeat is older than this was abandoned (its process died). */
export const BUILD_STALE_MS = 60_000;

/**
 * Statements on `search_generations` itself are the same for every generation: compiled once under
 * generation 0, which no generation has (they count from 1). Every indexed write's transaction
 * reads the list, and every search the active one.
 */
const EVERY_GENERATION = 0;

export function listGenerations(db: Db): Promise<GenerationRow[]> {
  const query = prepared<GenerationRow>("list-generations", EVERY_GENERATION, 0, () =>
    sql`SELECT * FROM search_generations ORDER BY generation`.compile(db),
  );
  return query.rows(db, []);
}

export async function activeGeneration(db: Db): Promise<GenerationRow | undefined> {
  const query = prepared<GenerationRow>("active-generation", EVERY_GENERATION, 0, () =>
    sql`SELECT * FROM search_generations WHERE state = 'active'`.compile(db),
  );
  return (await query.rows(db, []))[0];
}

/** The row of `generation`, or undefined when it is gone. */
export function generationRow(db: Db, generation: number): Promise<GenerationRow | undefined> {
  return db.selectFrom("search_generations").selectAll().where("generation", "=", generation).executeTakeFirst();
}

export function isFreshBuild(row: GenerationRow, now = Date.now()): boolean {
  return row.state === "building" && now - Date.parse(row.heartbeat_at) < BUILD_STALE_MS;
}

/** Marks a generation unusable (a write to it failed); it stays out of queries until rebuilt. */
export async function markBroken(db: Db, generation: number): Promise<void> {
  await db.updateTable("search_generations").set({ broken: 1 }).where("generation", "=", generation).execute();
}

/** Counts `added` documents into a generation and renews its heartbeat (and `indexed_at` when `indexed`). */
export async function touch(db: Db, generation: number, added: number, indexed: boolean): Promise<void> {
  const now = new Date().toISOString();
  const query = prepared(indexed ? "touch-indexed" : "touch", generation, indexed ? 4 : 3, () =>
    db
      .updateTable("search_generations")
      .set((eb) => ({ documents: eb("documents", "+", 0), heartbeat_at: "", ...(indexed ? { indexed_at: "" } : {}) }))
      .where("generation", "=", 0)
      .compile(),
  );
  await query.run(db, indexed ? [added, now, now, generation] : [added, now, generation]);
}

/**
 * Creates an empty building generation, its row and tables together, unless a live build holds
 * the database (`RebuildRunningError`). The look and the create are one write transaction, so of
 * two processes starting a rebuild together one builds and the other is told a build runs
 * (before, the second failed on `UNIQUE constraint failed: search_generations.state`).
 */
export async function startBuild(db: Db): Promise<GenerationTables> {
  return db.transaction().execute(async (trx) => {
    const running = (await listGenerations(trx)).find((row) => isFreshBuild(row));
    if (running) throw new RebuildRunningError(running.generation);
    return insertGeneration(trx, "building");
  });
}

/**
 * Creates an empty live generation unless there is one. The look and the create are one write
 * transaction, so two processes starting together on one database make one (before, the second
 * failed to start on `UNIQUE constraint failed: search_generations.state`).
 */
export async function ensureActiveGeneration(db: Db): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (!(await activeGeneration(trx))) await insertGeneration(trx, "active");
  });
}

async function insertGeneration(trx: Db, state: "active" | "building"): Promise<GenerationTables> {
  const now = new Date().toISOString();
  const inserted = await sql<{ generation: number }>`
    INSERT INTO search_generations (state, layout, indexed_at, started_at, heartbeat_at)
    VALUES (${state}, ${LAYOUT}, ${state === "active" ? now : null}, ${now}, ${now})
    RETURNING generation`.execute(trx);
  const tables = generationTables((inserted.rows[0] as Pick<GenerationRow, "generation">).generation);
  await createGenerationTables(trx, tables);
  return tables;
}

/**
 * Makes the building generation live in one transaction, and returns the generation it replaced.
 * Readers either see the old one or the new one, never a mix.
 */
export async function promote(
  db: Db,
  generation: number,
  beforeSwitch: (trx: Db) => Promise<void>,
): Promise<number | null> {
  return db.transaction().execute(async (trx) => {
    const rows = await listGenerations(trx);
    const building = rows.find((row) => row.generation === generation && row.state === "building");
    if (!building) throw new Error(`search generation ${generation} is no longer being built`);
    if (building.broken) throw new Error(`a live write to search generation ${generation} failed`);
    await beforeSwitch(trx);
    const previous = rows.find((row) => row.state === "active");
    if (previous) await trx.deleteFrom("search_generations").where("generation", "=", previous.generation).execute();
    const now = new Date().toISOString();
    await trx
      .updateTable("search_generations")
      .set({ state: "active", indexed_at: now, heartbeat_at: now })
      .where("generation", "=", generation)
      .execute();
    await trx.deleteFrom(generationTables(generation).tombstones).execute();
    return previous?.generation ?? null;
  });
}

async function forgetGeneration(trx: Db, generation: number): Promise<void> {
  await trx.deleteFrom("search_generations").where("generation", "=", generation).execute();
  await dropGenerationTables(trx, generationTables(generation));
}

/** Forgets a generation and drops its tables. */
export async function discardGeneration(db: Db, generation: number): Promise<void> {
  await db.transaction().execute((trx) => forgetGeneration(trx, generation));
}

/**
 * Drops what crashed or replaced generations left behind: tables of generations with no row, and
 * builds whose process stopped sending heartbeats. Other processes create generations meanwhile,
 * so the rows, the table list and the drops are one write transaction: read apart, a generation
 * created between the two reads had its tables dropped as if nobody referenced them.
 */
export async function removeLeftovers(db: Db): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const known = new Set<number>();
    for (const row of await listGenerations(trx)) {
      if (row.state === "building" && !isFreshBuild(row)) await forgetGeneration(trx, row.generation);
      else known.add(row.generation);
    }
    for (const [generation, tables] of await existingGenerations(trx)) {
      if (!known.has(generation)) await dropTables(trx, tables);
    }
  });
}

/**
 * Whether the live generation can answer queries, and why not. `thorough` also checks that its
 * tables exist (health does; queries find out when a statement fails, which saves a lookup).
 */
export async function liveState(
  db: Db,
  thorough: boolean,
): Promise<{ row: GenerationRow | undefined; state: "ok" | "missing" | "broken" }> {
  const row = await activeGeneration(db);
  if (!row || row.layout !== LAYOUT) return { row, state: "missing" };
  if (row.broken) return { row, state: "broken" };
  if (thorough && !(await generationComplete(db, generationTables(row.generation)))) return { row, state: "missing" };
  return { row, state: "ok" };
}
