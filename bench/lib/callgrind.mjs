import { execFileSync } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** Under callgrind a server runs 20–50 times slower: the wait for it to be ready. */
const READY_TIMEOUT_MS = 180_000;

/** @returns {boolean} whether valgrind's callgrind and its control program are installed */
export function hasCallgrind() {
  try {
    execFileSync("valgrind", ["--version"], { stdio: "ignore" });
    execFileSync("callgrind_control", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs a server under callgrind with counting off until `control(["--instr=on"], pid)`, its dumps
 * written into `dir`; `simulate` adds the cache and branch simulations, `separateThreads` a dump
 * per thread (`mainThreadEvents`).
 * @param {string} dir
 * @param {boolean} simulate
 * @param {boolean} [separateThreads]
 * @returns {import("./server.mjs").Launcher}
 */
export function callgrindLauncher(dir, simulate, separateThreads = false) {
  return {
    command: "valgrind",
    args: [
      "--tool=callgrind",
      "--instr-atstart=no",
      ...(simulate ? ["--cache-sim=yes", "--branch-sim=yes"] : []),
      ...(separateThreads ? ["--separate-threads=yes"] : []),
      `--callgrind-out-file=${join(dir, "cg.%p")}`,
    ],
    readyTimeoutMs: READY_TIMEOUT_MS,
  };
}

/** @param {string[]} args @param {number} pid */
export const control = (args, pid) => execFileSync("callgrind_control", [...args, String(pid)], { stdio: "ignore" });

/**
 * The events of one dump file, by name: its `events:` line and its `totals:` (or, in older dumps,
 * `summary:`) line.
 * @param {string} path
 * @returns {Promise<Record<string, number>>}
 */
async function fileEvents(path) {
  const text = await readFile(path, "utf8");
  const names = /^events: (.+)$/m.exec(text)?.[1]?.trim().split(/\s+/);
  const totals = /^(?:totals|summary): (.+)$/m.exec(text)?.[1]?.trim().split(/\s+/).map(Number);
  if (!names || !totals) throw new Error(`the callgrind dump ${path} has no events or totals line`);
  return Object.fromEntries(names.map((name, i) => [name, totals[i] ?? 0]));
}

/**
 * The events callgrind counted since instrumentation was switched on, by name (`Ir` instructions,
 * and with the simulations `I1mr`, `D1mr`, `D1mw`, `ILmr`, `DLmr`, `DLmw`, `Bcm`, `Bim`, …), in
 * every thread: the dump `callgrind_control -d` wrote into `dir` (one file per thread with
 * `separateThreads`, summed).
 * @param {string} dir
 * @returns {Promise<Record<string, number>>}
 */
export async function dumpedEvents(dir) {
  const dumps = (await readdir(dir)).filter((name) => /^cg\.\d+\.\d+(-\d+)?$/.test(name));
  if (dumps.length === 0) throw new Error("callgrind wrote no dump");
  /** @type {Record<string, number>} */
  const sum = {};
  for (const dump of dumps) {
    for (const [name, count] of Object.entries(await fileEvents(join(dir, dump)))) sum[name] = (sum[name] ?? 0) + count;
  }
  return sum;
}

/**
 * The events of the main thread alone (a launcher with `separateThreads`): the JavaScript, and so
 * what bounds a Node server's throughput, without V8's compiler and garbage collector threads.
 * @param {string} dir
 * @returns {Promise<Record<string, number>>}
 */
export async function mainThreadEvents(dir) {
  const dumps = (await readdir(dir)).filter((name) => /^cg\.\d+\.\d+-01$/.test(name));
  if (dumps.length !== 1) throw new Error(`expected one dump of the main thread, found ${dumps.length}`);
  return fileEvents(join(dir, dumps[0] ?? ""));
}
