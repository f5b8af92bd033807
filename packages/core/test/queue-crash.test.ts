import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import type { VellumDatabase } from "../src/db/types.js";
import { type AnyDb, createJobQueue, openQueueDatabase } from "./helpers/job-queue.js";

const CHILD = fileURLToPath(new URL("./fixtures/queue-crash-child.mjs", import.meta.url));
const JOBS = 200;
const KILL_AFTER = 40;

interface CrashRun {
  signal: NodeJS.Signals | null;
  applied: number;
  stderr: string;
}

/**
 * Runs the child until it has committed at least `KILL_AFTER` jobs, then SIGKILLs it after a
 * random few milliseconds so the kill lands at varying points of a batch.
 */
function runAndKill(path: string, enqueue: number): Promise<CrashRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, path, String(enqueue)], { stdio: ["ignore", "pipe", "pipe"] });
    let applied = 0;
    let pending = "";
    let stderr = "";
    let killing = false;
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.stdout.on("data", (chunk) => {
      const lines = (pending + chunk).split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) {
        const match = /^applied (\d+)$/.exec(line);
        if (match) applied = Number(match[1]);
      }
      if (applied >= KILL_AFTER && !killing) {
        killing = true;
        setTimeout(() => child.kill("SIGKILL"), Math.random() * 20);
      }
    });
    child.on("error", reject);
    child.on("exit", (_code, signal) => resolve({ signal, applied, stderr }));
  });
}

/** Committed handler effects and "applied" marks must agree row for row after any crash. */
async function expectConsistent(db: AnyDb): Promise<number> {
  const applied = await db
    .selectFrom("_vellum_jobs")
    .select("id")
    .where("status", "=", "applied")
    .orderBy("id")
    .execute();
  const rows = await db.selectFrom("crash_rows").select("job_id").orderBy("job_id").execute();
  expect(rows.map((row) => row.job_id)).toEqual(applied.map((row) => row.id));
  return applied.length;
}

describe("job queue across a crash", () => {
  let dir: string | undefined;
  let db: VellumDatabase | undefined;

  afterEach(async () => {
    await db?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    db = undefined;
    dir = undefined;
  });

  it("applies every job exactly once after worker processes are killed mid-stream, twice", async () => {
    dir = await mkdtemp(join(tmpdir(), "vellum-queue-crash-"));
    const path = join(dir, "crash.db");

    const first = await runAndKill(path, JOBS);
    expect(first).toMatchObject({ signal: "SIGKILL", stderr: "" });
    const second = await runAndKill(path, 0);
    expect(second).toMatchObject({ signal: "SIGKILL", stderr: "" });
    expect(first.applied + second.applied).toBeLessThan(JOBS);

    db = await openQueueDatabase(path);
    const kysely = db.kysely;
    const appliedBeforeResume = await expectConsistent(kysely);
    expect(appliedBeforeResume).toBeGreaterThanOrEqual(first.applied + second.applied);
    expect(appliedBeforeResume).toBeLessThan(JOBS);

    const { queue, errors, reported, process } = createJobQueue(db);
    process("crash", async (job, w) => {
      await w.trx
        .insertInto("crash_rows")
        .values({ job_key: (job.payload as { key: string }).key, job_id: job.id })
        .execute();
    });
    queue.start();
    const deadline = Date.now() + 20_000;
    while ((await queue.stats()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await queue.stop();

    expect(errors).toEqual([]);
    expect(reported).toEqual([]);
    expect(await queue.stats()).toEqual([]);
    expect(await expectConsistent(kysely)).toBe(JOBS);
    const perKey = await sql<{ job_key: string; count: number }>`
      SELECT job_key, count(*) AS count FROM crash_rows GROUP BY job_key ORDER BY job_key`.execute(kysely);
    expect(perKey.rows.every((row) => row.count === 1)).toBe(true);
    const expectedKeys = Array.from({ length: JOBS }, (_, i) => `key-${i}`).sort();
    expect(perKey.rows.map((row) => row.job_key)).toEqual(expectedKeys);
  });
});
