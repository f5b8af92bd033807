import { spawn } from "node:child_process";
import { open } from "node:fs/promises";
import { fileURLToPath } from "node:url";

const CHILD = fileURLToPath(new URL("./backup-child.mjs", import.meta.url));

/**
 * @typedef {object} ChildRun what bench/lib/backup-child.mjs reported
 * @property {string} op
 * @property {number} wallMs the op alone (imports excluded)
 * @property {number} cpuMs user + system CPU over the op
 * @property {number} processCpuMs user + system CPU of the whole process
 * @property {number} peakRssBytes VmHWM: the process's peak RSS, imports included
 * @property {number | null} ownPeakBytes the op's own peak: VmHWM over the op less the RSS at its
 *   start (after a GC, with VmHWM reset there); null where /proc/self/clear_refs is not available
 * @property {{ calls: number, ms: number, cpuMs: number }} kdf Argon2id calls and their time
 * @property {{ startBytes: number, beforeKdfBytes: number, kdfBytes: number, afterKdfBytes: number }} rss
 *   sampled RSS: at the op's start, and the peaks before, during and after Argon2id
 * @property {any} result
 * @property {string} [error]
 */

/**
 * Runs one op of bench/lib/backup-child.mjs in a new node process, killed after `timeoutMs`.
 * With env BENCH_BACKUP_CPU_PROF=<dir>, the child writes a V8 CPU profile there.
 * @param {string} op
 * @param {Record<string, unknown>} args
 * @param {number} timeoutMs
 * @returns {Promise<ChildRun>}
 */
export function runChild(op, args, timeoutMs) {
  const profile = process.env.BENCH_BACKUP_CPU_PROF;
  const flags = profile
    ? ["--cpu-prof", `--cpu-prof-dir=${profile}`, `--cpu-prof-name=${op}-${Date.now()}.cpuprofile`]
    : [];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--expose-gc", ...flags, CHILD, op, JSON.stringify(args)], {
      stdio: ["ignore", "pipe", "pipe"],
      timeout: timeoutMs,
      killSignal: "SIGKILL",
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text) => (stdout += text));
    child.stderr.setEncoding("utf8").on("data", (text) => (stderr += text));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      const last = stdout.trim().split("\n").pop() ?? "";
      if (signal === "SIGKILL") {
        reject(new Error(`${op} did not finish within ${(timeoutMs / 1000).toFixed(0)} s (killed)`));
      } else if (code !== 0 || !last.startsWith("{")) {
        reject(new Error(`${op} exited with ${code ?? signal}: ${stderr.trim().slice(-500) || stdout.slice(-500)}`));
      } else {
        /** @type {ChildRun} */
        const run = JSON.parse(last);
        if (run.error) reject(new Error(`${op} failed: ${run.error}`));
        else resolve(run);
      }
    });
  });
}

const MIB = 1024 * 1024;

/**
 * The figures of one op over `bytes` of data.
 * @param {ChildRun} run
 * @param {number} bytes
 */
export function figures(run, bytes) {
  return {
    seconds: run.wallMs / 1000,
    mibPerS: bytes / MIB / (run.wallMs / 1000),
    mibPerCpuS: bytes / MIB / (run.cpuMs / 1000),
    /** Wall throughput without the Argon2id time. */
    mibPerSNoKdf: bytes / MIB / ((run.wallMs - run.kdf.ms) / 1000),
    kdfMs: run.kdf.ms,
    peakRssBytes: run.peakRssBytes,
  };
}

/** The run of `runs` with the shortest wall time. */
export function best(/** @type {ChildRun[]} */ runs) {
  return runs.reduce((a, b) => (b.wallMs < a.wallMs ? b : a));
}

/**
 * Reads every file of `paths` once, so that the op after it reads from the page cache as its
 * baseline does. On these machines the cache does not always keep what the last op read: rounds
 * read from the disk at 180–350 MB/s turned up beside rounds read from memory, about twice as slow.
 * @param {string[]} paths
 */
export async function warmPageCache(paths) {
  const buffer = Buffer.allocUnsafe(4 * MIB);
  for (const path of paths) {
    const handle = await open(path, "r");
    try {
      while ((await handle.read(buffer, 0, buffer.length, null)).bytesRead > 0);
    } finally {
      await handle.close();
    }
  }
}
