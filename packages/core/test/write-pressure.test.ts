import { describe, expect, it } from "vitest";
import { BUSY_BATCH, MAX_YIELD_MS, WritePressure } from "../src/queue/write-pressure.js";
import { queueTestbed } from "./helpers/queue-testbed.js";
import { sleep, waitFor } from "./helpers/wait.js";

const { setup } = queueTestbed();

describe("deliveries yield to queued writes", () => {
  it("waits while writes are busy, at most MAX_YIELD_MS after its last start, and not at all between bursts", () => {
    const pressure = new WritePressure();
    expect(pressure.wait(0, 1_000)).toBe(0);
    // A batch smaller than BUSY_BATCH: the writes keep up, nothing waits.
    const small = pressure.applying(BUSY_BATCH - 1);
    expect(pressure.wait(1_000, 1_005)).toBe(0);
    small(1_006);
    expect(pressure.wait(1_000, 1_007)).toBe(0);
    // A large batch: busy while it runs, however long, and for 20 ms after it.
    const large = pressure.applying(BUSY_BATCH);
    // Never started (or long ago): it starts now, and waits after that start.
    expect(pressure.wait(0, 1_005)).toBe(0);
    expect(pressure.wait(1_000, 1_005)).toBe(MAX_YIELD_MS - 5);
    large(1_000);
    expect(pressure.wait(1_000, 1_005)).toBe(15);
    // The writes went quiet: no wait.
    expect(pressure.wait(1_000, 1_021)).toBe(0);
    // Writes that go on: the wait ends MAX_YIELD_MS after the last start.
    pressure.applying(BUSY_BATCH)(1_240);
    expect(pressure.wait(1_000, 1_245)).toBe(1_000 + MAX_YIELD_MS - 1_245);
    expect(pressure.wait(1_000, 1_000 + MAX_YIELD_MS)).toBe(0);
  });

  // A delivery queue, and a background transactional queue, beside a stream of queued writes, all in
  // full batches of BUSY_BATCH (a last smaller batch would not count as pressure).
  const WRITES = 20 * BUSY_BATCH;
  type Process = Awaited<ReturnType<typeof setup>>["process"];
  const yielding = [
    {
      what: "starts few deliveries",
      key: "receiver",
      register: (process: Process, handler: () => Promise<void>) =>
        process("yields", handler, { mode: "at-least-once" }),
    },
    {
      what: "applies few batches of a background queue",
      key: undefined,
      register: (process: Process, handler: () => Promise<void>) =>
        process("yields", handler, { batchSize: 1, background: true }),
    },
  ];
  it.each(yielding)(
    "$what while a transactional queue applies a stream of writes, then the rest at once",
    async (c) => {
      const { db, queue, process } = await setup();
      const started: number[] = [];
      let writesDoneAt = Number.POSITIVE_INFINITY;
      let writesLeft = WRITES;
      process(
        "writes",
        async () => {
          await sleep(2);
          if (--writesLeft === 0) writesDoneAt = Date.now();
        },
        { batchSize: BUSY_BATCH },
      );
      c.register(process, async () => void started.push(Date.now()));
      await db.transaction().execute(async (trx) => {
        for (let n = 0; n < WRITES; n++) await queue.enqueue(trx, "writes", "write", { n });
        for (let n = 0; n < 40; n++) await queue.enqueue(trx, "yields", "work", { n }, c.key);
      });
      const queueStarted = Date.now();
      queue.start();
      await waitFor(() => started.length === 40, 10_000);
      const busyMs = writesDoneAt - queueStarted;
      const duringWrites = started.filter((at) => at < writesDoneAt).length;
      // One start, then one per MAX_YIELD_MS at most while the writes go on (a little slack for timers).
      expect(busyMs).toBeGreaterThan(MAX_YIELD_MS);
      expect(duringWrites).toBeLessThanOrEqual(Math.ceil(busyMs / MAX_YIELD_MS) + 2);
      expect(duringWrites).toBeLessThan(40);
    },
  );

  it("does not make deliveries yield to a background queue's batches", async () => {
    const { db, queue, process } = await setup();
    const deliveries: number[] = [];
    let fanoutLeft = 100 * BUSY_BATCH;
    process(
      "more",
      async () => {
        await sleep(2);
        fanoutLeft--;
      },
      { batchSize: BUSY_BATCH, background: true },
    );
    process("hooks", async () => void deliveries.push(Date.now()), { mode: "at-least-once" });
    await db.transaction().execute(async (trx) => {
      for (let n = 0; n < 100 * BUSY_BATCH; n++) await queue.enqueue(trx, "more", "fan-out", { n });
      for (let n = 0; n < 40; n++) await queue.enqueue(trx, "hooks", "deliver", { n }, "receiver");
    });
    queue.start();
    await waitFor(() => deliveries.length === 40, 10_000);
    expect(fanoutLeft, "deliveries all went out while the background queue still ran").toBeGreaterThan(0);
  });

  it("does not hold deliveries back while the writes keep up, each in a batch of its own", async () => {
    const { db, queue, process } = await setup();
    const deliveries: number[] = [];
    let writes = 0;
    process("writes", async () => void writes++);
    process("hooks", async () => void deliveries.push(Date.now()), { mode: "at-least-once" });
    queue.start();
    // A steady trickle, one write every 3 ms, each applied before the next comes; 40 deliveries of
    // one key (one at a time) join it after 60 ms. Were every batch pressure, one would start each MAX_YIELD_MS.
    const started = Date.now();
    let deliveriesAt = Number.POSITIVE_INFINITY;
    while (Date.now() - started < 600) {
      await queue.enqueue(db, "writes", "write", {});
      if (deliveriesAt === Number.POSITIVE_INFINITY && Date.now() - started >= 60) {
        deliveriesAt = Date.now();
        await db.transaction().execute(async (trx) => {
          for (let n = 0; n < 40; n++) await queue.enqueue(trx, "hooks", "deliver", { n }, "receiver");
        });
      }
      await sleep(3);
    }
    const writesDoneAt = Date.now();
    expect(writes, "writes applied meanwhile").toBeGreaterThan(50);
    expect(
      deliveries.filter((at) => at < writesDoneAt),
      "deliveries made while the writes went on",
    ).toHaveLength(40);
  });
});
