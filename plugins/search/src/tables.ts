import type { CommitFlush, KernelTables, Kysely } from "@vellum/core";
import type { WriteTransaction } from "./engine/types.js";

/** `search_generations` (migration 0001): the live generation and the one being built. */
export interface GenerationRow {
  generation: number;
  state: "active" | "building";
  /** Version of the per-generation table layout (`LAYOUT` in `engine/fts5/schema.ts`). */
  layout: number;
  documents: number;
  /** 1 once a write to the generation failed; it stays out of queries until rebuilt. */
  broken: number;
  indexed_at: string | null;
  started_at: string;
  heartbeat_at: string;
}

/** `search_pending_fts` (migration 0002): documents whose full-text entry waits for the commit. */
export interface PendingFtsRow {
  generation: number;
  docid: number;
}

/** `search_docs_g<N>`: one row per indexed article, and the text FTS5 reads as external content. */
export interface DocsRow {
  rowid: number;
  article_id: string;
  slug: string;
  title: string;
  /** JSON array, as the API returns it. */
  tags: string;
  /** The tags one per line, as FTS5 indexes them. */
  tags_text: string;
  body: string;
  created_at: string;
  updated_at: string;
}

/** `search_fts_g<N>`: the FTS5 table over the docs (its hidden columns are used through `sql`). */
export interface FtsRow {
  rowid: number;
  title: string;
  tags_text: string;
  body: string;
}

/** `search_terms_g<N>`: the vocabulary; `stem` is null until the word is described. */
export interface TermsRow {
  term: string;
  stem: string | null;
  docs: number;
}

/** `search_variants_g<N>`: deletion variants of the vocabulary (typo correction). */
export interface VariantsRow {
  variant: string;
  term: string;
}

/** `search_tags_g<N>`: every tag in use with its document count. */
export interface TagsRow {
  tag: string;
  docs: number;
}

/** `search_tombstones_g<N>`: articles deleted while the generation was being built. */
export interface TombstonesRow {
  article_id: string;
}

/**
 * The search plugin's tables, for `definePlugin<SearchOptions, SearchTables>`: the two its
 * migrations create, and those of every index generation, which the engine creates at run time
 * with the generation's number in their names (`search_docs_g3`).
 */
export interface SearchTables {
  search_generations: GenerationRow;
  search_pending_fts: PendingFtsRow;
  [table: `search_docs_g${number}`]: DocsRow;
  [table: `search_fts_g${number}`]: FtsRow;
  [table: `search_terms_g${number}`]: TermsRow;
  [table: `search_variants_g${number}`]: VariantsRow;
  [table: `search_tags_g${number}`]: TagsRow;
  [table: `search_tombstones_g${number}`]: TombstonesRow;
}

/** The schema the plugin's `ctx.db` sees: its tables and the kernel's. */
export type SearchDb = SearchTables & KernelTables;

/** The plugin's database handle or a transaction on it (a Kysely `Transaction` is a `Kysely`). */
export type Db = Kysely<SearchDb>;

/** An executor the kernel hands over inside a write (a commit flush's): on any schema. */
type WriteExecutor = Parameters<CommitFlush<unknown>>[0];

/**
 * The search tables' view of a write's transaction (or of a commit flush's executor, the same
 * transaction): the writer typed it with its own tables; the search tables are in the same
 * database.
 */
export function searchView(trx: WriteTransaction | WriteExecutor): Db {
  return trx as Db;
}
