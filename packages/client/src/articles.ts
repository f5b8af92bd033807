import type { JobsApi, WaitOptions } from "./jobs.js";
import type { RequestOptions } from "./options.js";
import type { Transport } from "./transport.js";
import type { Article, ArticleInput, ArticlePage, ArticlePatch, ArticleSummary, QueuedArticle } from "./types.js";
import { segment } from "./url.js";

const ARTICLES = "/api/v1/articles";

export interface ListOptions extends RequestOptions {
  /** Only articles with this exact tag. */
  tag?: string;
  /** Articles per page, 1–100 (the service's default is 20). */
  limit?: number;
  /** Start after this `next_cursor` of an earlier page. */
  cursor?: string;
}

/**
 * What `create` returns: awaited, the `202` (`{id, status: "queued", location}`); `.applied()` waits until the
 * worker has written the article and resolves with it.
 */
export interface QueuedCreate extends Promise<QueuedArticle> {
  applied(options?: WaitOptions): Promise<Article>;
}

/** `/api/v1/articles`: reads need nothing, writes the API key and the CSRF token (sent by the client). */
export class ArticlesApi {
  readonly #transport: Transport;
  readonly #jobs: JobsApi;

  constructor(transport: Transport, jobs: JobsApi) {
    this.#transport = transport;
    this.#jobs = jobs;
  }

  /** One page, newest first. */
  async page(options: ListOptions = {}): Promise<ArticlePage> {
    const { tag, limit, cursor, signal } = options;
    return this.#transport.json<ArticlePage>({ method: "GET", path: ARTICLES, query: { tag, limit, cursor }, signal });
  }

  /** Every article from `cursor` on (or from the newest), newest first, fetching a page at a time as you iterate. */
  async *list(options: ListOptions = {}): AsyncGenerator<ArticleSummary, void, undefined> {
    let cursor = options.cursor;
    do {
      const page = await this.page({ ...options, cursor });
      yield* page.articles;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }

  async get(slug: string, options: RequestOptions = {}): Promise<Article> {
    return this.#transport.json<Article>({
      method: "GET",
      path: `${ARTICLES}/${segment(slug)}`,
      signal: options.signal,
    });
  }

  /** Queues a create: validation errors (400, 409) are thrown here, before anything is queued. */
  create(input: ArticleInput, options: RequestOptions = {}): QueuedCreate {
    const accepted = this.#post(input, options);
    const applied = (wait: WaitOptions = {}) =>
      accepted.then(async ({ id }) => {
        await this.#jobs.wait(id, wait);
        return this.get(input.slug, { signal: wait.signal });
      });
    return Object.assign(accepted, { applied });
  }

  /** Partial update, applied at once; a different `slug` renames. Resolves with the updated article. */
  async update(slug: string, patch: ArticlePatch, options: RequestOptions = {}): Promise<Article> {
    const path = `${ARTICLES}/${segment(slug)}`;
    return this.#transport.json<Article>({ method: "PUT", path, json: patch, write: true, signal: options.signal });
  }

  async delete(slug: string, options: RequestOptions = {}): Promise<void> {
    const path = `${ARTICLES}/${segment(slug)}`;
    await this.#transport.send({ method: "DELETE", path, write: true, signal: options.signal });
  }

  async #post(input: ArticleInput, options: RequestOptions): Promise<QueuedArticle> {
    const { response, body } = await this.#transport.send({
      method: "POST",
      path: ARTICLES,
      json: input,
      write: true,
      signal: options.signal,
    });
    const { id } = body as { id: string };
    return { id, status: "queued", location: response.headers.get("location") };
  }
}
