import { setTimeout as sleep } from "node:timers/promises";
import { targets } from "../lib/targets.mjs";

const RUNS = 5;
const IDLE_WAIT_MS = 2_000;

/** @param {number[]} values */
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** @param {number} bytes */
const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);

/**
 * Process spawn → first 200 on /health/live, five fresh processes per target, and RSS 2 s after ready.
 * @type {import("./registry.mjs").Scenario}
 */
export default async function coldStart() {
  /** @type {string[]} */
  const lines = [];
  /** @type {string[]} */
  const failures = [];
  /** @type {Record<string, { readyMs: number[], idleRssBytes: number[] }>} */
  const data = {};
  for (const target of targets) {
    process.stderr.write(`cold-start: ${target.name}\n`);
    const readyMs = [];
    const idleRssBytes = [];
    try {
      for (let run = 0; run < RUNS; run++) {
        const server = await target.start();
        try {
          readyMs.push(server.readyMs);
          await sleep(IDLE_WAIT_MS);
          idleRssBytes.push(server.rssBytes());
        } finally {
          await server.stop();
        }
      }
    } catch (err) {
      failures.push(`${target.name}: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    data[target.name] = { readyMs, idleRssBytes };
    lines.push(
      `cold start, ${target.name}: median ${median(readyMs).toFixed(0)} ms, max ${Math.max(...readyMs).toFixed(0)} ms` +
        ` (${RUNS} runs, spawn → first 200 on /health/live)`,
      `idle RSS 2 s after ready, ${target.name}: ${mb(median(idleRssBytes))} MB (median of ${RUNS})`,
    );
  }
  return { lines, failures, data };
}
