import { ArticlesApi } from "./articles.js";
import { CacheApi } from "./cache.js";
import type { CsrfTokens } from "./csrf.js";
import { JobsApi } from "./jobs.js";
import { MediaApi } from "./media.js";
import type { ClientOptions, RequestOptions } from "./options.js";
import { Transport } from "./transport.js";
import type { Health, SearchResults } from "./types.js";

export interface SearchOptions extends RequestOptions {
  /** 1–256 characters. */
  q: string;
  /** 1–100 (default 20). */
  limit?: number;
  /** 0–10 000 (default 0). */
  offset?: number;
}

/** A client of one Vellum instance. Methods throw `VellumApiError`, `VellumNetworkError`, or a signal's reason. */
export class VellumClient {
  readonly articles: ArticlesApi;
  readonly jobs: JobsApi;
  readonly media: MediaApi;
  readonly cache: CacheApi;
  /** The CSRF token writes carry: `token()` is the kept one (fetched once), `refresh()` asks the service again. */
  readonly csrf: CsrfTokens;
  readonly #transport: Transport;

  constructor(options: ClientOptions) {
    this.#transport = new Transport(options);
    this.csrf = this.#transport.csrf;
    this.jobs = new JobsApi(this.#transport);
    this.articles = new ArticlesApi(this.#transport, this.jobs);
    this.media = new MediaApi(this.#transport);
    this.cache = new CacheApi(this.#transport);
  }

  /** `GET /api/v1/search` (10 a second per client). */
  async search(options: SearchOptions): Promise<SearchResults> {
    const { q, limit, offset, signal } = options;
    return this.#transport.json<SearchResults>({
      method: "GET",
      path: "/api/v1/search",
      query: { q, limit, offset },
      signal,
    });
  }

  /** `GET /health`: `ok`, or `degraded` with every component's state. */
  async health(options: RequestOptions = {}): Promise<Health> {
    return this.#transport.json<Health>({ method: "GET", path: "/health", signal: options.signal });
  }
}

/** A client for the Vellum at `options.baseUrl`. Throws a `TypeError` for a base URL that is not absolute http(s). */
export function createClient(options: ClientOptions): VellumClient {
  return new VellumClient(options);
}
