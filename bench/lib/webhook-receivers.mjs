import { fileURLToPath } from "node:url";
import { freePort, startServer } from "./server.mjs";

const receiverScript = fileURLToPath(new URL("../servers/webhook-receiver.mjs", import.meta.url));

/**
 * What a receiver reports (`GET /stats`): ms are the receivers' process clock.
 * @typedef {object} ReceiverStats
 * @property {number} port
 * @property {number} count deliveries answered
 * @property {number} unique distinct events answered
 * @property {Record<string, number>} types distinct events answered, by event (`X-Service-Event`)
 * @property {number} firstMs
 * @property {number} lastMs
 * @property {Record<string, number>} bySecond deliveries answered in each whole second of that clock
 * @property {number} outOfOrder
 * @property {number} duplicates
 * @property {{ n: number, p50: number, p95: number, p99: number, max: number }} lagMs commit → arrival
 */

/** A receiver's URL on 127.0.0.1. */
export const hookUrl = (port) => `http://127.0.0.1:${port}/hook`;

/**
 * `count` receivers on 127.0.0.1, one process for them all (see `bench/servers/webhook-receiver.mjs`).
 * They hold every first delivery unanswered until `release()` with `hold`, answer every
 * `failEvery`-th delivery 500 (when set), and exit by themselves after `lifetimeSeconds`.
 * @param {number} count
 * @param {{ hold?: boolean, failEvery?: number, lifetimeSeconds: number }} options
 */
export async function startReceivers(count, { hold = false, failEvery = 0, lifetimeSeconds }) {
  const extra = await Promise.all(Array.from({ length: count - 1 }, freePort));
  const child = await startServer({
    args: (port) => [
      receiverScript,
      ...["--ports", [port, ...extra].join(","), "--lifetime", String(lifetimeSeconds)],
      ...(hold ? ["--hold"] : []),
      ...(failEvery > 0 ? ["--fail-every", String(failEvery)] : []),
    ],
  });
  const ports = [Number(new URL(child.url).port), ...extra];
  return {
    process: child,
    urls: ports.map(hookUrl),
    /** @returns {Promise<ReceiverStats[]>} */
    stats: async () => (await fetch(`${child.url}/stats`)).json(),
    release: async () => (await fetch(`${child.url}/release`, { method: "POST" })).json(),
  };
}

/**
 * All receivers' counts: deliveries, their rate from the first to the last, the slowest and the
 * fastest whole second between (all receivers together), order and duplicates.
 */
export function totals(stats) {
  const count = stats.reduce((sum, s) => sum + s.count, 0);
  const spanMs = Math.max(...stats.map((s) => s.lastMs)) - Math.min(...stats.map((s) => s.firstMs));
  /** @type {Map<number, number>} */
  const bySecond = new Map();
  for (const s of stats) {
    for (const [second, n] of Object.entries(s.bySecond)) bySecond.set(+second, (bySecond.get(+second) ?? 0) + n);
  }
  // The first and the last second are partial.
  const whole = [...bySecond]
    .sort(([a], [b]) => a - b)
    .slice(1, -1)
    .map(([, n]) => n);
  return {
    count,
    perSecond: spanMs > 0 ? ((count - 1) * 1000) / spanMs : Number.NaN,
    slowestSecond: whole.length ? Math.min(...whole) : Number.NaN,
    fastestSecond: whole.length ? Math.max(...whole) : Number.NaN,
    outOfOrder: stats.reduce((sum, s) => sum + s.outOfOrder, 0),
    duplicates: stats.reduce((sum, s) => sum + s.duplicates, 0),
  };
}

/**
 * Commit → delivery from the server's `service_webhook_delivery_lag_seconds` histogram (all
 * receivers together): the count, the mean, and the bucket bounds holding the median and the 99th.
 */
export async function lagHistogram(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  /** @type {Map<number, number>} */
  const buckets = new Map();
  let sum = 0;
  let count = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith("service_webhook_delivery_lag_seconds")) continue;
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (line.startsWith("service_webhook_delivery_lag_seconds_bucket")) {
      const le = /le="([^"]+)"/.exec(line)?.[1] ?? "+Inf";
      const bound = le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le);
      buckets.set(bound, (buckets.get(bound) ?? 0) + value);
    } else if (line.startsWith("service_webhook_delivery_lag_seconds_sum")) sum += value;
    else if (line.startsWith("service_webhook_delivery_lag_seconds_count")) count += value;
  }
  const sorted = [...buckets].sort(([a], [b]) => a - b);
  const bound = (q) => sorted.find(([, n]) => n >= q * count)?.[0] ?? Number.NaN;
  return {
    count,
    meanMs: count ? (sum / count) * 1000 : Number.NaN,
    p50LeMs: bound(0.5) * 1000,
    p99LeMs: bound(0.99) * 1000,
  };
}
