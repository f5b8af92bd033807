import { type KernelTables, PreparedQuery, type PluginQueue, sql, type Transaction } from "@vellum/core";
import type { WebhookEvent } from "./events.js";
import type { Receiver } from "./receivers.js";
import type { WebhooksDb, WebhooksTables } from "./tables.js";

type Schema = WebhooksTables & KernelTables;

/** A delivery job's payload: the event it sends (its body is in `webhook_events`). */
export interface DeliveryPayload {
  event: string;
}

/**
 * The outbox: an event's body written once, and one delivery per receiver, in the transaction of
 * the change that caused it; the bodies of events whose deliveries are all done are pruned.
 */
export class Outbox {
  readonly #queue: PluginQueue<Schema>;
  readonly #receivers: readonly Receiver[];
  readonly #insertEvent: PreparedQuery;
  readonly #body: PreparedQuery<{ body: string }>;

  constructor(db: WebhooksDb, queue: PluginQueue<Schema>, receivers: readonly Receiver[]) {
    this.#queue = queue;
    this.#receivers = receivers;
    // Compiled once: these run for every change and every delivery.
    this.#insertEvent = new PreparedQuery(
      db.insertInto("webhook_events").values({ id: "", type: "", body: "", created_at: "" }).compile(),
      4,
    );
    this.#body = new PreparedQuery(db.selectFrom("webhook_events").select("body").where("id", "=", "").compile(), 1);
  }

  /** Writes `event` and its deliveries through `trx`: they exist only if the change commits. */
  async write(trx: Transaction<Schema>, event: WebhookEvent): Promise<void> {
    await this.#insertEvent.run(trx, [event.id, event.type, event.body, event.createdAt]);
    const payload: DeliveryPayload = { event: event.id };
    for (const receiver of this.#receivers) {
      await this.#queue.enqueue(trx, event.type, payload, { key: receiver.url });
    }
  }

  /** The body of event `id`, or undefined when it was pruned. */
  async body(db: WebhooksDb, id: string): Promise<string | undefined> {
    return (await this.#body.rows(db, [id]))[0]?.body;
  }

  /**
   * Removes the bodies of events older than `olderThanMs` that no delivery still waits for or
   * holds in the dead-letter queue (those may be replayed at any time); returns how many.
   */
  async prune(db: WebhooksDb, olderThanMs: number): Promise<number> {
    const cutoff = new Date(Date.now() - olderThanMs).toISOString();
    const result = await db
      .deleteFrom("webhook_events")
      .where("created_at", "<", cutoff)
      .where(
        "id",
        "not in",
        db
          .selectFrom("_vellum_jobs")
          .select(sql<string>`json_extract(payload, '$.event')`.as("event"))
          .where("queue", "=", this.#queue.name)
          .where("status", "in", ["queued", "failed"])
          .where(sql`json_extract(payload, '$.event')`, "is not", null),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
