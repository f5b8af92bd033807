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
 * written into `dir`; `simulate` adds the cache and branch simulations.
 * @param {string} dir
 * @param {boolean} simulate
 * @returns {import("./server.mjs").Launcher}
 */
export function callgrindLauncher(dir, simulate) {
  return {
    command: "valgrind",
    args: [
      "--tool=callgrind",
      "--instr-atstart=no",
      ...(simulate ? ["--cache-sim=yes", "--branch-sim=yes"] : []),
      `--callgrind-out-file=${join(dir, "cg.%p")}`,
    ],
    readyTimeoutMs: READY_TIMEOUT_MS,
  };
}

/** @param {string[]} args @param {number} pid */
export const control = (args, pid) => execFileSync("callgrind_control", [...args, String(pid)], { stdio: "ignore" });

/**
 * The events callgrind counted since instrumentation was switched on, by name (`Ir` instructions,
 * and with the simulations `I1mr`, `D1mr`, `D1mw`, `ILmr`, `DLmr`, `DLmw`, `Bcm`, `Bim`, …): the
 * `events:` line and the `totals:` (or, in older dumps, `summary:`) line of the dump
 * `callgrind_control -d` wrote into `dir`.
 * @param {string} dir
 * @returns {Promise<Record<string, number>>}
 */
export async function dumpedEvents(dir) {
  const dumps = (await readdir(dir)).filter((name) => /^cg\.\d+\.\d+$/.test(name));
  if (dumps.length !== 1) throw new Error(`expected one callgrind dump, found ${dumps.length}`);
  const text = await readFile(join(dir, dumps[0] ?? ""), "utf8");
  const names = /^events: (.+)$/m.exec(text)?.[1]?.trim().split(/\s+/);
  const totals = /^(?:totals|summary): (.+)$/m.exec(text)?.[1]?.trim().split(/\s+/).map(Number);
  if (!names || !totals) throw new Error("the callgrind dump has no events or totals line");
  return Object.fromEntries(names.map((name, i) => [name, totals[i] ?? 0]));
}
