import { readdirSync } from "node:fs";
import { procFile, readCpuSeconds, readMemory } from "./server.mjs";

/**
 * Every live descendant of `pid` (children, their children, …), read from
 * `/proc/<pid>/task/<tid>/children`; empty without /proc.
 * @param {number} pid
 * @returns {number[]}
 */
export function descendants(pid) {
  const found = [];
  const stack = [pid];
  while (stack.length) {
    const parent = /** @type {number} */ (stack.pop());
    let tasks = [];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      continue; // gone, or no /proc
    }
    for (const tid of tasks) {
      const children = procFile(parent, `task/${tid}/children`) ?? "";
      for (const child of children.split(" ").filter(Boolean).map(Number)) {
        found.push(child);
        stack.push(child);
      }
    }
  }
  return found;
}

/** A process's command line, arguments joined by spaces ("" once it is gone). */
const commandLine = (pid) => (procFile(pid, "cmdline") ?? "").split("\0").join(" ").trim();

/**
 * @typedef {object} DescendantStats
 * @property {number} pid
 * @property {string} command its command line when first seen
 * @property {number} peakRssBytes largest VmRSS sampled in the window
 * @property {number} hwmBytes its VmHWM (peak since it started) at its last sample
 * @property {number} cpuSeconds CPU time used in the window (from 0 for a process started in it)
 */

/**
 * @typedef {object} TreeWindow
 * @property {number} samples
 * @property {number} rootPeakRssBytes the root's largest VmRSS sampled in the window
 * @property {number} rootHwmBytes the root's VmHWM (peak since it started) at the window's end
 * @property {number} rootCpuSeconds the root's CPU time in the window
 * @property {number} descendantsPeakRssBytes largest sum of the descendants' VmRSS at one sample
 * @property {DescendantStats[]} descendants every descendant seen in the window
 */

/**
 * Samples the memory of `rootPid` and of all its descendants every `everyMs` (VmRSS, VmHWM from
 * /proc/<pid>/status), and their CPU time. `window()` opens a measurement window; its `end()` gives
 * the peaks and the CPU time of that window. Windows may overlap. `stop()` ends the sampling.
 * @param {number} rootPid
 * @param {{ everyMs?: number }} [options]
 */
export function sampleProcessTree(rootPid, { everyMs = 50 } = {}) {
  /** @type {Set<(read: ReturnType<typeof readTree>) => void>} */
  const open = new Set();
  /** @type {Map<number, string>} */
  const commands = new Map();

  const readTree = () => {
    const pids = descendants(rootPid);
    return {
      root: readMemory(rootPid),
      rootCpu: readCpuSeconds(rootPid),
      children: pids.flatMap((pid) => {
        const memory = readMemory(pid);
        const cpu = readCpuSeconds(pid);
        if (!memory || cpu === undefined) return [];
        if (!commands.has(pid)) commands.set(pid, commandLine(pid));
        return [{ pid, ...memory, cpu }];
      }),
    };
  };

  const tick = () => {
    const read = readTree();
    for (const update of open) update(read);
  };
  const timer = setInterval(tick, everyMs);
  timer.unref();

  return {
    /** Opens a window now; `end()` samples once more and closes it. */
    window() {
      const first = readTree();
      const cpuAtStart = new Map(first.children.map((c) => [c.pid, c.cpu]));
      const rootCpuAtStart = first.rootCpu;
      let samples = 0;
      let rootPeak = 0;
      let rootHwm = 0;
      let rootCpu = rootCpuAtStart;
      let sumPeak = 0;
      /** @type {Map<number, DescendantStats>} */
      const seen = new Map();
      /** @param {ReturnType<typeof readTree>} read */
      const update = (read) => {
        samples++;
        if (read.root) {
          rootPeak = Math.max(rootPeak, read.root.rss);
          rootHwm = read.root.hwm;
        }
        if (read.rootCpu !== undefined) rootCpu = read.rootCpu;
        let sum = 0;
        for (const child of read.children) {
          sum += child.rss;
          const stats = seen.get(child.pid) ?? {
            pid: child.pid,
            command: commands.get(child.pid) ?? "",
            peakRssBytes: 0,
            hwmBytes: 0,
            cpuSeconds: 0,
          };
          stats.peakRssBytes = Math.max(stats.peakRssBytes, child.rss);
          stats.hwmBytes = child.hwm;
          stats.cpuSeconds = child.cpu - (cpuAtStart.get(child.pid) ?? 0);
          seen.set(child.pid, stats);
        }
        sumPeak = Math.max(sumPeak, sum);
      };
      update(first);
      open.add(update);
      return {
        /** @returns {TreeWindow} */
        end() {
          update(readTree());
          open.delete(update);
          return {
            samples,
            rootPeakRssBytes: rootPeak,
            rootHwmBytes: rootHwm,
            rootCpuSeconds:
              rootCpuAtStart === undefined || rootCpu === undefined ? Number.NaN : rootCpu - rootCpuAtStart,
            descendantsPeakRssBytes: sumPeak,
            descendants: [...seen.values()],
          };
        },
      };
    },
    stop() {
      clearInterval(timer);
      open.clear();
    },
  };
}
