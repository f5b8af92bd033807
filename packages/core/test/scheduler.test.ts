import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { VellumError } from "../src/errors/vellum-error.js";
import { Scheduler } from "../src/scheduler.js";
import { deferred } from "./helpers/wait.js";

const schedulers: Scheduler[] = [];

afterEach(async () => {
  await Promise.all(schedulers.splice(0).map((scheduler) => scheduler.stop()));
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function newScheduler() {
  const errors: Array<{ error: unknown; job: string }> = [];
  const scheduler = new Scheduler({ onError: (error, info) => errors.push({ error, ...info }) });
  schedulers.push(scheduler);
  return { scheduler, errors };
}

describe("Scheduler", () => {
  it("runs a job every interval plus a random jitter", async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, "random").mockReturnValue(0.5);
    const { scheduler } = newScheduler();
    let runs = 0;
    scheduler.schedule("tick", { everyMs: 1000, jitterMs: 400 }, () => {
      runs++;
    });
    scheduler.start();
    await vi.advanceTimersByTimeAsync(1199);
    expect(runs).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toBe(1);
    await vi.advanceTimersByTimeAsync(1200);
    expect(runs).toBe(2);
    await vi.advanceTimersByTimeAsync(3600);
    expect(runs).toBe(5);
  });

  it("runs immediately on start when asked, and jobs scheduled after start begin at once", async () => {
    vi.useFakeTimers();
    const { scheduler } = newScheduler();
    const runs: string[] = [];
    scheduler.schedule("now", { everyMs: 60_000, runImmediately: true }, () => {
      runs.push("now");
    });
    scheduler.schedule("later", { everyMs: 60_000 }, () => {
      runs.push("later");
    });
    scheduler.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toEqual(["now"]);
    scheduler.schedule("added", { everyMs: 60_000, runImmediately: true }, () => {
      runs.push("added");
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toEqual(["now", "added"]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(runs.sort()).toEqual(["added", "added", "later", "now", "now"]);
  });

  it("never overlaps runs of one job: the next run is timed from the end of the previous one", async () => {
    vi.useFakeTimers();
    const { scheduler } = newScheduler();
    const starts: number[] = [];
    let active = 0;
    let maxActive = 0;
    scheduler.schedule("slow", { everyMs: 100, runImmediately: true }, async () => {
      starts.push(Date.now());
      active++;
      maxActive = Math.max(maxActive, active);
      await new Promise((resolve) => setTimeout(resolve, 250));
      active--;
    });
    const startedAt = Date.now();
    scheduler.start();
    await vi.advanceTimersByTimeAsync(1000);
    expect(maxActive).toBe(1);
    expect(starts.map((at) => at - startedAt)).toEqual([0, 350, 700]);
  });

  it("reports errors, sync or async, to onError and keeps the job scheduled", async () => {
    vi.useFakeTimers();
    const { scheduler, errors } = newScheduler();
    let runs = 0;
    scheduler.schedule("sync", { everyMs: 100 }, () => {
      runs++;
      throw new Error("sync failure");
    });
    scheduler.schedule("async", { everyMs: 100 }, async () => {
      throw new Error("async failure");
    });
    scheduler.start();
    await vi.advanceTimersByTimeAsync(250);
    expect(runs).toBe(2);
    expect(errors.map(({ job }) => job)).toEqual(["sync", "async", "sync", "async"]);
    expect(errors.slice(0, 2)).toEqual([
      { error: expect.objectContaining({ message: "sync failure" }), job: "sync" },
      { error: expect.objectContaining({ message: "async failure" }), job: "async" },
    ]);
  });

  it("refuses a duplicate job name", () => {
    const { scheduler } = newScheduler();
    scheduler.schedule("backup", { everyMs: 1000 }, () => {});
    expect(() => scheduler.schedule("backup", { everyMs: 5 }, () => {})).toThrow(VellumError);
  });

  it("lists running jobs, and stop waits for them and prevents later runs", async () => {
    const { scheduler } = newScheduler();
    const entered = deferred();
    const release = deferred();
    let runs = 0;
    scheduler.schedule("checkpoint", { everyMs: 5, runImmediately: true }, async () => {
      runs++;
      entered.resolve();
      await release.promise;
    });
    scheduler.schedule("idle", { everyMs: 60_000 }, () => {});
    scheduler.start();
    await entered.promise;
    expect(scheduler.running()).toEqual(["checkpoint"]);
    let stopped = false;
    const stopping = scheduler.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(stopped).toBe(false);
    release.resolve();
    await stopping;
    expect(scheduler.running()).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(runs).toBe(1);
    await scheduler.stop();
  });

  it("does not keep the process alive (timers are unref'd)", async () => {
    const hooks = new URL("./fixtures/ts-hooks.mjs", import.meta.url).href;
    const source = new URL("../src/scheduler.ts", import.meta.url).href;
    const script = [
      `import { register } from "node:module";`,
      `register(${JSON.stringify(hooks)});`,
      `const { Scheduler } = await import(${JSON.stringify(source)});`,
      `const scheduler = new Scheduler({ onError: () => {} });`,
      `scheduler.schedule("hourly", { everyMs: 3_600_000 }, () => {});`,
      `scheduler.start();`,
    ].join("\n");
    // With a ref'd timer the child would wait an hour and be killed by the timeout, rejecting here.
    await expect(
      promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { timeout: 15_000 }),
    ).resolves.toMatchObject({ stderr: "" });
  });
});
