import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { JobRecord } from "../src/queue/types.js";
import { ageJob } from "./helpers/age-job.js";
import { openQueueDatabase } from "./helpers/job-queue.js";
import { queueTestbed } from "./helpers/queue-testbed.js";
import { sleep, waitFor } from "./helpers/wait.js";

const { setup, tempPath, newQueue } = queueTestbed();

/** A promise with its resolve function, to hold a delivery open. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe("at-least-once queues: concurrent deliveries, one at a time per key", () => {
  it("runs different keys at once up to the bound, and a key's jobs one at a time in id order", async () => {
    const { db, queue, process } = await setup();
    const gates = new Map<string, ReturnType<typeof gate>>();
    const started: string[] = [];
    let running = 0;
    let most = 0;
    process(
      "hooks",
      async (job: JobRecord) => {
        const name = `${job.key}:${(job.payload as { n: number }).n}`;
        started.push(name);
        running++;
        most = Math.max(most, running);
        const g = gate();
        gates.set(name, g);
        await g.promise;
        running--;
      },
      { mode: "at-least-once", concurrency: 2 },
    );
    for (const [key, n] of [
      ["A", 1],
      ["A", 2],
      ["B", 1],
      ["C", 1],
      ["B", 2],
    ] as const) {
      await queue.enqueue(db, "hooks", "deliver", { n }, key);
    }
    queue.start();
    await waitFor(() => started.length === 2);
    // The heads of A and B; A's second job waits for its first, C for a free slot.
    expect(started).toEqual(["A:1", "B:1"]);
    gates.get("A:1")?.open();
    await waitFor(() => started.length === 3);
    expect(started[2]).toBe("A:2");
    gates.get("B:1")?.open();
    await waitFor(() => started.length === 4);
    expect(started[3]).toBe("C:1");
    gates.get("A:2")?.open();
    await waitFor(() => started.length === 5);
    expect(started[4]).toBe("B:2");
    for (const name of ["C:1", "B:2"]) gates.get(name)?.open();
    await waitFor(async () => (await queue.depth("hooks")) === 0);
    expect(most).toBe(2);
  });

  it("holds a key's later jobs while its head waits for a retry, and lets other keys go on", async () => {
    const { db, queue, process } = await setup();
    const log: string[] = [];
    let failures = 2;
    process(
      "hooks",
      async (job: JobRecord) => {
        const name = `${job.key}:${(job.payload as { n: number }).n}`;
        if (name === "A:1" && failures-- > 0) {
          log.push(`failed ${name}`);
          throw new Error("receiver down");
        }
        log.push(name);
      },
      { mode: "at-least-once", concurrency: 4, backoffMs: () => 150 },
    );
    await queue.enqueue(db, "hooks", "deliver", { n: 1 }, "A");
    await queue.enqueue(db, "hooks", "deliver", { n: 2 }, "A");
    await queue.enqueue(db, "hooks", "deliver", { n: 1 }, "B");
    await queue.enqueue(db, "hooks", "deliver", { n: 2 }, "B");
    queue.start();
    await waitFor(() => log.includes("A:2"));
    expect(log.filter((line) => line.includes("A:"))).toEqual(["failed A:1", "failed A:1", "A:1", "A:2"]);
    // B never waited for A's retries.
    expect(log.indexOf("B:2")).toBeLessThan(log.indexOf("A:1"));
  });

  it.each(["at-least-once", "transactional"] as const)(
    "%s: a retry due before the next poll runs when it is due, not at the poll",
    async (mode) => {
      const { db, queue, process } = await setup();
      let attempts = 0;
      const handler = async () => {
        attempts++;
        // Fails after the loop has gone to sleep, as a delivery over the network does.
        await sleep(30);
        if (attempts < 4) throw new Error("not yet");
      };
      const options = { pollMs: 60_000, backoffMs: () => 20, maxAttempts: 5 };
      if (mode === "at-least-once") process("hooks", handler, { ...options, mode });
      else process("hooks", handler, { ...options, mode });
      const job = await queue.enqueue(db, "hooks", "deliver", {}, "A");
      queue.start();
      // Three retries at the 60 s poll would take three minutes; each is due 20 ms after its failure.
      await waitFor(async () => (await queue.get(job.id))?.status === "applied", 5_000);
      expect(attempts).toBe(4);
    },
  );

  it("passes the error to the backoff, keeps what the handler resolved to, and stops only after deliveries in flight", async () => {
    const { db, queue, process } = await setup();
    const asked: Array<{ attempt: number; error: unknown }> = [];
    const hold = gate();
    let calls = 0;
    process(
      "hooks",
      async () => {
        calls++;
        if (calls === 1) throw Object.assign(new Error("busy"), { retryAfterMs: 40 });
        await hold.promise;
        return { status: 204 };
      },
      {
        mode: "at-least-once",
        backoffMs: (attempt, error) => {
          asked.push({ attempt, error });
          return (error as { retryAfterMs: number }).retryAfterMs;
        },
      },
    );
    const job = await queue.enqueue(db, "hooks", "deliver", { body: "x" }, "A");
    queue.start();
    await waitFor(() => calls === 2);
    expect(asked).toEqual([{ attempt: 1, error: expect.objectContaining({ message: "busy" }) }]);
    const stopped = queue.stop();
    let done = false;
    void stopped.then(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(done).toBe(false);
    hold.open();
    await stopped;
    expect(await queue.get(job.id)).toMatchObject({ status: "applied", attempts: 1, payload: { status: 204 } });
  });

  it("aborts a delivery's signal at stop; a delivery that fails then keeps its attempts for the next start", async () => {
    const { db, queue, process } = await setup();
    let signalled: AbortSignal | undefined;
    process(
      "hooks",
      (_job: JobRecord, signal: AbortSignal) =>
        new Promise((_resolve, reject) => {
          signalled = signal;
          signal.addEventListener("abort", () => reject(new Error("interrupted")));
        }),
      { mode: "at-least-once", maxAttempts: 1 },
    );
    const job = await queue.enqueue(db, "hooks", "deliver", {}, "A");
    queue.start();
    await waitFor(() => signalled !== undefined);
    await queue.stop();
    // One attempt allowed, yet not dead-lettered: the shutdown cut it.
    expect(await queue.get(job.id)).toMatchObject({ status: "queued", attempts: 0, last_error: "interrupted" });
  });
});

describe("listing, replaying and pruning one queue", () => {
  it("lists newest first with filters, counts per key and replays by id or key", async () => {
    const { db, queue, process } = await setup();
    process(
      "hooks",
      async (job: JobRecord) => {
        if (job.key === "down") throw new Error("no");
      },
      { mode: "at-least-once", maxAttempts: 1, concurrency: 2 },
    );
    const up = await queue.enqueue(db, "hooks", "deliver", {}, "up");
    const dead1 = await queue.enqueue(db, "hooks", "deliver", {}, "down");
    const dead2 = await queue.enqueue(db, "hooks", "deliver", {}, "down");
    await queue.enqueue(db, "other", "write", {}, "down");
    queue.start();
    await waitFor(async () => (await queue.depth("hooks")) === 0);

    expect((await queue.list("hooks", { limit: 10 })).map((j) => j.id)).toEqual([dead2.id, dead1.id, up.id]);
    expect((await queue.list("hooks", { status: "failed", limit: 1 })).map((j) => j.id)).toEqual([dead2.id]);
    expect((await queue.list("hooks", { status: "failed", limit: 5, before: dead2.id })).map((j) => j.id)).toEqual([
      dead1.id,
    ]);
    expect((await queue.list("hooks", { key: "up", limit: 5 })).map((j) => j.id)).toEqual([up.id]);
    expect(await queue.list("hooks", { ids: [], limit: 5 })).toEqual([]);
    expect(await queue.keyStats("hooks")).toEqual([{ key: "down", queued: 0, retrying: 0, failed: 2 }]);

    expect(await queue.replay("hooks", { key: "up" })).toBe(0);
    expect(await queue.replay("hooks", { ids: [dead1.id], key: "down" })).toBe(1);
    expect(await queue.replay("hooks", { key: "down" })).toBe(1);
    // The other queue's job of the same key is not touched.
    expect(await queue.stats()).toEqual(expect.arrayContaining([{ queue: "other", queued: 1, failed: 0 }]));
  });

  it("prunes applied jobs after their queue's own retention, others after the default", async () => {
    const { db, queue, process } = await setup();
    process("kept", async () => undefined, { mode: "at-least-once", retainAppliedMs: 7 * 86_400_000 });
    process("brief", async () => undefined, { mode: "at-least-once" });
    const kept = await queue.enqueue(db, "kept", "deliver", {});
    const brief = await queue.enqueue(db, "brief", "deliver", {});
    queue.start();
    await waitFor(async () => (await queue.stats()).length === 0);
    const keptTwoDays = await ageJob(db, kept.id, 2 * 86_400_000);
    const briefTwoDays = await ageJob(db, brief.id, 2 * 86_400_000);
    expect(await queue.prune(86_400_000)).toBe(1);
    expect(await queue.get(briefTwoDays)).toBeUndefined();
    expect(await queue.get(keptTwoDays)).toMatchObject({ status: "applied" });
    const keptEightDays = await ageJob(db, keptTwoDays, 8 * 86_400_000);
    expect(await queue.prune(86_400_000)).toBe(1);
    expect(await queue.get(keptEightDays)).toBeUndefined();
  });

  it("marks the deliveries that end in the same turn applied in one transaction", async () => {
    const statements: string[] = [];
    const database = await openQueueDatabase(await tempPath(), ({ sql }) => statements.push(sql));
    const { queue, process } = newQueue(database);
    try {
      const release = gate();
      let started = 0;
      process(
        "hooks",
        async () => {
          started++;
          await release.promise;
          return { status: 204 };
        },
        { mode: "at-least-once", concurrency: 3 },
      );
      for (const key of ["a", "b", "c"]) await queue.enqueue(database.kysely, "hooks", "deliver", {}, key);
      queue.start();
      await waitFor(() => started === 3);
      statements.length = 0;
      release.open();
      await waitFor(async () => (await queue.stats()).length === 0);
      const marks = statements
        .map((text) => text.trim().toLowerCase())
        .filter((text) => /^(begin|commit|update _vellum_jobs set status = 'applied')/.test(text))
        .map((text) => (text.startsWith("update") ? "mark" : text));
      expect(marks).toEqual(["begin", "mark", "mark", "mark", "commit"]);
      const jobs = await queue.list("hooks", { limit: 10 });
      expect(jobs.map((job) => job.payload)).toEqual([{ status: 204 }, { status: 204 }, { status: 204 }]);
    } finally {
      await queue.stop();
      await database.close();
    }
  });

  it("does not send a delivery again at once when its mark fails (a full disk): its receiver would get it on every look", async () => {
    const { db, queue, process, errors } = await setup();
    // What a full disk does to the mark, in a form a test can switch on and off.
    await sql`CREATE TRIGGER refuse_marks BEFORE UPDATE OF status ON _vellum_jobs WHEN NEW.status = 'applied'
      BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`.execute(db);
    let sent = 0;
    process(
      "hooks",
      async () => {
        sent++;
        return undefined;
      },
      { mode: "at-least-once", pollMs: 10 },
    );
    await queue.enqueue(db, "hooks", "deliver", {}, "receiver");
    queue.start();
    await waitFor(() => sent === 1);
    // Looks every 10 ms: the delivery stays queued, but none of them sends it again.
    await sleep(300);
    expect(sent).toBe(1);
    expect(await queue.stats()).toEqual([{ queue: "hooks", queued: 1, failed: 0 }]);
    expect(errors.map((e) => String(e.error))).toEqual([expect.stringContaining("database or disk is full")]);
  });
});
