import type { ArticlesService } from "@vellum/core";
import { toSearchDocument } from "./document.js";
import { type RebuildResult, RebuildRunningError, type SearchDocument, type SearchEngine } from "./engine/types.js";
import { SearchErrors } from "./errors.js";
import type { SearchService } from "./service.js";

export interface ReindexProgress {
  done: number;
  /** Articles expected (counted when the rebuild started). */
  total: number | null;
}

export interface ReindexOptions {
  /** Called after each batch (the CLI draws its progress bar from this). */
  onProgress?: (progress: ReindexProgress) => void;
}

export type ReindexSummary = RebuildResult;

export interface ReindexStatus {
  state: "idle" | "running";
  progress: ReindexProgress | null;
  started_at: string | null;
  last: { finished_at: string; ok: boolean; documents?: number; duration_ms?: number; generation?: number } | null;
}

async function* documents(articles: ArticlesService, batchSize: number): AsyncIterable<SearchDocument[]> {
  for await (const batch of articles.iterate({ batchSize })) yield batch.map(toSearchDocument);
}

/** Runs rebuilds one at a time in this process and remembers how the last one went. */
export class ReindexController {
  readonly #engine: SearchEngine;
  readonly #articles: () => ArticlesService | undefined;
  readonly #batchSize: number;
  #running: Promise<ReindexSummary> | undefined;
  #progress: ReindexProgress | null = null;
  #startedAt: string | null = null;
  #last: ReindexStatus["last"] = null;
  readonly #listeners = new Set<(progress: ReindexProgress) => void>();

  constructor(engine: SearchEngine, articles: () => ArticlesService | undefined, batchSize: number) {
    this.#engine = engine;
    this.#articles = articles;
    this.#batchSize = batchSize;
  }

  get running(): boolean {
    return this.#running !== undefined;
  }

  /** Starts a rebuild, or joins the one running in this process. */
  run(options: ReindexOptions = {}): Promise<ReindexSummary> {
    const listener = options.onProgress;
    if (listener) this.#listeners.add(listener);
    const running = this.#running ?? this.#start();
    return listener ? running.finally(() => this.#listeners.delete(listener)) : running;
  }

  #start(): Promise<ReindexSummary> {
    const articles = this.#articles();
    if (!articles) return Promise.reject(SearchErrors.noSource([]));
    this.#startedAt = new Date().toISOString();
    const run = (async () => {
      const total = await articles.count();
      this.#progress = { done: 0, total };
      return this.#engine.rebuild(() => documents(articles, this.#batchSize), {
        total,
        onProgress: (progress) => {
          this.#progress = progress;
          for (const listener of this.#listeners) listener(progress);
        },
      });
    })();
    this.#running = run
      .then((summary) => {
        this.#last = {
          finished_at: new Date().toISOString(),
          ok: true,
          documents: summary.documents,
          duration_ms: summary.durationMs,
          generation: summary.generation,
        };
        return summary;
      })
      .catch((error: unknown) => {
        // Refused beside a live build: nothing ran, so the last rebuild is still the one before.
        if (error instanceof RebuildRunningError)
          throw SearchErrors.reindexRunning([error.generation], { cause: error });
        this.#last = { finished_at: new Date().toISOString(), ok: false };
        throw error;
      })
      .finally(() => {
        this.#running = undefined;
        this.#progress = null;
        this.#startedAt = null;
      });
    return this.#running;
  }

  /**
   * Starts a rebuild in the background and resolves once it has its generation (undefined), or
   * with the generation another process is building when that one started first (a lost race is
   * not a failure). Any other failure goes to `report`, and resolves undefined: the status says it.
   */
  begin(report: (error: unknown) => void): Promise<number | undefined> {
    return new Promise((resolve) => {
      this.run({ onProgress: () => resolve(undefined) }).then(
        () => resolve(undefined),
        (error: unknown) => {
          const cause = (error as { cause?: unknown }).cause;
          if (cause instanceof RebuildRunningError) return resolve(cause.generation);
          report(error);
          resolve(undefined);
        },
      );
    });
  }

  status(): ReindexStatus {
    return {
      state: this.#running ? "running" : "idle",
      progress: this.#progress,
      started_at: this.#startedAt,
      last: this.#last,
    };
  }
}

/**
 * Rebuilds the search index of a Vellum instance (what `vellum reindex` runs). The instance must
 * be ready and include the search and articles plugins. Search keeps answering from the old index
 * and article writes keep flowing into both until the new index replaces the old one atomically.
 */
export function reindex(
  vellum: { service(key: "search"): SearchService | undefined },
  options: ReindexOptions = {},
): Promise<ReindexSummary> {
  const service = vellum.service("search");
  if (!service) return Promise.reject(SearchErrors.notInstalled([]));
  return service.reindex(options);
}
