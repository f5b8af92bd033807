import type { AfterCommit, ArticleRecord, JobRecord, OperationContext, VellumPluginContext } from "@vellum/core";
import { type ClaimDeps, releaseDeadClaim } from "./claims.js";
import { ArticleErrors } from "./errors.js";
import type { Db, Trx } from "./store.js";
import type { ArticleInput, ArticlePatch } from "./validation.js";
import { CREATE_JOB } from "./writer.js";

export interface ApplierOptions extends ClaimDeps {
  hooks: VellumPluginContext["hooks"];
  /** Called after commit with the seconds between a create's 202 and its being applied. */
  onApplied(lagSeconds: number): void;
}

const noop: AfterCommit = () => undefined;

/** An ISO timestamp after `previous`, so an update always moves `updated_at` forward. */
function nextTimestamp(previous: string): string {
  return new Date(Math.max(Date.now(), Date.parse(previous) + 1)).toISOString();
}

function sameTags(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((tag, i) => tag === b[i]);
}

/**
 * Applies changes to articles: each runs in one transaction that also fires `article:commit`
 * (a throwing subscriber rolls the change back), and `article:after*` fires after the commit.
 * Queued creates arrive from the queue worker; updates and deletes are applied at once, after
 * the still-queued create of their slug, if any, so an acknowledged slug never answers 404.
 */
export class ArticleApplier {
  readonly #deps: ClaimDeps;
  readonly #db: Db;
  readonly #hooks: ApplierOptions["hooks"];
  readonly #onApplied: ApplierOptions["onApplied"];

  constructor(options: ApplierOptions) {
    this.#deps = options;
    this.#db = options.db;
    this.#hooks = options.hooks;
    this.#onApplied = options.onApplied;
  }

  /**
   * The queue handler: creates the article of a queued create inside the worker's transaction.
   * The slug claim is the create's token: if it is gone, the create was already applied (ahead
   * of the queue, by an update or delete of its slug) and this does nothing.
   */
  async applyQueued(job: JobRecord, trx: Trx): Promise<AfterCommit> {
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
    if (!(await this.#deps.store.insertClaimed(trx, article))) return noop;
    const context: OperationContext = { jobId: job.id };
    await this.#hooks.callHook("article:commit", { op: "create", article, trx, context });
    return async () => {
      this.#onApplied((Date.now() - Date.parse(job.created_at)) / 1000);
      await this.#hooks.callHook("article:afterCreate", { article, context });
    };
  }

  /** Applies the still-queued create of `slug` now, if there is one that has not failed. */
  async ensureApplied(slug: string): Promise<void> {
    const claim = await this.#deps.store.claimBySlug(this.#db, slug);
    if (!claim) return;
    const job = await this.#deps.queue.get(claim.id);
    if (job?.status !== "queued") return;
    const after = await this.#db.transaction().execute((trx) => this.applyQueued(job, trx));
    await after();
  }

  /** Partial update with optional rename; returns the article as it is after the update. */
  async update(slug: string, patch: ArticlePatch, context: OperationContext): Promise<ArticleRecord> {
    await this.ensureApplied(slug);
    if (patch.slug !== undefined && patch.slug !== slug) {
      const claim = await this.#deps.store.claimBySlug(this.#db, patch.slug);
      if (claim) await releaseDeadClaim(this.#deps, claim.id);
    }
    const change = await this.#db.transaction().execute(async (trx) => {
      const previous = await this.#deps.store.bySlug(trx, slug);
      if (!previous) throw ArticleErrors.notFound();
      const next: ArticleRecord = { ...previous, ...patch };
      if (
        next.title === previous.title &&
        next.slug === previous.slug &&
        next.content === previous.content &&
        sameTags(next.tags, previous.tags)
      ) {
        return { previous, next: previous, changed: false };
      }
      if (next.slug !== previous.slug && (await this.#deps.store.slugHolder(trx, next.slug))) {
        throw ArticleErrors.slugConflict(next.slug);
      }
      next.updated_at = nextTimestamp(previous.updated_at);
      await this.#deps.store.update(trx, next);
      await this.#hooks.callHook("article:commit", { op: "update", article: next, previous, trx, context });
      return { previous, next, changed: true };
    });
    if (change.changed) {
      await this.#hooks.callHook("article:afterUpdate", { article: change.next, previous: change.previous, context });
    }
    return change.next;
  }

  async remove(slug: string, context: OperationContext): Promise<void> {
    await this.ensureApplied(slug);
    const article = await this.#db.transaction().execute(async (trx) => {
      const previous = await this.#deps.store.bySlug(trx, slug);
      if (!previous) throw ArticleErrors.notFound();
      await this.#deps.store.delete(trx, previous.id);
      await this.#hooks.callHook("article:commit", { op: "delete", article: previous, trx, context });
      return previous;
    });
    await this.#hooks.callHook("article:afterDelete", { article, context });
  }
}
