import { deleteInChunks, type KernelTables, PreparedInsert, PreparedQuery, type PluginQueue, sql } from "@vellum/core";
import type { WebhookEvent } from "./events.js";
import type { Receiver } from "./receivers.js";
import type { WebhooksDb, WebhooksTables } from "./tables.js";

type Schema = WebhooksTables & KernelTables;

/** Event bodies deleted per statement when pruning. */
const PRUNE_CHUNK = 1_000;

/** A delivery job's payload: the event it sends (its body is in `webhook_events`). */
export interface DeliveryPayload {
  event: string;
}

/**
 * The outbox: an event's body written once, and one delivery per receiver, in the transaction of
 * the change that caused it (a batch's events together, two statements for all of them); the
 * bodies of events whose deliveries are all done are pruned.
 */
export class Outbox {
  readonly #queue: PluginQueue<Schema>;
  readonly #receivers: readonly Receiver[];
  readonly #insertEvents: PreparedInsert;
  readonly #body: PreparedQuery<{ body: string }>;
  readonly #pruneChunk: PreparedQuery;

  constructor(db: WebhooksDb, queue: PluginQueue<Schema>, receivers: readonly Receiver[]) {
    this.#queue = queue;
    this.#receivers = receivers;
    // Compiled once: these run for every change and every delivery.
    this.#insertEvents = new PreparedInsert(db, "webhook_events", ["id", "type", "body", "created_at"]);
    this.#body = new PreparedQuery(db.selectFrom("webhook_events").select("body").where("id", "=", "").compile(), 1);
    this.#pruneChunk = new PreparedQuery(
      sql`DELETE FROM webhook_events WHERE id IN (
        SELECT id FROM webhook_events INDEXED BY webhook_events_created_at
        WHERE created_at < ${""} AND id NOT IN (
          SELECT json_extract(payload, '$.event') FROM _vellum_jobs
          WHERE queue = ${""} AND status IN ('queued', 'failed') AND json_extract(payload, '$.event') IS NOT NULL)
        ORDER BY created_at LIMIT ${0})`.compile(db),
      3,
    );
  }

  /**
   * Writes `events` and their deliveries through `trx`: they exist only if the changes commit.
   * The deliveries' ids follow the events' order, so each receiver gets them in commit order.
   */
  async write(trx: WebhooksDb, events: readonly WebhookEvent[]): Promise<void> {
    await this.#insertEvents.run(
      trx,
      events.map((event) => [event.id, event.type, event.body, event.createdAt]),
    );
    const deliveries = events.flatMap((event) => {
      const payload: DeliveryPayload = { event: event.id };
      return this.#receivers.map((receiver) => ({ type: event.type, payload, key: receiver.url }));
    });
    await this.#queue.enqueueMany(trx, deliveries);
  }

  /** The body of event `id`, or undefined when it was pruned. */
  async body(db: WebhooksDb, id: string): Promise<string | undefined> {
    return (await this.#body.rows(db, [id]))[0]?.body;
  }

  /**
   * Removes the bodies of events older than `olderThanMs` that no delivery still waits for or
   * holds in the dead-letter queue (those may be replayed at any time), oldest first and
   * `PRUNE_CHUNK` at a time with the event loop free between (`deleteInChunks`); returns how many.
   */
  async prune(db: WebhooksDb, olderThanMs: number): Promise<number> {
    const cutoff = new Date(Date.now() - olderThanMs).toISOString();
    return deleteInChunks(db, this.#pruneChunk, [cutoff, this.#queue.name], PRUNE_CHUNK);
  }
}
