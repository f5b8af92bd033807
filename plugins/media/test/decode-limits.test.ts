import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { DecodeError, DEFAULT_DECODE_LIMITS, type DecodeLimits, DecoderPool } from "../src/decode/index.js";
import { decoderCommand } from "../src/decode/launch.js";
import { grayPng, png } from "./fixtures/images.js";

let workDir: string;
let big: string;
let small: string;
const pools: DecoderPool[] = [];

function poolOf(size: number, limits: Partial<DecodeLimits> = {}): DecoderPool {
  const pool = new DecoderPool({ size, workDir, limits });
  pools.push(pool);
  return pool;
}

function job(input: string, name: string) {
  return { input, output: join(workDir, `${name}.webp`), kind: "png" as const };
}

async function failure(promise: Promise<unknown>): Promise<DecodeError> {
  const error = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(DecodeError);
  return error as DecodeError;
}

/** Pids of this process's children that run the decoder (Linux: from /proc). */
async function decoderPids(): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (parent === process.pid && cmdline.includes("decode/child/main.mjs")) pids.push(Number(entry));
  }
  return pids;
}

beforeAll(async () => {
  workDir = await realpath(await mkdtemp(join(tmpdir(), "vellum-decode-limits-")));
  big = join(workDir, "big.png");
  small = join(workDir, "small.png");
  await writeFile(big, grayPng(6000, 6000));
  await writeFile(small, await png(64, 48));
  return async () => {
    await rm(workDir, { recursive: true, force: true });
  };
});

afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

describe("decoder pool: limits and lifecycle", () => {
  it("kills a child over its time limit, replaces it and goes on", async () => {
    // The 6000×6000 PNG takes about a second to re-encode, the small one a few milliseconds.
    const pool = poolOf(1, { timeoutMs: 300 });
    await pool.decode(job(small, "warm"));
    const [pid] = await decoderPids();
    const error = await failure(pool.decode(job(big, "slow")));
    expect(error.reason).toBe("timeout");
    expect(pool.stats().restarts).toBe(1);
    expect(await decoderPids()).not.toContain(pid);
    await expect(pool.decode(job(small, "after"))).resolves.toMatchObject({ width: 64, height: 48 });
    expect(await readdir(workDir)).not.toContain("slow.webp");
  });

  it("replaces a child that ran out of its memory cap and goes on", async () => {
    // Node and sharp take about 95 MB; encoding the 6000×6000 PNG needs one more buffer of 108 MB.
    const pool = poolOf(1, { memoryMb: 160 });
    await pool.decode(job(small, "warm"));
    const error = await failure(pool.decode(job(big, "hungry")));
    expect(error.reason).toBe("memory");
    expect(pool.stats().restarts).toBe(1);
    await expect(pool.decode(job(small, "after"))).resolves.toMatchObject({ width: 64, height: 48 });
  });

  it("replaces a child that crashed mid-job and goes on", async () => {
    const pool = poolOf(1);
    await pool.decode(job(small, "warm"));
    const [pid] = await decoderPids();
    if (pid === undefined) throw new Error("no decoder child found");
    const running = failure(pool.decode(job(big, "crashing")));
    process.kill(pid, "SIGSEGV");
    expect((await running).reason).toBe("crashed");
    expect(pool.stats().restarts).toBe(1);
    await expect(pool.decode(job(small, "after"))).resolves.toMatchObject({ width: 64, height: 48 });
  });

  it("queues jobs beyond its size, reusing its children, and completes them all", async () => {
    const pool = poolOf(2);
    const jobs = Array.from({ length: 7 }, (_, i) => pool.decode(job(small, `queued-${i}`)));
    expect(pool.stats()).toEqual({ size: 2, busy: 2, queued: 5, restarts: 0 });
    for (const result of await Promise.all(jobs)) expect(result).toMatchObject({ width: 64, height: 48, frames: 1 });
    expect(pool.stats()).toEqual({ size: 2, busy: 0, queued: 0, restarts: 0 });
    expect(await decoderPids()).toHaveLength(2);
  });

  it("close() rejects running and queued jobs and leaves no child alive", async () => {
    const pool = poolOf(1);
    await pool.decode(job(small, "warm"));
    const pids = await decoderPids();
    expect(pids).toHaveLength(1);
    const jobs = [job(big, "running"), job(small, "queued-1"), job(small, "queued-2")].map((j) =>
      failure(pool.decode(j)),
    );
    expect(pool.stats()).toMatchObject({ busy: 1, queued: 2 });
    await pool.close();
    for (const error of await Promise.all(jobs)) expect(error.reason).toBe("closed");
    expect(await decoderPids()).toEqual([]);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    expect((await failure(pool.decode(job(small, "late")))).reason).toBe("closed");
    expect(pool.stats().restarts).toBe(0);
  });
});

describe("decoder child: confinement", () => {
  it("runs under its memory cap, without core dumps", async () => {
    const pool = poolOf(1, { memoryMb: 200 });
    await pool.decode(job(small, "limits"));
    const [pid] = await decoderPids();
    const limits = await readFile(`/proc/${pid}/limits`, "utf8");
    expect(limits).toMatch(new RegExp(`^Max data size\\s+${200 * 1024 * 1024}\\s+${200 * 1024 * 1024}\\s+bytes`, "m"));
    expect(limits).toMatch(/^Max core file size\s+0\s/m);
  });

  it("runs its JavaScript with no parent environment, reading and writing only the work dir", () => {
    const command = decoderCommand(workDir, DEFAULT_DECODE_LIMITS);
    // The child's own command line, with a probe in place of the decoder's entry.
    const entry = command.args.findIndex((arg) => arg.endsWith("main.mjs"));
    const probe = `
      const fs = require("node:fs");
      const attempt = (f) => { try { f(); return "allowed"; } catch (e) { return e.code; } };
      console.log(JSON.stringify({
        env: Object.keys(process.env).sort(),
        writeInside: attempt(() => fs.writeFileSync(${JSON.stringify(join(workDir, "probe.txt"))}, "x")),
        writeOutside: attempt(() => fs.writeFileSync(${JSON.stringify(join(tmpdir(), `vellum-probe-${process.pid}`))}, "x")),
        readOutside: attempt(() => fs.readFileSync("/etc/passwd")),
        spawn: attempt(() => require("node:child_process").execFileSync("/bin/true")),
      }));`;
    const args = [...command.args.slice(0, entry), "-e", probe];
    const out = execFileSync(command.file, args, { cwd: command.cwd, env: command.env, encoding: "utf8" });
    expect(JSON.parse(out)).toEqual({
      env: ["MALLOC_ARENA_MAX", "UV_THREADPOOL_SIZE"],
      writeInside: "allowed",
      writeOutside: "ERR_ACCESS_DENIED",
      readOutside: "ERR_ACCESS_DENIED",
      spawn: "ERR_ACCESS_DENIED",
    });
  });

  it("kills itself as soon as its parent goes away, even mid-job", async () => {
    const command = decoderCommand(workDir, DEFAULT_DECODE_LIMITS);
    const child = spawn(command.file, command.args, {
      cwd: command.cwd,
      env: command.env,
      stdio: ["ignore", "ignore", "ignore", "ipc"],
    });
    await once(child, "message");
    const exited = once(child, "exit");
    child.send({ id: 1, job: job(big, "orphan") });
    child.disconnect();
    // Left to itself it would finish the job (a second or so) and exit with 0.
    expect((await exited)[1]).toBe("SIGKILL");
  });
});
