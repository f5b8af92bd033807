import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  API_ERROR_DESCRIPTIONS,
  ApiError,
  definePlugin,
  type JobRecord,
  type PluginQueue,
  type KernelTables,
} from "../src/index.js";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";
import { ageJob } from "./helpers/age-job.js";
import { waitFor } from "./helpers/wait.js";

/** What the failing handlers throw: the kind of text that must never reach a client. */
const RAW_ERROR = "secret-db-path /var/x";

interface LedgerTables {
  ledger_rows: { id: string };
}
type LedgerQueue = PluginQueue<LedgerTables & KernelTables>;

/**
 * A plugin with two queues: its own, which retries slowly (a failed job stays waiting for its
 * retry during the test) and says which pruned jobs were applied; and `ledger:strict`, which
 * dead-letters a job at its first failure. A job's type says how its handler behaves.
 */
function ledger(queues: { main?: LedgerQueue; strict?: LedgerQueue }) {
  let flakyFailures = 0;
  return definePlugin<object, LedgerTables>({
    name: "ledger",
    setup(ctx) {
      ctx.migrations({
        "0001_init": {
          up: (db) =>
            db.schema
              .createTable("ledger_rows")
              .addColumn("id", "text", (c) => c.primaryKey())
              .execute(),
        },
      });
      const main = ctx.queue();
      main.process(
        async (job, w) => {
          if (job.type === "raw") throw new Error(RAW_ERROR);
          if (job.type === "conflict") throw new ApiError("slug_conflict", `slug taken, see ${RAW_ERROR}`);
          if (job.type === "flaky" && flakyFailures++ === 0) throw new Error(RAW_ERROR);
          await w.trx.insertInto("ledger_rows").values({ id: job.id }).execute();
        },
        {
          backoffMs: () => 60_000,
          appliedAfterPrune: async (id) =>
            (await ctx.db.selectFrom("ledger_rows").select("id").where("id", "=", id).executeTakeFirst()) !== undefined,
        },
      );
      const strict = ctx.queue("strict");
      strict.process(
        async () => {
          throw new Error(RAW_ERROR);
        },
        { maxAttempts: 1 },
      );
      queues.main = main;
      queues.strict = strict;
    },
  })();
}

let t: TestVellum;
let main: LedgerQueue;
let strict: LedgerQueue;

beforeEach(async () => {
  const queues: { main?: LedgerQueue; strict?: LedgerQueue } = {};
  t = await createTestVellum({ plugins: [ledger(queues)] });
  main = queues.main as LedgerQueue;
  strict = queues.strict as LedgerQueue;
});
afterEach(async () => {
  await t.close();
});

async function enqueue(queue: LedgerQueue, type: string): Promise<JobRecord> {
  return queue.enqueue(t.vellum.db(), type, {});
}

async function jobResponse(id: string): Promise<{ status: number; text: string; body: Record<string, unknown> }> {
  const res = await t.fetch(`/api/v1/jobs/${id}`);
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) };
}

describe("GET /api/v1/jobs/:id", () => {
  it("shows a job waiting for its retry as queued, with an error code and a generic message only", async () => {
    const job = await enqueue(main, "raw");
    await waitFor(async () => (await main.get(job.id))?.attempts === 1);
    const { status, text, body } = await jobResponse(job.id);
    expect(status).toBe(200);
    expect(body).toEqual({
      id: job.id,
      status: "queued",
      error: {
        code: "internal_error",
        message: "The last attempt failed and the write will be retried; the error was logged.",
      },
    });
    expect(text).not.toContain("secret-db-path");
    expect(text).not.toContain("/var/x");
    // The raw error stays with the operators: in the job's row.
    expect(await main.get(job.id)).toMatchObject({ last_error: RAW_ERROR, error_code: "internal_error" });
  });

  it("shows a dead-lettered job as failed, with a generic message only", async () => {
    const job = await enqueue(strict, "raw");
    await waitFor(async () => (await strict.get(job.id))?.status === "failed");
    const { status, text, body } = await jobResponse(job.id);
    expect(status).toBe(200);
    expect(body).toEqual({
      id: job.id,
      status: "failed",
      error: {
        code: "internal_error",
        message: "The write failed after its retries and is in the dead-letter queue; the error was logged.",
      },
    });
    expect(text).not.toContain(RAW_ERROR);
    // Operators learn it on vellum:error.
    expect(t.errors).toEqual([
      expect.objectContaining({ error: new Error(RAW_ERROR), tags: expect.objectContaining({ job: job.id }) }),
    ]);
  });

  it("tells the code of an API error the handler threw on purpose, with the code's own description", async () => {
    const job = await enqueue(main, "conflict");
    await waitFor(async () => (await main.get(job.id))?.attempts === 1);
    const { text, body } = await jobResponse(job.id);
    expect(body).toEqual({
      id: job.id,
      status: "queued",
      error: { code: "slug_conflict", message: API_ERROR_DESCRIPTIONS.slug_conflict },
    });
    expect(text).not.toContain(RAW_ERROR);
  });

  it("shows an applied job without an error, also one that failed before", async () => {
    const done = await enqueue(main, "write");
    await waitFor(async () => (await main.get(done.id))?.status === "applied");
    expect((await jobResponse(done.id)).body).toEqual({ id: done.id, status: "applied" });

    const flaky = await enqueue(main, "flaky");
    await waitFor(async () => (await main.get(flaky.id))?.attempts === 1);
    expect(await main.applyNow(flaky.id)).toBe(true);
    expect(await main.applyNow(flaky.id)).toBe(false);
    expect((await jobResponse(flaky.id)).body).toEqual({ id: flaky.id, status: "applied" });
  });

  it("answers applied for a pruned job its queue says was applied, 404 not_found for any other id", async () => {
    const job = await enqueue(main, "write");
    await waitFor(async () => (await main.get(job.id))?.status === "applied");
    // Made and applied two days ago: its id (a ULID of that time) and the ledger's record of it.
    const db = t.vellum.db();
    const aged = await ageJob(db, job.id, 2 * 86_400_000);
    await db.updateTable("ledger_rows").set({ id: aged }).where("id", "=", job.id).execute();
    expect(await t.vellum.queue().prune(86_400_000)).toBe(1);
    expect(await main.get(aged)).toBeUndefined();
    expect((await jobResponse(aged)).body).toEqual({ id: aged, status: "applied" });

    for (const id of ["01ARZ3NDEKTSV4RRFFQ69G5FAV", "not-a-job", "01arz3ndektsv4rrffq69g5fav", "%2E%2E%2Fsettings"]) {
      const { status, body } = await jobResponse(id);
      expect(status).toBe(404);
      expect(body).toMatchObject({ error: { code: "not_found" } });
    }
  });
});
