import type { HookPayload } from "@vellum/core";

/**
 * The transaction of the write that indexes, as its writer hands it over (a commit hook's `trx`,
 * or another plugin's queue job's `w.trx`): typed with the writer's tables, or none.
 */
export type WriteTransaction = HookPayload<"article:commit">["trx"];

/** What the engine indexes for one article. */
export interface SearchDocument {
  id: string;
  slug: string;
  title: string;
  tags: string[];
  /** Plain text of the content (HTML already removed). */
  body: string;
  created_at: string;
  updated_at: string;
}

export interface SearchRequest {
  /** The raw `q`; the engine parses it and never passes it on as query syntax. */
  q: string;
  limit: number;
  offset: number;
}

export interface SearchHit {
  id: string;
  slug: string;
  title: string;
  tags: string[];
  /** HTML: matches in `<mark>`, everything else escaped. */
  snippet: string;
  score: number;
  created_at: string;
  updated_at: string;
}

/** How a query was answered (a low-cardinality label for metrics, never the query itself). */
export type PlanKind = "empty" | "ranked" | "window" | "recent";

export interface SearchResult {
  hits: SearchHit[];
  total: number;
  plan: PlanKind;
}

export type IndexState = "ok" | "missing" | "broken";

export interface EngineStats {
  state: IndexState;
  generation: number | null;
  documents: number;
  /** Last change to the index (a write or a swap), ISO 8601. */
  indexedAt: string | null;
  /** Latest `updated_at` among indexed documents. */
  latestChange: string | null;
  /** A generation being built; `alive` while its builder still sends heartbeats. */
  building: { generation: number; documents: number; startedAt: string; heartbeatAt: string; alive: boolean } | null;
}

export interface RebuildProgress {
  done: number;
  total: number | null;
}

export interface RebuildOptions {
  /** Expected number of documents, for progress reporting. */
  total?: number | null;
  onProgress?: (progress: RebuildProgress) => void;
}

/** Another rebuild (in this process or another one) is still sending heartbeats. */
export class RebuildRunningError extends Error {
  override readonly name = "RebuildRunningError";
  readonly generation: number;
  constructor(generation: number) {
    super(`search generation ${generation} is already being built`);
    this.generation = generation;
  }
}

export interface RebuildResult {
  generation: number;
  previousGeneration: number | null;
  documents: number;
  durationMs: number;
}

export interface RelatedHit {
  id: string;
  slug: string;
  title: string;
  tags: string[];
  score: number;
  created_at: string;
  updated_at: string;
}

export interface TagSuggestion {
  tag: string;
  score: number;
}

/**
 * A full-text engine behind the search plugin. SQLite FTS5 is the default; a PostgreSQL engine
 * can implement the same surface. Writes take the transaction of the article write so the index
 * commits (or rolls back) with it.
 */
export interface SearchEngine {
  /** Adds or replaces one document, inside the article write's transaction. */
  index(trx: WriteTransaction, doc: SearchDocument): Promise<void>;
  /** Removes one document, inside the article write's transaction. */
  remove(trx: WriteTransaction, id: string): Promise<void>;
  /** Ranked page of matches; throws when the index is missing or unusable. */
  query(request: SearchRequest): Promise<SearchResult>;
  /**
   * Builds a fresh index beside the live one from `source` while the live one keeps answering
   * and receiving writes, then swaps atomically.
   */
  rebuild(source: () => AsyncIterable<SearchDocument[]>, options?: RebuildOptions): Promise<RebuildResult>;
  stats(): Promise<EngineStats>;
  /** Documents most similar to the one with this slug, by the index's terms; undefined if not indexed. */
  related(slug: string, limit: number): Promise<{ terms: string[]; hits: RelatedHit[] } | undefined>;
  /** Existing tags that fit a text, ranked by term weight. */
  suggestTags(
    text: { title: string; body: string },
    limit: number,
    exclude: readonly string[],
  ): Promise<TagSuggestion[]>;
  /** Creates an empty live index when there is none and nothing to index. */
  ensureIndex(): Promise<void>;
}
