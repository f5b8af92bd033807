import type { Kysely, Transaction } from "kysely";
import type { AnyDb } from "../db/types.js";
import type { JobQueue } from "./job-queue.js";
import type {
  DeliveryHandler,
  JobFilter,
  JobRecord,
  KeyStats,
  NewJob,
  ProcessOptions,
  TransactionalHandler,
} from "./types.js";

/** One durable job queue of a plugin (`ctx.queue()`, `ctx.queue("mail")`). */
export interface PluginQueue<DB> {
  /** The queue's name in the job table: the plugin's name, or `<plugin>:<name>`. */
  readonly name: string;
  /**
   * Inserts a job through `executor`; inside the caller's transaction it exists only if that
   * commits. Jobs with the same `key` are applied in id order, and a failing one delays only them.
   */
  enqueue(
    executor: Kysely<DB> | Transaction<DB>,
    type: string,
    payload: unknown,
    options?: { key?: string },
  ): Promise<JobRecord>;
  /** Inserts `jobs` in one statement, with ids in their order (so applied in it per key), as `enqueue` does one. */
  enqueueMany(executor: Kysely<DB> | Transaction<DB>, jobs: readonly NewJob[]): Promise<JobRecord[]>;
  /** Registers the queue's one handler: transactional (a write of this plugin) by default. */
  process(handler: TransactionalHandler<DB>, options?: ProcessOptions & { mode?: "transactional" }): void;
  process(handler: DeliveryHandler, options: ProcessOptions & { mode: "at-least-once" }): void;
  /** Jobs of this queue waiting to be applied (retries included). */
  depth(): Promise<number>;
  /** A job of this queue, or undefined. */
  get(id: string): Promise<JobRecord | undefined>;
  /** Transactional queues: applies queued job `id` now, as one write, ahead of the worker; false when it is not queued. */
  applyNow(id: string): Promise<boolean>;
  /** Moves this queue's dead-letter jobs (or only those of `filter`'s ids or key) back to queued; returns how many. */
  replay(filter?: Omit<JobFilter, "status">): Promise<number>;
  /** The newest jobs that match `filter`, id descending: at most `limit`, older than job `before` if given. */
  list(filter: JobFilter & { before?: string; limit: number }): Promise<JobRecord[]>;
  /** Per key: jobs waiting, retrying and dead (keys with none are left out). */
  keyStats(): Promise<KeyStats[]>;
}

export function createPluginQueue<DB>(queue: JobQueue, plugin: string, name?: string): PluginQueue<DB> {
  const queueName = name === undefined || name === plugin ? plugin : `${plugin}:${name}`;
  return {
    name: queueName,
    enqueue: (executor, type, payload, options) =>
      queue.enqueue(executor as unknown as AnyDb, queueName, type, payload, options?.key ?? null),
    enqueueMany: (executor, jobs) => queue.enqueueMany(executor as unknown as AnyDb, queueName, jobs),
    process: (handler: TransactionalHandler<DB> | DeliveryHandler, options?: ProcessOptions) =>
      queue.process(plugin, queueName, handler as unknown as TransactionalHandler<never>, options),
    async get(id) {
      const job = await queue.get(id);
      return job?.queue === queueName ? job : undefined;
    },
    applyNow: (id) => queue.applyNow(queueName, id),
    depth: () => queue.depth(queueName),
    replay: (filter) => queue.replay(queueName, filter),
    list: (filter) => queue.list(queueName, filter),
    keyStats: () => queue.keyStats(queueName),
  };
}
