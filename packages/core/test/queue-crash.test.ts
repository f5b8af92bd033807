import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createConsola } from "consola";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { MigrationRunner } from "../src/db/migrations.js";
import { openSqlite } from "../src/db/sqlite.js";
import type { VellumDatabase } from "../src/db/types.js";
import { JobQueue } from "../src/queue/job-queue.js";
import { queueMigrations } from "../src/queue/migrations.js";

const CHILD = fileURLToPath(new URL("./fixtures/queue-crash-child.mjs", import.meta.url));
const JOBS = 200;
const KILL_AFTER = 40;

/** Runs the child until it has committed at least `KILL_AFTER` jobs, then SIGKILLs it mid-stream. */
function runAndKill(path: string): Promise<{ signal: NodeJS.Signals | null; applied: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, [CHILD, path, String(JOBS)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let applied = 0;
    let stdout = "";
    let stderr = "";
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
      const lines = stdout.split("\n");
      stdout = lines.pop() ?? "";
      for (const line of lines) {
        const match = /^applied (\d+)$/.exec(line);
        if (match) applied = Number(match[1]);
      }
      if (applied >= KILL_AFTER && child.exitCode === null && !child.killed) child.kill("SIGKILL");
    });
    child.on("error", reject);
    child.on("exit", (_code, signal) => resolve({ signal, applied, stderr }));
  });
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

  it("applies every job exactly once after the worker process is killed mid-stream", async () => {
    dir = await mkdtemp(join(tmpdir(), "vellum-queue-crash-"));
    const path = join(dir, "crash.db");

    const crash = await runAndKill(path);
    expect(crash.stderr).toBe("");
    expect(crash.signal).toBe("SIGKILL");
    expect(crash.applied).toBeGreaterThanOrEqual(KILL_AFTER);

    db = await openSqlite({ path });
    const kysely = db.kysely;
    const runner = new MigrationRunner(kysely);
    runner.register("core", queueMigrations);
    expect((await runner.migrate(["core"])).error).toBeUndefined();

    // After the crash, committed handler effects and "applied" marks agree row for row.
    const appliedIds = (
      await kysely.selectFrom("_vellum_jobs").select("id").where("status", "=", "applied").orderBy("id").execute()
    ).map((row) => row.id);
    const rowIds = (await kysely.selectFrom("crash_rows").select("job_id").orderBy("job_id").execute()).map(
      (row) => row.job_id,
    );
    expect(rowIds).toEqual(appliedIds);
    expect(appliedIds.length).toBeGreaterThanOrEqual(crash.applied);
    expect(appliedIds.length).toBeLessThan(JOBS);

    const errors: unknown[] = [];
    const queue = new JobQueue({ db: kysely, logger: createConsola({ level: -999 }), onError: (e) => errors.push(e) });
    queue.process("crash", async (job, trx) => {
      await trx
        .insertInto("crash_rows")
        .values({ job_key: (job.payload as { key: string }).key, job_id: job.id })
        .execute();
    });
    queue.start();
    const deadline = Date.now() + 20_000;
    while ((await queue.stats()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await queue.stop();

    expect(errors).toEqual([]);
    expect(await queue.stats()).toEqual([]);
    const statuses = await kysely
      .selectFrom("_vellum_jobs")
      .select(["status", (eb) => eb.fn.countAll<number>().as("count")])
      .groupBy("status")
      .execute();
    expect(statuses).toEqual([{ status: "applied", count: JOBS }]);
    const perKey = await sql<{ job_key: string; count: number }>`
      SELECT job_key, count(*) AS count FROM crash_rows GROUP BY job_key ORDER BY job_key`.execute(kysely);
    expect(perKey.rows).toHaveLength(JOBS);
    expect(perKey.rows.every((row) => row.count === 1)).toBe(true);
    const expectedKeys = Array.from({ length: JOBS }, (_, i) => `key-${i}`).sort();
    expect(perKey.rows.map((row) => row.job_key)).toEqual(expectedKeys);
  });
});
