import { runLoad, runServerLoad } from "../lib/load.mjs";
import { bare, h3Headers, vellum } from "../lib/targets.mjs";

const PATH = "/health/live";
const WARMUP_SECONDS = 2;
/** Pairs of h3 and Vellum runs, alternating which goes first; env BENCH_KERNEL_ROUNDS. */
const ROUNDS = Number(process.env.BENCH_KERNEL_ROUNDS) || 3;

/**
 * One warmed-up measured run of `target`.
 * @param {import("../lib/targets.mjs").Target} target
 */
async function measure(target) {
  process.stderr.write(`health-live: ${target.name}\n`);
  const server = await target.start();
  try {
    await runLoad({ url: server.url + PATH, duration: WARMUP_SECONDS });
    const load = await runServerLoad(server, { url: server.url + PATH });
    return { ...load, peakRssBytes: server.peakRssBytes() };
  } finally {
    await server.stop();
  }
}

/** @param {number[]} values */
const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;

/**
 * GET /health/live under 50 connections: throughput, latency and peak memory of each target, and
 * the kernel's share of h3 sending the same headers (issue 10's target: at least 80 %). Bare
 * `node:http` runs once; h3 and Vellum run in `ROUNDS` pairs, one right after the other, since on
 * the shared machines req/s drifts by tens of percent over a minute but less between neighbours.
 * Their rows are the means over the rounds; the share is the mean of the pairs' shares.
 * @type {import("./registry.mjs").Scenario}
 */
export default async function healthLive() {
  /** @type {import("./registry.mjs").LoadRow[]} */
  const rows = [];
  /** @type {string[]} */
  const failures = [];
  /** @type {Map<string, Array<Awaited<ReturnType<typeof measure>>>>} */
  const runs = new Map();
  /** @type {number[]} */
  const shares = [];
  const order = [
    [bare],
    ...Array.from({ length: ROUNDS }, (_, i) => (i % 2 === 0 ? [h3Headers, vellum] : [vellum, h3Headers])),
  ];
  for (const pair of order) {
    /** @type {Map<string, number>} */
    const rps = new Map();
    for (const target of pair) {
      try {
        const run = await measure(target);
        runs.set(target.name, [...(runs.get(target.name) ?? []), run]);
        rps.set(target.name, run.rps);
      } catch (err) {
        failures.push(`${target.name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    const h3 = rps.get(h3Headers.name);
    const kernel = rps.get(vellum.name);
    if (h3 && kernel) shares.push(kernel / h3);
  }
  for (const [target, list] of runs) {
    const pick = (/** @type {(run: (typeof list)[number]) => number} */ of) => mean(list.map(of));
    const cpu = list.every((run) => run.cpuUsPerRequest !== null) ? pick((run) => run.cpuUsPerRequest ?? 0) : null;
    rows.push({
      target,
      rps: pick((run) => run.rps),
      p50: pick((run) => run.p50),
      p99: pick((run) => run.p99),
      errors: pick((run) => run.errors),
      non2xx: pick((run) => run.non2xx),
      total: pick((run) => run.total),
      cpuUsPerRequest: cpu,
      peakRssBytes: Math.max(...list.map((run) => run.peakRssBytes)),
      ratio: null,
    });
  }
  const baseline = rows.find((row) => row.target === bare.name);
  for (const row of rows) row.ratio = baseline?.rps ? row.rps / baseline.rps : null;
  const percent = (/** @type {number} */ share) => `${(share * 100).toFixed(0)} %`;
  const lines = shares.length
    ? [
        `kernel on a constant JSON route: ${percent(mean(shares))} of h3 sending the same headers ` +
          `(mean of ${shares.length} pairs: ${shares.map(percent).join(", ")})`,
      ]
    : [];
  return { rows, lines, failures, data: { shares } };
}
