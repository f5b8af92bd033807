import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { get } from "node:http";
import { createServer } from "node:net";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";

const HOST = "127.0.0.1";
const POLL_MS = 10;
const READY_TIMEOUT_MS = 15_000;
const KILL_AFTER_MS = 5_000;
const SAMPLE_MS = 200;
const OUTPUT_TAIL_CHARS = 8_192;
/** Starts tried when the port picked for the child was taken before it could bind it. */
const START_ATTEMPTS = 3;

/** @type {Set<import("node:child_process").ChildProcess>} */
const live = new Set();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

/**
 * @typedef {object} RunningServer
 * @property {string} url base URL, e.g. http://127.0.0.1:41234
 * @property {number} pid
 * @property {number} readyMs milliseconds from spawn to the first 200 on the ready path
 * @property {() => Promise<void>} stop SIGTERM, then SIGKILL after 5 s
 * @property {() => number} rssBytes current resident set size (last sample once the child has exited)
 * @property {() => number} peakRssBytes peak resident set size (VmHWM)
 * @property {() => number | undefined} cpuSeconds CPU time (user + system) used so far; undefined without /proc
 */

/**
 * @typedef {object} Launcher a program that runs `node` (valgrind): `command ...args node <server args>`
 * @property {string} command
 * @property {string[]} args
 * @property {number} readyTimeoutMs how long the server may take to answer (a profiler slows it down)
 */

/** @returns {Promise<number>} a port that was free a moment ago on 127.0.0.1 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, HOST, () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux for all mainstream architectures). */
const TICKS_PER_SECOND = 100;

/**
 * A file of /proc/<pid>/, or undefined where there is no /proc (or the process is gone).
 * @param {number} pid
 * @param {string} name
 * @returns {string | undefined}
 */
export function procFile(pid, name) {
  try {
    return readFileSync(`/proc/${pid}/${name}`, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds (user + system) the process has used so far.
 * @param {number} pid
 * @returns {number | undefined}
 */
export function readCpuSeconds(pid) {
  const stat = procFile(pid, "stat");
  if (stat === undefined) return undefined;
  // Fields after the command name (which may hold spaces, inside parentheses): utime is field 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/**
 * What the process has handed to write calls so far (`wchar`, `syscw` of /proc/<pid>/io): every
 * file and socket write, whether or not it reached the disk.
 * @param {number} pid
 * @returns {{ bytes: number, calls: number } | undefined}
 */
export function readWrites(pid) {
  const io = procFile(pid, "io");
  if (io === undefined) return undefined;
  const field = (name) => Number(new RegExp(`^${name}: (\\d+)$`, "m").exec(io)?.[1] ?? Number.NaN);
  return { bytes: field("wchar"), calls: field("syscw") };
}

/**
 * The machine's CPU time so far, in ticks: all of it, and what the hypervisor took for other guests
 * (`steal`, from /proc/stat). Undefined where /proc/stat is not there.
 * @returns {{ total: number, steal: number } | undefined}
 */
export function machineTicks() {
  try {
    const fields = readFileSync("/proc/stat", "utf8").split("\n", 1)[0].trim().split(/\s+/).slice(1, 9).map(Number);
    return { total: fields.reduce((sum, n) => sum + n, 0), steal: fields[7] ?? 0 };
  } catch {
    return undefined;
  }
}

/**
 * The share of the machine's CPU time taken by the hypervisor between two `machineTicks()`: on a
 * shared virtual machine it makes the same run slower by as much, whatever the code does.
 * @param {ReturnType<typeof machineTicks>} before
 * @param {ReturnType<typeof machineTicks>} after
 * @returns {number | null}
 */
export function stolenShare(before, after) {
  if (!before || !after || after.total <= before.total) return null;
  return (after.steal - before.steal) / (after.total - before.total);
}

/**
 * @param {number} pid
 * @returns {{ rss: number, hwm: number } | undefined}
 */
export function readMemory(pid) {
  const status = procFile(pid, "status");
  if (status === undefined) return undefined;
  /** @param {string} field */
  const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
  return { rss: kib("VmRSS"), hwm: kib("VmHWM") };
}

/**
 * @param {string} url
 * @returns {Promise<number>} the status code, or 0 when the request failed
 */
function probeStatus(url) {
  return new Promise((resolve) => {
    const req = get(url, { agent: false, timeout: 1_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once("timeout", () => req.destroy());
    req.once("error", () => resolve(0));
  });
}

/**
 * Picks the most telling line of a failed child's output: a thrown error, else a logged error, else the last line.
 * @param {string} output
 */
function reason(output) {
  const lines = output
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  const line = lines.find((l) => /^[\w.]*Error\b/.test(l)) ?? lines.find((l) => /error|fatal/i.test(l)) ?? lines.at(-1);
  return line?.slice(0, 300) ?? "no output";
}

/**
 * Spawns a server child process on a free port and resolves once `readyPath` answers 200.
 * @param {object} options
 * @param {(port: number) => string[]} options.args arguments for `node`, given the chosen port
 * @param {string} [options.readyPath] path polled every 10 ms until it answers 200 (default /health/live)
 * @param {NodeJS.ProcessEnv} [options.env] extra environment variables for the child
 * @param {(chunk: Buffer) => void} [options.onOutput] also given everything the child writes (stdout and stderr)
 * @param {Launcher} [options.launcher] runs `node` under another program (a profiler)
 * @returns {Promise<RunningServer>}
 */
export async function startServer(options) {
  // The port is free when picked and taken when the child binds it: another socket may get it between.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (err) {
      if (attempt >= START_ATTEMPTS || !(err instanceof Error && err.message.includes("EADDRINUSE"))) throw err;
    }
  }
}

/** @param {Parameters<typeof startServer>[0]} options @returns {Promise<RunningServer>} */
async function startOnce({ args, readyPath = "/health/live", env = {}, onOutput, launcher }) {
  const port = await freePort();
  const url = `http://${HOST}:${port}`;
  const startedAt = performance.now();
  const command = launcher ? launcher.command : process.execPath;
  const child = spawn(command, launcher ? [...launcher.args, process.execPath, ...args(port)] : args(port), {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  let output = "";
  /** @param {Buffer} chunk */
  const keepTail = (chunk) => {
    output = (output + chunk.toString()).slice(-OUTPUT_TAIL_CHARS);
    onOutput?.(chunk);
  };
  child.stdout.on("data", keepTail);
  child.stderr.on("data", keepTail);

  /** @type {{ code: number | null, signal: string | null } | undefined} */
  let exited;
  const exit = new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      exited = { code, signal };
      live.delete(child);
      resolve(undefined);
    });
  });
  const closed = new Promise((resolve) => child.once("close", resolve));
  child.once("error", (err) => {
    keepTail(Buffer.from(`spawn error: ${err.message}\n`));
    if (!child.pid) exited = { code: null, signal: null };
  });

  let memory = { rss: 0, hwm: 0 };
  const sample = () => {
    const read = exited || !child.pid ? undefined : readMemory(child.pid);
    if (read) memory = read;
    return memory;
  };
  const sampler = setInterval(sample, SAMPLE_MS);
  sampler.unref();

  const stop = async () => {
    clearInterval(sampler);
    if (exited) return;
    sample();
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
    await exit;
    clearTimeout(killer);
  };

  const readyTimeoutMs = launcher?.readyTimeoutMs ?? READY_TIMEOUT_MS;
  const deadline = startedAt + readyTimeoutMs;
  for (;;) {
    if (exited) {
      clearInterval(sampler);
      await Promise.race([closed, sleep(1_000)]);
      const how = exited.signal ? `signal ${exited.signal}` : `code ${exited.code}`;
      throw new Error(`exited with ${how} before ${readyPath} answered 200: ${reason(output)}`);
    }
    if ((await probeStatus(url + readyPath)) === 200) break;
    if (performance.now() > deadline) {
      await stop();
      throw new Error(`did not answer 200 on ${readyPath} within ${readyTimeoutMs / 1000} s`);
    }
    await sleep(POLL_MS);
  }
  const readyMs = performance.now() - startedAt;
  sample();

  return {
    url,
    pid: child.pid ?? 0,
    readyMs,
    stop,
    rssBytes: () => sample().rss,
    peakRssBytes: () => sample().hwm,
    cpuSeconds: () => (child.pid ? readCpuSeconds(child.pid) : undefined),
  };
}
