import { sql } from "@vellum/core";
import type { Db } from "../../tables.js";

/** Version of the per-generation table layout below; a generation with another layout is rebuilt. */
export const LAYOUT = 1;

/** Column weights for bm25: a title hit counts more than a tag hit, which counts more than a body hit. */
export const WEIGHTS = { title: 10, tags: 4, body: 1 } as const;

/** The tables of one index generation (typed in `SearchTables`); every name starts with `search_`. */
export interface GenerationTables {
  generation: number;
  /** One row per indexed article: what results show, plus the text FTS5 reads as external content. */
  docs: `search_docs_g${number}`;
  /** FTS5 index over docs(title, tags_text, body). */
  fts: `search_fts_g${number}`;
  /** Vocabulary: every word, its Porter stem, and the number of documents that contain it. */
  terms: `search_terms_g${number}`;
  /** Deletion neighbourhoods of the vocabulary, for typo correction. */
  variants: `search_variants_g${number}`;
  /** Every tag in use with its document count. */
  tags: `search_tags_g${number}`;
  /** Articles deleted while this generation was being built (so a stale batch cannot resurrect them). */
  tombstones: `search_tombstones_g${number}`;
}

export function generationTables(generation: number): GenerationTables {
  if (!Number.isSafeInteger(generation) || generation <= 0) throw new TypeError(`bad generation ${generation}`);
  return {
    generation,
    docs: `search_docs_g${generation}`,
    fts: `search_fts_g${generation}`,
    terms: `search_terms_g${generation}`,
    variants: `search_variants_g${generation}`,
    tags: `search_tags_g${generation}`,
    tombstones: `search_tombstones_g${generation}`,
  };
}

/** Names of every table of every generation present in the database (including leftovers). */
export async function existingGenerations(db: Db): Promise<Map<number, string[]>> {
  const rows = await sql<{ name: string }>`
    SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'search_*_g[0-9]*'`.execute(db);
  const found = new Map<number, string[]>();
  for (const { name } of rows.rows) {
    const match = /^search_(docs|fts|terms|variants|tags|tombstones)_g(\d+)$/.exec(name);
    if (!match) continue;
    const generation = Number(match[2]);
    found.set(generation, [...(found.get(generation) ?? []), name]);
  }
  return found;
}

export async function createGenerationTables(db: Db, t: GenerationTables): Promise<void> {
  await sql`CREATE TABLE ${sql.table(t.docs)} (
    rowid INTEGER PRIMARY KEY,
    article_id TEXT NOT NULL UNIQUE,
    slug TEXT NOT NULL,
    title TEXT NOT NULL,
    tags TEXT NOT NULL,
    tags_text TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX ${sql.id(`${t.docs}_slug`)} ON ${sql.table(t.docs)} (slug)`.execute(db);
  await sql`CREATE INDEX ${sql.id(`${t.docs}_updated`)} ON ${sql.table(t.docs)} (updated_at)`.execute(db);
  await sql`CREATE VIRTUAL TABLE ${sql.table(t.fts)} USING fts5(
    title, tags_text, body,
    content=${sql.lit(t.docs)}, content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
  )`.execute(db);
  await sql`CREATE TABLE ${sql.table(t.terms)} (
    term TEXT PRIMARY KEY, stem TEXT, docs INTEGER NOT NULL
  ) WITHOUT ROWID`.execute(db);
  await sql`CREATE INDEX ${sql.id(`${t.terms}_stem`)} ON ${sql.table(t.terms)} (stem)`.execute(db);
  await sql`CREATE TABLE ${sql.table(t.variants)} (
    variant TEXT NOT NULL, term TEXT NOT NULL, PRIMARY KEY (variant, term)
  ) WITHOUT ROWID`.execute(db);
  await sql`CREATE TABLE ${sql.table(t.tags)} (tag TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID`.execute(db);
  await sql`CREATE TABLE ${sql.table(t.tombstones)} (article_id TEXT PRIMARY KEY) WITHOUT ROWID`.execute(db);
}

export async function dropTables(db: Db, names: readonly string[]): Promise<void> {
  for (const name of names) await sql`DROP TABLE IF EXISTS ${sql.table(name)}`.execute(db);
}

export async function dropGenerationTables(db: Db, t: GenerationTables): Promise<void> {
  // The FTS table goes first: dropping it also drops its shadow tables.
  await dropTables(db, [t.fts, t.docs, t.terms, t.variants, t.tags, t.tombstones]);
}

/** Whether all tables of a generation are present. */
export async function generationComplete(db: Db, t: GenerationTables): Promise<boolean> {
  const names = [t.docs, t.fts, t.terms, t.variants, t.tags, t.tombstones];
  const rows = await sql<{ n: number }>`
    SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN (${sql.join(names)})`.execute(db);
  return rows.rows[0]?.n === names.length;
}
