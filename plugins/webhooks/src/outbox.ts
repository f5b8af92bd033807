import { deleteInChunks, type KernelTables, PreparedInsert, PreparedQuery, type PluginQueue, sql } from "@vellum/core";
import type { WebhookEvent } from "./events.js";
import type { Receiver } from "./receivers.js";
import type { WebhooksDb, WebhooksTables } from "./tables.js";

type Schema = WebhooksTables & KernelTables;

/** Event bodies deleted per statement when pruning. */
const PRUNE_CHUNK = 1_000;

/**
 * The one key of the fan-out queue: its jobs go in id order, so each receiver's deliveries are
 * enqueued in commit order even when a fan-out has to be retried.
 */
export const FANOUT_KEY = "events";

/** A delivery job's payload: the event it sends (its body is in `webhook_events`). */
export interface DeliveryPayload {
  event: string;
}

/** A fan-out job's payload: the events one transaction committed, in its order. */
export interface FanOutPayload {
  events: { id: string; type: string }[];
}

export interface OutboxQueues {
  /** One job per event and receiver, sent at least once. */
  deliveries: PluginQueue<Schema>;
  /** One job per transaction that wrote events; it enqueues their deliveries. */
  fanout: PluginQueue<Schema>;
}

/**
 * The outbox. A transaction that commits changes writes their events (each body once) and one
 * fan-out job, two statements whatever the number of receivers; the fan-out, background work that
 * yields to queued writes, then turns the events into one delivery per receiver in a transaction of
 * its own. Both steps are durable, so a committed event is never lost and a rolled-back one never
 * exists. The bodies of events whose deliveries are all done are pruned.
 */
export class Outbox {
  readonly #queues: OutboxQueues;
  readonly #receivers: readonly Receiver[];
  readonly #insertEvents: PreparedInsert;
  readonly #body: PreparedQuery<{ body: string }>;
  readonly #pruneChunk: PreparedQuery;

  constructor(db: WebhooksDb, queues: OutboxQueues, receivers: readonly Receiver[]) {
    this.#queues = queues;
    this.#receivers = receivers;
    // Compiled once: these run for every change and every delivery.
    this.#insertEvents = new PreparedInsert(db, "webhook_events", ["id", "type", "body", "created_at"]);
    this.#body = new PreparedQuery(db.selectFrom("webhook_events").select("body").where("id", "=", "").compile(), 1);
    // An event is kept while a delivery of it waits or is dead, or while its fan-out has not run.
    this.#pruneChunk = new PreparedQuery(
      sql`DELETE FROM webhook_events WHERE id IN (
        SELECT id FROM webhook_events INDEXED BY webhook_events_created_at
        WHERE created_at < ${""} AND id NOT IN (
          SELECT json_extract(payload, '$.event') FROM _vellum_jobs
          WHERE queue = ${""} AND status IN ('queued', 'failed') AND json_extract(payload, '$.event') IS NOT NULL)
        AND id NOT IN (
          SELECT json_extract(fanned.value, '$.id') FROM _vellum_jobs, json_each(_vellum_jobs.payload, '$.events') AS fanned
          WHERE queue = ${""} AND status IN ('queued', 'failed'))
        ORDER BY created_at LIMIT ${0})`.compile(db),
      4,
    );
  }

  /** Writes `events` and their fan-out through `trx`: they exist only if the changes commit. */
  async write(trx: WebhooksDb, events: readonly WebhookEvent[]): Promise<void> {
    await this.#insertEvents.run(
      trx,
      events.map((event) => [event.id, event.type, event.body, event.createdAt]),
    );
    const payload: FanOutPayload = { events: events.map((event) => ({ id: event.id, type: event.type })) };
    await this.#queues.fanout.enqueue(trx, "fan-out", payload, { key: FANOUT_KEY });
  }

  /**
   * The fan-out job's work, in its transaction: one delivery per event and receiver configured
   * now, in the events' order, so each receiver gets them in commit order.
   */
  async fanOut(trx: WebhooksDb, payload: FanOutPayload): Promise<void> {
    if (this.#receivers.length === 0) return;
    const deliveries = payload.events.flatMap((event) => {
      const delivery: DeliveryPayload = { event: event.id };
      return this.#receivers.map((receiver) => ({ type: event.type, payload: delivery, key: receiver.url }));
    });
    await this.#queues.deliveries.enqueueMany(trx, deliveries);
  }

  /** The body of event `id`, or undefined when it was pruned. */
  async body(db: WebhooksDb, id: string): Promise<string | undefined> {
    return (await this.#body.rows(db, [id]))[0]?.body;
  }

  /**
   * Removes the bodies of events older than `olderThanMs` that no delivery still waits for or
   * holds in the dead-letter queue (those may be replayed at any time), and that no fan-out still
   * has to enqueue, oldest first and `PRUNE_CHUNK` at a time with the event loop free between
   * (`deleteInChunks`); returns how many.
   */
  async prune(db: WebhooksDb, olderThanMs: number): Promise<number> {
    const cutoff = new Date(Date.now() - olderThanMs).toISOString();
    const { deliveries, fanout } = this.#queues;
    return deleteInChunks(db, this.#pruneChunk, [cutoff, deliveries.name, fanout.name], PRUNE_CHUNK);
  }
}
