import { sql } from "kysely";
import { PreparedQuery } from "../db/prepared.js";
import type { AnyDb } from "../db/types.js";
import { storageFailure } from "../errors/storage-failure.js";

type DeferSync = <T>(work: (connection: AnyDb) => Promise<T>) => Promise<T>;

/** How long a delivery whose mark failed waits before it is sent again: a held lock passes soon, a full disk not. */
const holdAfter = (error: unknown) => (storageFailure(error)?.kind === "locked" ? 1_000 : 30_000);

interface PendingMark {
  id: string;
  payload: string;
  done: () => void;
  failed: (error: unknown) => void;
}

/**
 * Marks the delivered jobs of an at-least-once queue applied, those that end in the same turn of
 * the event loop together: one transaction and one commit for all of them (which need not wait for
 * the disk: a power loss can only send a delivery again), and a statement compiled once. Each mark
 * and its commit had been a third of the server's CPU per delivery while a backlog drained. A
 * delivery's caller waits for its mark, so the next job of its key still starts only once it is
 * committed.
 */
export class DeliveryMarks {
  readonly #queue: string;
  readonly #deferSync: DeferSync;
  readonly #mark: PreparedQuery;
  #pending: PendingMark[] = [];
  /** Jobs delivered but not marked applied (the mark failed), by id: until when they are not sent again (Unix ms). */
  readonly #held = new Map<string, number>();

  constructor(queue: string, db: AnyDb, deferSync: DeferSync) {
    this.#queue = queue;
    this.#deferSync = deferSync;
    this.#mark = new PreparedQuery(
      sql`UPDATE _vellum_jobs SET status = 'applied', updated_at = ${""}, payload = ${""}
        WHERE queue = ${""} AND status = 'queued' AND id = ${""}`.compile(db),
      4,
    );
  }

  /**
   * Marks job `id` applied, its payload replaced by `payload`; resolves once that is committed.
   * `alone` (no other delivery in flight, so none can join it) commits it without waiting for the
   * turn to end: a receiver's deliveries go one after another, each waiting for the last one's mark.
   */
  mark(id: string, payload: string, alone = false): Promise<void> {
    return new Promise((done, failed) => {
      if (this.#pending.push({ id, payload, done, failed }) > 1) return;
      if (alone) void this.#flush();
      else setImmediate(() => void this.#flush());
    });
  }

  /**
   * Whether job `id` was delivered but could not be marked applied (a full disk, say) a moment
   * ago. It stays queued and goes out again, but not at once: sent again on every look, the same
   * event would reach its receiver as fast as it answers for as long as the disk stayed full.
   */
  held(id: string, now = Date.now()): boolean {
    const until = this.#held.get(id);
    if (until === undefined) return false;
    if (until > now) return true;
    this.#held.delete(id);
    return false;
  }

  async #flush(): Promise<void> {
    const marks = this.#pending;
    this.#pending = [];
    const at = new Date().toISOString();
    try {
      await this.#deferSync((connection) =>
        connection.transaction().execute(async (trx) => {
          for (const { id, payload } of marks) await this.#mark.run(trx, [at, payload, this.#queue, id]);
        }),
      );
    } catch (error) {
      const until = Date.now() + holdAfter(error);
      for (const mark of marks) {
        this.#held.set(mark.id, until);
        mark.failed(error);
      }
      return;
    }
    for (const mark of marks) mark.done();
  }
}
