import { definePlugin } from "@vellum/core";
import { createTestVellum, eventLoopTurns, type TestVellum } from "@vellum/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { FANOUT_KEY, type FanOutPayload, Outbox, type OutboxQueues } from "../src/outbox.js";
import { webhooks } from "../src/plugin.js";
import { createReceivers } from "../src/receivers.js";
import type { WebhooksDb, WebhooksTables } from "../src/tables.js";

let t: TestVellum | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** The webhooks plugin (for its table) and a probe that hands out its own queue and database. */
async function setup() {
  let queues: OutboxQueues | undefined;
  let db: WebhooksDb | undefined;
  const probe = definePlugin<object, WebhooksTables>({
    name: "probe",
    setup(ctx) {
      queues = { deliveries: ctx.queue("deliveries"), fanout: ctx.queue("fanout") };
      db = ctx.db;
    },
  })();
  t = await createTestVellum({ plugins: [webhooks(), probe] });
  const receivers = createReceivers(["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"]);
  const outbox = new Outbox(db!, queues!, receivers);
  const events = (ids: string[]) =>
    ids.map((id) => ({
      id,
      type: "article.created" as const,
      body: `{"id":"${id}"}`,
      createdAt: new Date().toISOString(),
    }));
  /** Writes the events `ids` in one transaction, as a batch of queued writes does. */
  const write = Object.assign(
    async (...ids: string[]) => db!.transaction().execute((trx) => outbox.write(trx, events(ids))),
    {
      /** The same in a transaction that then rolls back. */
      thenFail: async (...ids: string[]) =>
        db!.transaction().execute(async (trx) => {
          await outbox.write(trx, events(ids));
          throw new Error("rolled back");
        }),
    },
  );
  /** Runs the fan-out jobs waiting, each in its own transaction, in id order, as the worker does. */
  const fanOut = async () => {
    const jobs = (await queues!.fanout.list({ status: "queued", limit: 100 })).reverse();
    for (const job of jobs) {
      await db!.transaction().execute(async (trx) => {
        await outbox.fanOut(trx, job.payload as FanOutPayload);
        await trx.updateTable("_vellum_jobs").set({ status: "applied" }).where("id", "=", job.id).execute();
      });
    }
  };
  for (const receiver of receivers) receiver.agent.destroy();
  return { db: db!, queue: queues!.deliveries, fanout: queues!.fanout, outbox, write, fanOut };
}

describe("the outbox", () => {
  it("writes the events and one fan-out per transaction, which the fan-out makes into deliveries in commit order", async () => {
    const { db, queue, fanout, write, fanOut } = await setup();
    await write("E1", "E2");
    await expect(write.thenFail("R1")).rejects.toThrow("rolled back");
    await write("E3");
    expect(await db.selectFrom("webhook_events").select("id").orderBy("id").execute()).toHaveLength(3);
    const fanOuts = (await fanout.list({ limit: 10 })).reverse();
    expect(fanOuts.map((job) => [job.key, job.payload])).toEqual([
      [
        FANOUT_KEY,
        {
          events: [
            { id: "E1", type: "article.created" },
            { id: "E2", type: "article.created" },
          ],
        },
      ],
      [FANOUT_KEY, { events: [{ id: "E3", type: "article.created" }] }],
    ]);
    expect(await queue.list({ limit: 10 })).toEqual([]);
    await fanOut();
    const jobs = await queue.list({ limit: 10 });
    expect(jobs).toHaveLength(6);
    for (const key of ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"]) {
      const mine = jobs.filter((job) => job.key === key).sort((a, b) => a.id.localeCompare(b.id));
      expect(mine.map((job) => [job.type, job.payload])).toEqual([
        ["article.created", { event: "E1" }],
        ["article.created", { event: "E2" }],
        ["article.created", { event: "E3" }],
      ]);
    }
  });

  it("keeps an old event while its fan-out waits or is dead", async () => {
    const { db, outbox, write, fanOut } = await setup();
    await write("E1");
    await db
      .updateTable("webhook_events")
      .set({ created_at: new Date(Date.now() - 8 * 86_400_000).toISOString() })
      .execute();
    expect(await outbox.prune(db, 7 * 86_400_000)).toBe(0);
    await db.updateTable("_vellum_jobs").set({ status: "failed" }).execute();
    expect(await outbox.prune(db, 7 * 86_400_000)).toBe(0);
    await db.updateTable("_vellum_jobs").set({ status: "queued" }).execute();
    await fanOut();
    await db.updateTable("_vellum_jobs").set({ status: "applied" }).execute();
    expect(await outbox.prune(db, 7 * 86_400_000)).toBe(1);
  });

  it("stores a body once for all receivers, and prunes it only once no delivery waits for it or is dead", async () => {
    const { db, queue, outbox, write, fanOut } = await setup();
    await write("E1", "E2");
    await write("E3");
    await fanOut();
    expect(await db.selectFrom("webhook_events").select("id").execute()).toHaveLength(3);
    const jobs = await queue.list({ limit: 10 });
    expect(jobs).toHaveLength(6);
    expect(jobs.map((job) => job.payload)).toContainEqual({ event: "E1" });
    expect(await outbox.body(db, "E2")).toBe('{"id":"E2"}');
    // Each receiver's deliveries, in id order (the order they go out in), follow the events' order.
    for (const key of ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"]) {
      const mine = jobs.filter((job) => job.key === key).sort((a, b) => a.id.localeCompare(b.id));
      expect(mine.map((job) => job.payload)).toEqual([{ event: "E1" }, { event: "E2" }, { event: "E3" }]);
    }

    // E1: both delivered; E2: one delivered, one dead; E3: both still waiting.
    const of = (event: string) =>
      jobs.filter((job) => (job.payload as { event: string }).event === event).map((j) => j.id);
    const [e2a, e2b] = of("E2");
    await db
      .updateTable("_vellum_jobs")
      .set({ status: "applied" })
      .where("id", "in", [...of("E1"), e2a!])
      .execute();
    await db.updateTable("_vellum_jobs").set({ status: "failed" }).where("id", "=", e2b!).execute();
    await db
      .updateTable("webhook_events")
      .set({ created_at: new Date(Date.now() - 8 * 86_400_000).toISOString() })
      .execute();

    expect(await outbox.prune(db, 7 * 86_400_000)).toBe(1);
    expect((await db.selectFrom("webhook_events").select("id").orderBy("id").execute()).map((r) => r.id)).toEqual([
      "E2",
      "E3",
    ]);
    // Not old enough yet: kept even with every delivery done.
    await db.updateTable("_vellum_jobs").set({ status: "applied" }).execute();
    expect(await outbox.prune(db, 9 * 86_400_000)).toBe(0);
    expect(await outbox.prune(db, 7 * 86_400_000)).toBe(2);
    expect(await outbox.body(db, "E3")).toBeUndefined();
  });

  it("prunes a large backlog of old bodies in chunks, with the event loop free between them", async () => {
    const { db, outbox, write, fanOut } = await setup();
    const count = 2_500;
    await write(...Array.from({ length: count }, (_, i) => `E${String(i).padStart(5, "0")}`));
    await fanOut();
    await db.updateTable("_vellum_jobs").set({ status: "applied" }).execute();
    await db
      .updateTable("webhook_events")
      .set({ created_at: new Date(Date.now() - 8 * 86_400_000).toISOString() })
      .execute();
    const { value: pruned, turns } = await eventLoopTurns(() => outbox.prune(db, 7 * 86_400_000));
    expect(pruned).toBe(count);
    expect(turns).toBeGreaterThanOrEqual(2);
    expect(await db.selectFrom("webhook_events").select("id").execute()).toEqual([]);
  });
});
