import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { runNodeJson } from "./node-json.mjs";

const require = createRequire(import.meta.url);
const manifestPath = require.resolve("autocannon/package.json");
const autocannonBin = join(dirname(manifestPath), JSON.parse(readFileSync(manifestPath, "utf8")).bin.autocannon);

/** Seconds of slack on top of the run duration before the load process is killed. */
const GRACE_SECONDS = 30;

/**
 * @typedef {object} LoadResult
 * @property {number} rps average requests per second
 * @property {number} p50 median latency in ms
 * @property {number} p99 99th percentile latency in ms
 * @property {number} errors connection errors and timeouts
 * @property {number} non2xx responses with a status outside 2xx
 * @property {number} total requests completed
 */

/** @returns {number} seconds per measured run: env BENCH_DURATION, else 10 */
export function defaultDuration() {
  const fromEnv = Number(process.env.BENCH_DURATION);
  return Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : 10;
}

/**
 * Runs autocannon in its own process so the load generator never shares an event loop with the harness.
 * @param {object} options
 * @param {string} options.url full URL to load
 * @param {number} [options.connections] concurrent connections (default 50)
 * @param {number} [options.duration] seconds (default: env BENCH_DURATION, else 10); with `amount`, the
 *   seconds the run may take at most
 * @param {number} [options.amount] send this many requests instead of loading for `duration`
 * @param {string} [options.method] HTTP method (default GET)
 * @param {Record<string, string>} [options.headers]
 * @param {string} [options.body]
 * @returns {Promise<LoadResult>}
 */
export async function runLoad({
  url,
  connections = 50,
  duration = defaultDuration(),
  method = "GET",
  headers = {},
  body,
  amount,
}) {
  const length = amount === undefined ? ["-d", String(duration)] : ["-a", String(amount)];
  const args = [autocannonBin, "--json", "-c", String(connections), ...length, "-m", method];
  for (const [key, value] of Object.entries(headers)) args.push("-H", `${key}=${value}`);
  if (body !== undefined) args.push("-b", body);
  args.push(url);

  const result = await runNodeJson(args, { label: "autocannon", timeoutMs: (duration + GRACE_SECONDS) * 1000 });
  return loadSummary(result);
}

/**
 * What the report reads of an autocannon result (also printed by the load scripts that run
 * autocannon themselves, in their own process).
 * @param {any} result autocannon's result object or its `--json` output
 */
export function loadSummary(result) {
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    total: result.requests.total,
  };
}

/**
 * Runs `work` and returns its result with the server's CPU time per unit over it (user + system,
 * from /proc, divided by `units(result)`); null where it cannot be read. CPU per request depends
 * far less than req/s on what else the two cores are doing (the load generator, noisy
 * neighbours), so A/B comparisons read it.
 * @template T
 * @param {import("./server.mjs").RunningServer} server
 * @param {() => Promise<T>} work
 * @param {(result: T) => number} units
 * @returns {Promise<{ result: T, cpuUsPerUnit: number | null }>}
 */
export async function withServerCpu(server, work, units) {
  const before = server.cpuSeconds();
  const result = await work();
  const after = server.cpuSeconds();
  const count = units(result);
  const cpuUsPerUnit = before === undefined || after === undefined || !count ? null : ((after - before) * 1e6) / count;
  return { result, cpuUsPerUnit };
}

/**
 * A measured load run on a server of ours: `runLoad` plus the server's CPU time per request.
 * @param {import("./server.mjs").RunningServer} server
 * @param {Parameters<typeof runLoad>[0]} options
 * @returns {Promise<LoadResult & { cpuUsPerRequest: number | null }>}
 */
export async function runServerLoad(server, options) {
  const { result, cpuUsPerUnit } = await withServerCpu(
    server,
    () => runLoad(options),
    (load) => load.total,
  );
  return { ...result, cpuUsPerRequest: cpuUsPerUnit };
}
