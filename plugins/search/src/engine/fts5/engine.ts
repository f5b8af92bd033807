import { collectForCommit, PreparedQuery, readSnapshot, sql } from "@vellum/core";
import { type Db, type GenerationRow, searchView } from "../../tables.js";
import type {
  EngineStats,
  RebuildOptions,
  SearchDocument,
  SearchEngine,
  SearchRequest,
  WriteTransaction,
} from "../types.js";
import { ensureActiveGeneration, isFreshBuild, listGenerations, liveState, markBroken } from "./generations.js";
import { applyChanges, clearPending, type IndexChange, removeDocument, upsertDocument } from "./index-writes.js";
import { rebuild } from "./rebuild.js";
import { type GenerationTables, generationTables, LAYOUT } from "./schema.js";
import { search } from "./searcher.js";
import { related, suggestTags } from "./similar.js";

/** The index is missing or unusable; the caller answers degraded. */
export class IndexUnavailableError extends Error {
  override readonly name = "IndexUnavailableError";
  constructor(readonly state: "missing" | "broken") {
    super(`the search index is ${state}`);
  }
}

/** SQLite's way of saying the index tables are damaged or gone. */
function damaged(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && /^SQLITE_(CORRUPT|NOTADB)/.test(code)) return true;
  return error instanceof Error && /no such (table|column)|malformed|fts5: corrupt/i.test(error.message);
}

export interface Fts5EngineOptions {
  /** Called when a write to a generation failed and the generation was marked broken. */
  onWriteFailure?: (error: unknown, generation: number) => void;
}

/**
 * SQLite FTS5 in the application's own database. Each index generation is a set of tables
 * (see schema.ts); `search_generations` names the live one and the one being built.
 */
export class Fts5Engine implements SearchEngine {
  readonly #db: Db;
  readonly #options: Fts5EngineOptions;
  /**
   * `#guarded`'s statements, compiled once: they run around every indexed write (at once in a
   * transaction the kernel holds, as every `PreparedQuery` does).
   */
  readonly #savepoint: Record<"begin" | "release" | "rollback", PreparedQuery>;
  /**
   * The generations, read once per write transaction: it holds the write lock, so only its own
   * `markBroken` can change them meanwhile, and that drops the entry (read again after, so a
   * rolled-back mark is seen as rolled back).
   */
  readonly #generations = new WeakMap<object, Promise<GenerationRow[]>>();

  constructor(db: Db, options: Fts5EngineOptions = {}) {
    this.#db = db;
    this.#options = options;
    this.#savepoint = {
      begin: new PreparedQuery(sql`SAVEPOINT search_index`.compile(db), 0),
      release: new PreparedQuery(sql`RELEASE search_index`.compile(db), 0),
      rollback: new PreparedQuery(sql`ROLLBACK TO search_index`.compile(db), 0),
    };
  }

  #writableGenerations(db: Db): Promise<GenerationRow[]> {
    if (!db.isTransaction) return listGenerations(db);
    let rows = this.#generations.get(db);
    if (!rows) {
      rows = listGenerations(db);
      this.#generations.set(db, rows);
    }
    return rows;
  }

  /**
   * Writes go to every writable generation, each inside a savepoint: if one fails (a damaged
   * index), that generation is marked broken (queries answer degraded until a rebuild replaces
   * it) and the article write itself still commits. The documents are written at once; their
   * full-text entries and their word and tag counts are added once for the whole transaction
   * just before it commits (`collectForCommit`), the same savepoint rule applying to that step.
   */
  async #write(
    trx: WriteTransaction,
    apply: (db: Db, t: GenerationTables, row: GenerationRow) => Promise<IndexChange | undefined>,
  ): Promise<void> {
    const db = searchView(trx);
    for (const row of await this.#writableGenerations(db)) {
      if (row.broken || row.layout !== LAYOUT) continue;
      const tables = generationTables(row.generation);
      const change = await this.#guarded(db, row.generation, () => apply(db, tables, row));
      if (!change) continue;
      await collectForCommit(trx, `search:counts:${row.generation}`, change, async (executor, changes) => {
        const db = searchView(executor);
        const done = await this.#guarded(db, row.generation, async () => {
          await applyChanges(db, tables, changes, row.state === "building");
          return true;
        });
        // A generation that failed here is broken and never written again: drop what it left pending.
        if (!done) await clearPending(db, row.generation);
      });
    }
  }

  /** Runs `step` in a savepoint; a failure rolls it back and marks `generation` broken. */
  async #guarded<T>(db: Db, generation: number, step: () => Promise<T>): Promise<T | undefined> {
    await this.#savepoint.begin.run(db, []);
    try {
      const result = await step();
      await this.#savepoint.release.run(db, []);
      return result;
    } catch (error) {
      await this.#savepoint.rollback.run(db, []);
      await this.#savepoint.release.run(db, []);
      this.#generations.delete(db);
      await markBroken(db, generation);
      this.#options.onWriteFailure?.(error, generation);
      return undefined;
    }
  }

  index(trx: WriteTransaction, doc: SearchDocument): Promise<void> {
    return this.#write(trx, (db, t) => upsertDocument(db, t, doc));
  }

  remove(trx: WriteTransaction, id: string): Promise<void> {
    return this.#write(trx, (db, t, row) => removeDocument(db, t, id, row.state === "building"));
  }

  /**
   * Runs `fn` on the live generation inside one read transaction (a consistent snapshot). An
   * error that shows the index itself is damaged marks the generation broken.
   */
  async #read<T>(fn: (db: Db, t: GenerationTables, row: GenerationRow) => Promise<T>): Promise<T> {
    let generation: number | undefined;
    try {
      return await readSnapshot(this.#db, async (trx) => {
        const { row, state } = await liveState(trx, false);
        if (state !== "ok" || !row) throw new IndexUnavailableError(state === "ok" ? "missing" : state);
        generation = row.generation;
        return fn(trx, generationTables(row.generation), row);
      });
    } catch (error) {
      if (generation === undefined || !damaged(error)) throw error;
      await markBroken(this.#db, generation);
      throw new IndexUnavailableError("broken");
    }
  }

  query(request: SearchRequest) {
    return this.#read((db, t, row) => search(db, t, row.documents, request));
  }

  related(slug: string, limit: number) {
    return this.#read((db, t, row) => related(db, t, row.documents, slug, limit));
  }

  suggestTags(text: { title: string; body: string }, limit: number, exclude: readonly string[]) {
    return this.#read((db, t, row) => suggestTags(db, t, row.documents, text, limit, exclude));
  }

  rebuild(source: () => AsyncIterable<SearchDocument[]>, options?: RebuildOptions) {
    return rebuild(this.#db, source, options);
  }

  async ensureIndex(): Promise<void> {
    await ensureActiveGeneration(this.#db);
  }

  async stats(): Promise<EngineStats> {
    const { row, state } = await liveState(this.#db, true);
    const building = (await listGenerations(this.#db)).find((r) => r.state === "building");
    let latestChange: string | null = null;
    if (state === "ok" && row) {
      const latest = await this.#db
        .selectFrom(generationTables(row.generation).docs)
        .select((eb) => eb.fn.max("updated_at").as("latest"))
        .executeTakeFirst();
      latestChange = latest?.latest ?? null;
    }
    return {
      state,
      generation: row?.generation ?? null,
      documents: state === "ok" ? (row?.documents ?? 0) : 0,
      indexedAt: row?.indexed_at ?? null,
      latestChange,
      building: building
        ? {
            generation: building.generation,
            documents: building.documents,
            startedAt: building.started_at,
            heartbeatAt: building.heartbeat_at,
            alive: isFreshBuild(building),
          }
        : null,
    };
  }
}
