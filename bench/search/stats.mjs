/** @param {number[]} values @param {number} p 0..100 */
export function percentile(values, p) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

/** @param {number[]} values */
export const summary = (values) => ({
  n: values.length,
  p50: percentile(values, 50),
  p95: percentile(values, 95),
  p99: percentile(values, 99),
  max: Math.max(...values),
});

/**
 * Latency summaries overall and per query kind.
 * @param {Array<{ kind: string }>} queries @param {number[]} ms same order as `queries`
 */
export function byKind(queries, ms) {
  const kinds = {};
  queries.forEach((q, i) => {
    kinds[q.kind] = [...(kinds[q.kind] ?? []), ms[i]];
  });
  return { all: summary(ms), ...Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, summary(v)])) };
}

/** Peak resident set size of this process (VmHWM), in bytes. */
export async function peakRss() {
  const { readFile } = await import("node:fs/promises");
  const status = await readFile("/proc/self/status", "utf8");
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
}

/** Prints the result object as the last line of stdout (the scenario reads it). */
export function emit(result) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
