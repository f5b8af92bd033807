import { collectForCommit, definePlugin } from "@vellum/core";
import { webhooksComponent } from "./component.js";
import { createDispatcher } from "./dispatcher.js";
import { articleEvent, type WebhookEvent } from "./events.js";
import { type FanOutPayload, Outbox } from "./outbox.js";
import { type WebhooksDb, webhooksMigrations, type WebhooksTables } from "./tables.js";
import { createWebhookMetrics } from "./metrics.js";
import { checkWebhooksSettings, WEBHOOKS_SETTINGS, type WebhooksOptions } from "./options.js";
import { createReceivers, findReceiver } from "./receivers.js";
import { webhookBackoff } from "./retry.js";
import { registerAdminRoutes, type ReplayFilter } from "./routes.js";

/** Applied fan-out jobs are of no use to anyone: kept an hour, for `GET /api/v1/jobs/:id` while debugging. */
const FANOUT_RETENTION_MS = 3_600_000;

/**
 * Webhooks (contract §7): each committed article change becomes an event, written in the change's
 * own transaction with a fan-out job (the outbox); the fan-out, on its own background queue, makes
 * one delivery per receiver on the `deliveries` queue. Deliveries are sent signed, at least once,
 * in commit order per receiver, retried on the schedule, and dead-lettered for a replay. Receivers
 * never share the write queue or wait for each other.
 */
export const webhooks = definePlugin<WebhooksOptions, WebhooksTables>({
  name: "webhooks",
  settings: WEBHOOKS_SETTINGS,
  checkSettings: (options) => checkWebhooksSettings(options),
  commands: {
    "webhooks replay": {
      description: "requeue dead-lettered deliveries: all, --id <delivery>, or --receiver <URL or host>",
      options: {
        id: { value: "delivery", description: "only this dead delivery (its id in GET /admin/webhooks/deliveries)" },
        receiver: {
          value: "url|host",
          description: "only this receiver's dead deliveries: its URL in SERVICE_WEBHOOK_URLS, or its host",
        },
      },
    },
  },
  // Only for the order of setup (its `article:commit` is subscribed to when installed): never imported.
  optionalDependsOn: ["articles"],
  setup(ctx) {
    const options = ctx.options;
    ctx.migrations(webhooksMigrations);
    const receivers = createReceivers(options.urls);
    const queue = ctx.queue("deliveries");
    const fanout = ctx.queue("fanout");
    const outbox = new Outbox(ctx.db, { deliveries: queue, fanout }, receivers);
    const lastSuccess = new Map<string, Date>();
    const maxAttempts = options.retrySchedule.length + 1;

    // Registered even without receivers: deliveries left for a removed receiver are then skipped.
    queue.process(
      createDispatcher({
        receivers,
        secret: options.secret ?? "",
        timeoutMs: options.timeoutMs,
        maxAttempts,
        metrics: createWebhookMetrics(ctx.metrics),
        body: (event) => outbox.body(ctx.db, event),
        onDelivered: (receiver, at) => lastSuccess.set(receiver.url, at),
      }),
      {
        mode: "at-least-once",
        concurrency: options.concurrency ?? Math.max(1, receivers.length),
        maxAttempts,
        backoffMs: webhookBackoff(options.retrySchedule),
        retainAppliedMs: options.retentionMs,
      },
    );

    // Background work: during a burst of queued writes it applies one fan-out at most every 250 ms.
    fanout.process((job, w) => outbox.fanOut(w.trx, job.payload as FanOutPayload), {
      background: true,
      batchSize: 1,
      maxAttempts,
      backoffMs: webhookBackoff(options.retrySchedule),
      retainAppliedMs: FANOUT_RETENTION_MS,
    });

    if (receivers.length > 0) {
      // Required: a change whose events cannot be written does not commit (and its write is retried).
      // The events of a transaction (a batch of queued creates) are written together before it commits.
      const writeEvents = (trx: WebhooksDb, events: WebhookEvent[]) => outbox.write(trx, events);
      ctx.hooks.hook(
        "article:commit",
        ({ op, article, trx }) =>
          collectForCommit(trx, "webhooks:outbox", articleEvent(op, article), writeEvents, { required: true }),
        { optional: true, required: true },
      );
    }

    // Event bodies go once no delivery needs them, after the same retention as delivered rows.
    ctx.schedule("prune-events", { everyMs: 3_600_000, jitterMs: 60_000 }, async () => {
      await outbox.prune(ctx.db, options.retentionMs);
    });
    ctx.onReady(async () => {
      for (const receiver of receivers) {
        const [last] = await queue.list({ status: "applied", key: receiver.url, limit: 1 });
        if (last && !lastSuccess.has(receiver.url)) lastSuccess.set(receiver.url, new Date(last.updated_at));
      }
    });
    ctx.onClose(() => {
      for (const receiver of receivers) receiver.agent.destroy();
    });

    // A dead fan-out enqueued nothing: requeued by every replay that does not name one delivery.
    const replay = async (filter: ReplayFilter): Promise<number> => {
      const { id, receiverUrl } = filter;
      const deliveries = await queue.replay({
        ...(id === undefined ? {} : { ids: [id] }),
        ...(receiverUrl === undefined ? {} : { key: receiverUrl }),
      });
      return deliveries + (id === undefined ? await fanout.replay() : 0);
    };
    registerAdminRoutes(ctx.router, { queue, receivers, replay });
    ctx.command("webhooks replay", async (io) => {
      const { id, receiver } = io.options;
      if (typeof id === "boolean" || typeof receiver === "boolean") {
        io.print("webhooks replay: --id and --receiver take a value");
        return 2;
      }
      const target = receiver === undefined ? undefined : findReceiver(receivers, receiver);
      if (receiver !== undefined && !target) {
        io.print(`webhooks replay: no configured receiver is named '${receiver}' (see SERVICE_WEBHOOK_URLS)`);
        return 2;
      }
      const count = await replay({ id, receiverUrl: target?.url });
      io.print(`webhooks replay: ${count} dead deliver${count === 1 ? "y" : "ies"} queued again`);
      return 0;
    });
    ctx.healthComponent(
      webhooksComponent({
        receivers,
        keyStats: () => queue.keyStats(),
        fanOutStats: () => fanout.keyStats(),
        lastSuccess,
      }),
    );
  },
});
