import type { HealthComponent, KeyStats } from "@vellum/core";
import type { Receiver } from "./receivers.js";

export interface ReceiverStates {
  receivers: readonly Receiver[];
  /** Per receiver URL: jobs waiting, retrying and dead. */
  keyStats(): Promise<KeyStats[]>;
  /** Per receiver URL: the last 2xx answer. */
  lastSuccess: ReadonlyMap<string, Date>;
  /** The fan-out's jobs (one per transaction that wrote events) waiting, and dead. */
  fanOutStats(): Promise<KeyStats[]>;
}

/**
 * `webhooks` in `/health`, `/health/webhooks` and `/health/dependencies`: each receiver, by host
 * only, with its state (`ok`, `retrying` while its oldest event waits for a retry, `dead_letters`
 * while some of its events are dead-lettered), its counts and its last success. Degraded while any
 * receiver has dead letters: events it should have had are not coming without a replay. `fan_out`
 * counts the committed transactions whose events are not yet deliveries (`waiting`; they grow
 * during a burst of writes and drain after it) and those whose fan-out failed for good (`dead`,
 * which also degrades: no receiver gets their events without a replay).
 */
export function webhooksComponent(states: ReceiverStates): HealthComponent {
  return {
    name: "webhooks",
    async check() {
      const stats = new Map((await states.keyStats()).map((row) => [row.key, row]));
      const receivers = states.receivers.map((receiver) => {
        const row = stats.get(receiver.url);
        const dead = row?.failed ?? 0;
        const retrying = row?.retrying ?? 0;
        return {
          name: receiver.name,
          state: dead > 0 ? "dead_letters" : retrying > 0 ? "retrying" : "ok",
          pending: row?.queued ?? 0,
          retrying,
          dead_letters: dead,
          last_success_at: states.lastSuccess.get(receiver.url)?.toISOString() ?? null,
        };
      });
      const fanOut = (await states.fanOutStats()).reduce(
        (sum, row) => ({ waiting: sum.waiting + row.queued, dead: sum.dead + row.failed }),
        { waiting: 0, dead: 0 },
      );
      const degraded = fanOut.dead > 0 || receivers.some((receiver) => receiver.state === "dead_letters");
      return {
        state: degraded ? "degraded" : "ok",
        detail: { enabled: receivers.length > 0, receivers, fan_out: fanOut },
      };
    },
  };
}
