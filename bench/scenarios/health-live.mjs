import { runLoad, runServerLoad } from "../lib/load.mjs";
import { bare, h3Headers, vellum } from "../lib/targets.mjs";

const PATH = "/health/live";
const WARMUP_SECONDS = 2;

/** The kernel's reference first after the baseline: h3 sending the same headers. */
const targets = [bare, h3Headers, vellum];

/**
 * GET /health/live under 50 connections: throughput, latency and peak memory of each target, and
 * the kernel's share of h3 sending the same headers (issue 10's target: at least 80 %).
 * @type {import("./registry.mjs").Scenario}
 */
export default async function healthLive() {
  /** @type {import("./registry.mjs").LoadRow[]} */
  const rows = [];
  /** @type {string[]} */
  const failures = [];
  for (const target of targets) {
    process.stderr.write(`health-live: ${target.name}\n`);
    let server;
    try {
      server = await target.start();
      await runLoad({ url: server.url + PATH, duration: WARMUP_SECONDS });
      const load = await runServerLoad(server, { url: server.url + PATH });
      rows.push({ target: target.name, ...load, peakRssBytes: server.peakRssBytes(), ratio: null });
    } catch (err) {
      failures.push(`${target.name}: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      await server?.stop();
    }
  }
  const baseline = rows.find((row) => row.target === targets[0].name);
  for (const row of rows) row.ratio = baseline?.rps ? row.rps / baseline.rps : null;
  const h3 = rows.find((row) => row.target === h3Headers.name);
  const kernel = rows.find((row) => row.target === vellum.name);
  const lines =
    h3?.rps && kernel
      ? [
          `kernel on a constant JSON route: ${((kernel.rps / h3.rps) * 100).toFixed(0)} % of h3 sending the same headers`,
        ]
      : [];
  return { rows, lines, failures };
}
