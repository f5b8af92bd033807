import type { ArticleRecord, JobRecord, OperationContext, VellumPluginContext, Write } from "@vellum/core";
import { changeTags } from "./cache-tags.js";
import { type ClaimDeps, releaseDeadClaim } from "./claims.js";
import { ArticleErrors } from "./errors.js";
import { CREATE_JOB } from "./intake.js";
import type { ArticlesDb, ArticlesTables } from "./tables.js";
import type { ArticleInput, ArticlePatch } from "./validation.js";

type ArticleWrite = Write<ArticlesDb>;

export interface ApplierOptions extends ClaimDeps {
  write: VellumPluginContext<object, ArticlesTables>["write"];
  /** Called after commit with the seconds between a create's 202 and its being applied. */
  onApplied(lagSeconds: number): void;
}

/** An ISO timestamp after `previous`, so an update always moves `updated_at` forward. */
function nextTimestamp(previous: string): string {
  return new Date(Math.max(Date.now(), Date.parse(previous) + 1)).toISOString();
}

function sameTags(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((tag, i) => tag === b[i]);
}

/**
 * Applies changes to articles, each as one write of the kernel's write primitive: the change and
 * `article:commit` in one transaction (search and other subscribers run in savepoints and degrade
 * themselves if they fail), `article:after*` once it committed. Queued creates arrive from the
 * queue worker; updates and deletes are applied at once, after the still-queued create of their
 * slug, if any, so an acknowledged slug never answers 404.
 */
export class ArticleApplier {
  readonly #deps: ClaimDeps;
  readonly #write: ApplierOptions["write"];
  readonly #onApplied: ApplierOptions["onApplied"];

  constructor(options: ApplierOptions) {
    this.#deps = options;
    this.#write = options.write;
    this.#onApplied = options.onApplied;
  }

  /**
   * The queue handler: creates the article of a queued create inside the worker's write. The slug
   * claim is the create's token: if it is gone, the create was already applied and this does nothing.
   */
  async applyQueued(job: JobRecord, w: ArticleWrite): Promise<void> {
    if (job.type !== CREATE_JOB) throw new Error(`unknown job type '${job.type}' on the articles queue`);
    const input = job.payload as ArticleInput;
    const article: ArticleRecord = {
      id: job.id,
      title: input.title,
      slug: input.slug,
      content: input.content,
      tags: input.tags,
      created_at: job.created_at,
      updated_at: job.created_at,
    };
    if (!(await this.#deps.store.insertClaimed(w.trx, article))) return;
    const context: OperationContext = { jobId: job.id };
    const cacheTags = changeTags(article);
    await w.commit("article:commit", { op: "create", article, cacheTags, context });
    w.afterCommit(() => this.#onApplied((Date.now() - Date.parse(job.created_at)) / 1000));
    w.after("article:afterCreate", { article, cacheTags, context });
  }

  /**
   * Applies the still-queued create of `slug` now, if there is one that has not failed. A read
   * passes `untriedOnly`: a create that failed once waits for the worker's backoff, so anonymous
   * reads cannot retry a failing job at request rate.
   */
  async ensureApplied(slug: string, untriedOnly = false): Promise<void> {
    const claim = await this.#deps.store.claimBySlug(this.#deps.db, slug);
    if (!claim) return;
    if (untriedOnly && ((await this.#deps.queue.get(claim.id))?.attempts ?? 0) > 0) return;
    await this.#deps.queue.applyNow(claim.id);
  }

  /** Partial update with optional rename; returns the article as it is after the update. */
  async update(slug: string, patch: ArticlePatch, context: OperationContext): Promise<ArticleRecord> {
    await this.ensureApplied(slug);
    if (patch.slug !== undefined && patch.slug !== slug) {
      const claim = await this.#deps.store.claimBySlug(this.#deps.db, patch.slug);
      if (claim) await releaseDeadClaim(this.#deps, claim.id);
    }
    return this.#write(async (w) => {
      const { store } = this.#deps;
      const previous = await store.bySlug(w.trx, slug);
      if (!previous) throw ArticleErrors.notFound();
      const next: ArticleRecord = { ...previous, ...patch };
      if (
        next.title === previous.title &&
        next.slug === previous.slug &&
        next.content === previous.content &&
        sameTags(next.tags, previous.tags)
      ) {
        return previous;
      }
      if (next.slug !== previous.slug && (await store.slugHolder(w.trx, next.slug))) {
        throw ArticleErrors.slugConflict(next.slug);
      }
      next.updated_at = nextTimestamp(previous.updated_at);
      await store.update(w.trx, next);
      const cacheTags = changeTags(next, previous);
      await w.commit("article:commit", { op: "update", article: next, previous, cacheTags, context });
      w.after("article:afterUpdate", { article: next, previous, cacheTags, context });
      return next;
    });
  }

  async remove(slug: string, context: OperationContext): Promise<void> {
    await this.ensureApplied(slug);
    await this.#write(async (w) => {
      const previous = await this.#deps.store.bySlug(w.trx, slug);
      if (!previous) throw ArticleErrors.notFound();
      await this.#deps.store.delete(w.trx, previous.id);
      const cacheTags = changeTags(previous);
      await w.commit("article:commit", { op: "delete", article: previous, cacheTags, context });
      w.after("article:afterDelete", { article: previous, cacheTags, context });
    });
  }
}
