import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { VellumDatabase } from "../src/db/types.js";
import { LeaseFile } from "../src/leases/lease-file.js";
import { createVellum } from "../src/vellum.js";
import { Leases } from "../src/leases/leases.js";
import { Scheduler } from "../src/scheduler.js";
import type { JobRecord } from "../src/queue/types.js";
import { effectValues, insertEffect, queueTestbed } from "./helpers/queue-testbed.js";
import { sleep, waitFor } from "./helpers/wait.js";

// Several processes on one database (docs/operations.md, "Several processes on one database"): each
// "process" here has its own connection to one database file and its own handle on the lease file
// beside it, as two processes would. SQLite locks connections of one process against each other as
// it locks processes.

const { tempPath, open, newQueue } = queueTestbed();
const running: Array<Leases | Scheduler | LeaseFile> = [];
afterEach(async () => {
  for (const part of running.splice(0).reverse()) {
    if ("stop" in part) await part.stop();
    else part.close();
  }
});

/** Leases of one "process", renewed every quarter of a second (ttl 1 s); stopped after the test. */
function leasesOf(errors: unknown[] = []): Leases {
  const leases = new Leases({ ttlMs: 1000, onError: (error) => errors.push(error) });
  running.push(leases);
  return leases;
}

interface TestProcess {
  database: VellumDatabase;
  file: LeaseFile;
}

/** Two "processes" on one new database file. */
async function twoProcesses(): Promise<[TestProcess, TestProcess]> {
  const path = await tempPath();
  const one = async () => {
    const file = await LeaseFile.open(path);
    running.push(file);
    return { database: await open(path), file };
  };
  return [await one(), await one()];
}

const WORKER = fileURLToPath(new URL("./fixtures/queue-worker-child.mjs", import.meta.url));
const HOLDER = fileURLToPath(new URL("./fixtures/lease-holder-child.mjs", import.meta.url));

/** A child process that takes lease `name` on the database at `path` (ttl an hour) and waits. */
function holderInChild(path: string, name: string): Promise<{ child: ChildProcess; holder: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [HOLDER, path, name], { stdio: ["ignore", "pipe", "inherit"] });
    child.stdout.once("data", (chunk: Buffer) => resolve({ child, holder: chunk.toString().trim() }));
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`lease holder exited ${code}`)));
  });
}

interface WorkerRun {
  applied: number;
  taken: number;
  problems: string[];
}

/** A child process working queue "writes" of the database at `path` until it is empty (fixtures/queue-worker-child.mjs). */
function runWorker(path: string, mode: "leases" | "none"): Promise<WorkerRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, path, mode], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(JSON.parse(stdout) as WorkerRun);
      else reject(new Error(`worker exited ${code}: ${stderr}`));
    });
  });
}

/** A lease watcher that records what it heard, and when. */
function recorder() {
  const heard: string[] = [];
  const at: number[] = [];
  const hear = (what: string) => {
    heard.push(what);
    at.push(performance.now());
  };
  return { heard, at, watcher: { acquired: () => hear("acquired"), lost: () => hear("lost") } };
}

/** Two "processes" whose leases ask for `name`, started in order: the first takes it. */
async function twoHolders(name: string) {
  const [one, two] = await twoProcesses();
  const [a, b] = [leasesOf(), leasesOf()];
  const [heardA, heardB] = [recorder(), recorder()];
  a.watch(name, heardA.watcher);
  b.watch(name, heardB.watcher);
  await a.start(one.file);
  await b.start(two.file);
  return { one, a, b, heardA, heardB };
}

/**
 * Two "processes" on one new database, each with its leases and a scheduler whose tasks `schedule`
 * adds; A's leases start first, so A holds the tasks' leases. Both schedulers are started.
 */
async function twoSchedulers(schedule: (scheduler: Scheduler, name: "a" | "b") => void) {
  const [one, two] = await twoProcesses();
  const [leasesA, leasesB] = [leasesOf(), leasesOf()];
  const scheduler = (leases: Leases, name: "a" | "b") => {
    const s = new Scheduler({ leases, onError: (error) => expect.fail(String(error)) });
    schedule(s, name);
    running.push(s);
    return s;
  };
  const [a, b] = [scheduler(leasesA, "a"), scheduler(leasesB, "b")];
  await leasesA.start(one.file);
  await leasesB.start(two.file);
  a.start();
  b.start();
  return { a, leasesA };
}

describe("Leases", () => {
  it("refuses a leaseMs under a second with VELLUM_CONFIG_INVALID naming it", () => {
    for (const leaseMs of [500, 1500.5, Number.NaN])
      expect(() => createVellum({ dataDir: "unused", leaseMs })).toThrow(
        expect.objectContaining({ code: "VELLUM_CONFIG_INVALID", message: expect.stringContaining("leaseMs") }),
      );
  });

  it("gives a free lease to one holder; the other takes it at its next renewal once it is released", async () => {
    const { a, b, heardA, heardB } = await twoHolders("queue:q");
    expect([a.holds("queue:q"), b.holds("queue:q")]).toEqual([true, false]);
    await sleep(600); // two renewals each: A keeps it
    expect([a.holds("queue:q"), b.holds("queue:q")]).toEqual([true, false]);
    await a.stop();
    expect(heardA.heard).toEqual(["acquired", "lost"]);
    await waitFor(() => b.holds("queue:q"), 2000);
    expect(heardB.heard).toEqual(["acquired"]);
  });

  it("takes nothing when stopped while it starts (a close during ready)", async () => {
    const [one] = await twoProcesses();
    const leases = leasesOf();
    const heard = recorder();
    leases.watch("queue:q", heard.watcher);
    const starting = leases.start(one.file);
    await leases.stop();
    await starting;
    await sleep(600); // two renewal periods: no timer renews after the stop
    expect(leases.holds("queue:q")).toBe(false);
    expect(heard.heard).toEqual([]);
    expect(one.file.table.prepare("SELECT COUNT(*) AS n FROM leases").get()).toEqual({ n: 0 });
  });

  it("takes over a lease its holder could not renew, after that holder stopped counting on it", async () => {
    const { one, a, b, heardA, heardB } = await twoHolders("schedule:x");
    // A can no longer renew (as a process whose disk or lock fails): it stops counting on the lease
    // after four fifths of it, and B takes it once it expired.
    one.file.table.close();
    await waitFor(() => b.holds("schedule:x"), 2000);
    expect(a.holds("schedule:x")).toBe(false);
    expect(heardA.heard).toEqual(["acquired", "lost"]);
    expect(heardB.heard).toEqual(["acquired"]);
    expect(heardA.at[1]).toBeLessThan(heardB.at[0] as number);
  });

  it("takes at its next renewal a lease whose holder ended on this host, not one whose holder lives", async () => {
    const path = await tempPath();
    await open(path);
    // A holder in a child process, killed (its lease still far from expiry), and one that lives.
    const crashed = await holderInChild(path, "queue:crashed");
    crashed.child.kill("SIGKILL");
    await new Promise((resolve) => crashed.child.once("exit", resolve));
    const alive = await holderInChild(path, "queue:alive");
    try {
      const file = await LeaseFile.open(path);
      running.push(file);
      const a = leasesOf();
      a.watch("queue:crashed");
      a.watch("queue:alive");
      await a.start(file);
      expect([a.holds("queue:crashed"), a.holds("queue:alive")]).toEqual([true, false]);
      // The crashed holder's liveness file went with its lease; the living one's stays.
      expect(readdirSync(`${path}.holders`).sort()).toEqual(
        [a.holder, alive.holder].map((holder) => holder.split("/").at(-1)).sort(),
      );
    } finally {
      alive.child.kill("SIGKILL");
    }
  });
});

describe("the lease table at start", () => {
  it("waits to switch a lease table another process is creating to WAL", async () => {
    const path = await tempPath();
    // Its write lock makes SQLite refuse the switch at once, busy timeout or not.
    const holder = fileURLToPath(new URL("./fixtures/write-lock-child.mjs", import.meta.url));
    const child = spawn(process.execPath, [holder, `${path}.leases`, "300"]);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    await new Promise((resolve) => child.stdout?.once("data", resolve));
    const file = await LeaseFile.open(path);
    running.push(file);
    expect(file.table.pragma("journal_mode", { simple: true })).toBe("wal");
    await exited;
  });
});

describe("liveness files at start", () => {
  it("removes an old one whose lock is free, not a new one whose process may not have locked it yet", async () => {
    const path = await tempPath();
    await open(path);
    mkdirSync(`${path}.holders`, { recursive: true });
    const hourAgo = new Date(Date.now() - 3_600_000);
    writeFileSync(`${path}.holders/ended-long-ago`, "");
    utimesSync(`${path}.holders/ended-long-ago`, hourAgo, hourAgo);
    writeFileSync(`${path}.holders/starting-now`, "");
    const file = await LeaseFile.open(path);
    running.push(file);
    const a = leasesOf();
    a.watch("queue:any");
    await a.start(file);
    expect(readdirSync(`${path}.holders`).sort()).toEqual([a.holder.split("/").at(-1), "starting-now"].sort());
  });
});

describe("queues and scheduled tasks on one database", () => {
  it("works each queue in one process at a time, in order, and hands it over when that process stops", async () => {
    const [one, two] = await twoProcesses();
    const leasesA = leasesOf();
    const leasesB = leasesOf();
    const a = newQueue(one.database, { leases: leasesA });
    const b = newQueue(two.database, { leases: leasesB });
    const appliedBy = new Map<string, string>();
    const handler = (name: string) => async (job: JobRecord, w: { trx: Parameters<typeof insertEffect>[0] }) => {
      appliedBy.set(job.id, name);
      await insertEffect(w.trx, job);
    };
    a.process("writes", handler("a"));
    b.process("writes", handler("b"));
    await leasesA.start(one.file);
    await leasesB.start(two.file);
    a.queue.start();
    b.queue.start();
    // Enqueued through both connections, as two processes behind one load balancer would.
    for (let n = 0; n < 200; n++)
      await (n % 2 ? a : b).queue.enqueue((n % 2 ? one : two).database.kysely, "writes", "w", { n });
    await waitFor(async () => (await a.queue.stats()).length === 0, 10_000);
    expect(await effectValues(one.database.kysely)).toEqual(Array.from({ length: 200 }, (_, n) => ({ n })));
    expect(new Set(appliedBy.values())).toEqual(new Set(["a"]));

    await a.queue.stop();
    await leasesA.stop();
    for (let n = 200; n < 250; n++) await b.queue.enqueue(two.database.kysely, "writes", "w", { n });
    await waitFor(async () => (await b.queue.stats()).length === 0, 10_000);
    expect(await effectValues(two.database.kysely)).toEqual(Array.from({ length: 250 }, (_, n) => ({ n })));
    expect([...appliedBy.values()].filter((name) => name === "b")).toHaveLength(50);
    expect(a.errors).toEqual([]);
    expect(b.errors).toEqual([]);
  });

  it("applies a job another process enqueued within a look of its commit, not at the next poll", async () => {
    const [one, two] = await twoProcesses();
    const leases = leasesOf();
    const worker = newQueue(one.database, { leases, watchOtherConnections: true });
    worker.process("writes", async (job, w) => insertEffect(w.trx, job), { pollMs: 60_000 });
    await leases.start(one.file);
    worker.queue.start();
    await sleep(100); // the worker's first look found nothing: its next poll is a minute away
    const other = newQueue(two.database);
    for (let n = 0; n < 3; n++) await other.queue.enqueue(two.database.kysely, "writes", "w", { n });
    await waitFor(async () => (await effectValues(one.database.kysely)).length === 3, 5000);
  });

  it("applies every job once when two processes work one queue: with leases one of them, without both and no batch rolled back", async () => {
    for (const mode of ["leases", "none"] as const) {
      const path = await tempPath();
      const one = await open(path);
      const { queue } = newQueue(one);
      for (let n = 0; n < 300; n++) await queue.enqueue(one.kysely, "writes", "w", { n });
      const [first, second] = await Promise.all([runWorker(path, mode), runWorker(path, mode)]);
      expect([...first.problems, ...second.problems]).toEqual([]);
      expect(await effectValues(one.kysely)).toEqual(Array.from({ length: 300 }, (_, n) => ({ n })));
      expect(first.applied + second.applied).toBe(300);
      // Without leases each batch leaves out the jobs the other applied since its read.
      expect(first.taken + second.taken).toBe(0);
      if (mode === "leases") expect([first.applied, second.applied].sort((x, y) => x - y)).toEqual([0, 300]);
    }
  }, 90_000); // four child processes that each compile the kernel

  it("runs a runImmediately task again in the process that takes its lease over, not an interval later", async () => {
    const runs = { a: 0, b: 0 };
    const { a, leasesA } = await twoSchedulers((s, name) =>
      s.schedule("core:daily", { everyMs: 86_400_000, runImmediately: true }, () => void runs[name]++),
    );
    await waitFor(() => runs.a === 1, 3000);
    await sleep(300);
    expect(runs.b).toBe(0);
    await a.stop();
    await leasesA.stop();
    await waitFor(() => runs.b === 1, 3000);
    expect(runs.a).toBe(1);
  });

  it("runs a scheduled task in the process holding its lease, and an everyProcess task in each", async () => {
    const counts = { a: 0, b: 0, eachA: 0, eachB: 0 };
    const { a, leasesA } = await twoSchedulers((s, name) => {
      s.schedule("core:tick", { everyMs: 20 }, () => void counts[name]++);
      s.schedule("core:each", { everyMs: 20, everyProcess: true }, () => {
        counts[name === "a" ? "eachA" : "eachB"]++;
      });
    });
    await sleep(400);
    expect(counts.a).toBeGreaterThan(5);
    expect(counts.b).toBe(0);
    expect(counts.eachA).toBeGreaterThan(5);
    expect(counts.eachB).toBeGreaterThan(5);
    await a.stop();
    await leasesA.stop();
    await waitFor(() => counts.b > 5, 3000);
  });
});
