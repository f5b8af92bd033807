import { type JobQueue, json, type PluginRouter, pathParam } from "@vellum/core";
import { ArticleErrors } from "../errors.js";
import type { ArticleStore, Db } from "../store.js";
import { ULID_PATTERN } from "../validation.js";

export interface JobRouteDeps {
  prefix: string;
  db: Db;
  store: ArticleStore;
  queue: JobQueue;
  queueName: string;
}

interface JobStatusBody {
  id: string;
  status: "queued" | "applied" | "failed";
  error?: string;
}

/**
 * `GET <prefix>/:id`: the outcome of a queued create, by the id of its 202. `queued` while it
 * waits (with `error` while it is being retried), `applied` once the article was written (also
 * when an update or delete of its slug applied it ahead of the queue, and after the kernel pruned
 * the job), `failed` with `error` once it is in the dead-letter queue.
 */
export function registerJobRoutes(router: PluginRouter, deps: JobRouteDeps): void {
  const { prefix, db, store, queue, queueName } = deps;

  async function status(id: string): Promise<JobStatusBody> {
    const job = ULID_PATTERN.test(id) ? await queue.get(id) : undefined;
    if (!job || job.queue !== queueName) {
      if (!job && ULID_PATTERN.test(id) && (await store.byId(db, id))) return { id, status: "applied" };
      throw ArticleErrors.jobNotFound();
    }
    if (job.status === "queued" && !(await store.hasClaim(db, id))) return { id, status: "applied" };
    const body: JobStatusBody = { id, status: job.status };
    if (job.status !== "applied" && job.last_error) body.error = job.last_error;
    return body;
  }

  router.get(`${prefix}/:id`, async (event) => json(await status(pathParam(event, "id"))));
}
