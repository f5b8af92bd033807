import type { PluginQueue, VellumPluginContext } from "@vellum/core";
import { type ClaimDeps, releaseDeadClaim } from "./claims.js";
import { ArticleErrors } from "./errors.js";
import type { ArticlesDb, ArticlesTables, Db } from "./tables.js";
import type { ArticleInput } from "./validation.js";

/** Job type of a queued create on the articles queue. */
export const CREATE_JOB = "article.create";

/** Most creates committed by one enqueue transaction, and most content bytes. */
const MAX_BATCH = 256;
const MAX_BATCH_BYTES = 16 * 1024 * 1024;

type Outcome = { queued: true; id: string } | { queued: false; claimedBy?: string };

interface Waiting {
  input: ArticleInput;
  resolve(outcome: Outcome): void;
  reject(error: unknown): void;
}

/**
 * Takes creates in, with group commit: every create that arrives while the previous enqueue
 * transaction is being committed waits for the next one, so under load many requests share one
 * fsync. Each create is checked against existing and claimed slugs inside that transaction (one
 * write of the kernel's write primitive), enqueued (keyed by its slug, so the queue keeps order
 * per slug), and claims its slug; its promise resolves only after the commit, so a 202 is never
 * sent for a write that is not durable.
 */
export class CreateIntake {
  readonly #deps: ClaimDeps;
  readonly #write: VellumPluginContext<object, ArticlesTables>["write"];
  readonly #queue: PluginQueue<ArticlesDb>;
  #waiting: Waiting[] = [];
  #flushing = false;

  constructor(deps: ClaimDeps, write: VellumPluginContext<object, ArticlesTables>["write"]) {
    this.#deps = deps;
    this.#write = write;
    this.#queue = deps.queue;
  }

  /** Queues the create durably and returns its id (also the job id); 409 when the slug is taken. */
  async create(input: ArticleInput): Promise<string> {
    let outcome = await this.#submit(input);
    if (!outcome.queued && outcome.claimedBy && (await releaseDeadClaim(this.#deps, outcome.claimedBy))) {
      outcome = await this.#submit(input);
    }
    if (!outcome.queued) throw ArticleErrors.slugConflict(input.slug);
    return outcome.id;
  }

  #submit(input: ArticleInput): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      this.#waiting.push({ input, resolve, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        setImmediate(() => void this.#drain());
      }
    });
  }

  async #drain(): Promise<void> {
    while (this.#waiting.length > 0) {
      const batch = this.#takeBatch();
      try {
        const outcomes = await this.#write(async (w) => {
          const results: Outcome[] = [];
          for (const { input } of batch) results.push(await this.#enqueue(w.trx, input));
          return results;
        });
        for (const [i, waiting] of batch.entries()) waiting.resolve(outcomes[i] as Outcome);
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
    this.#flushing = false;
  }

  #takeBatch(): Waiting[] {
    let bytes = 0;
    let count = 0;
    while (count < this.#waiting.length && count < MAX_BATCH && (count === 0 || bytes < MAX_BATCH_BYTES)) {
      bytes += (this.#waiting[count] as Waiting).input.content.length;
      count++;
    }
    return this.#waiting.splice(0, count);
  }

  async #enqueue(trx: Db, input: ArticleInput): Promise<Outcome> {
    const holder = await this.#deps.store.slugHolder(trx, input.slug);
    if (holder) return holder.queued ? { queued: false, claimedBy: holder.id } : { queued: false };
    const job = await this.#queue.enqueue(trx, CREATE_JOB, input, { key: input.slug });
    await this.#deps.store.claim(trx, job.id, input.slug);
    return { queued: true, id: job.id };
  }
}
