import { percentile } from "../search/stats.mjs";

/**
 * The most file descriptors a server may hold at the end of its run above what it held a minute
 * in. Its peak is higher and says nothing: each connection is one, and the client opens up to 64
 * when answers slow down (a backup's snapshot, say).
 */
const MAX_FD_GROWTH = 20;
/** The largest WAL allowed: `journal_size_limit` (64 MiB) and room for one checkpoint's worth. */
const MAX_WAL_MB = 80;

/**
 * Every article the service lists, through the public API (and so through the response cache).
 * @returns {Promise<Map<string, string>>} title by slug
 */
export async function listedArticles(url) {
  const titles = new Map();
  let cursor = "";
  for (let page = 0; page < 10_000; page++) {
    const res = await fetch(`${url}/api/v1/articles?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    if (res.status !== 200) throw new Error(`GET /api/v1/articles answered ${res.status}`);
    const body = await res.json();
    for (const article of body.articles) titles.set(article.slug, article.title);
    if (!body.next_cursor) return titles;
    cursor = body.next_cursor;
  }
  throw new Error("the list did not end within 10,000 pages");
}

/**
 * Whether the service holds what the client was told: every live slug with its last title, no
 * deleted one, nothing nobody created. Slugs whose last write lost its answer may be either way.
 * @param {import("./traffic.mjs").Traffic} traffic
 * @param {Map<string, string>} listed
 */
export function compareModel(traffic, listed) {
  const problems = [];
  for (const [slug, state] of traffic.model) {
    if (state.uncertain) continue;
    const title = listed.get(slug);
    if (state.live && title === undefined) problems.push(`${slug}: acknowledged, but not listed`);
    else if (state.live && title !== state.title)
      problems.push(`${slug}: listed as "${title}", expected "${state.title}"`);
    else if (!state.live && title !== undefined) problems.push(`${slug}: deleted (or never created), but listed`);
  }
  for (const slug of listed.keys())
    if (!traffic.model.has(slug)) problems.push(`${slug}: listed, but nobody created it`);
  return problems;
}

/**
 * Whether every receiver saw every event of an acknowledged write, in commit order. A receiver may
 * see an event more than once (at least once), and the events of writes whose answer was lost may
 * or may not be there.
 */
export function compareDeliveries(traffic, stats) {
  const { uncertain, ...certain } = traffic.events;
  const expected = Object.values(certain).reduce((sum, n) => sum + n, 0);
  const problems = [];
  for (const s of stats) {
    const name = `receiver :${s.port}`;
    if (s.unique < expected || s.unique > expected + uncertain)
      problems.push(`${name}: ${s.unique} distinct events, expected ${expected} (+ up to ${uncertain} uncertain)`);
    for (const [type, n] of Object.entries(certain)) {
      const got = s.types[type] ?? 0;
      if (got < n || got > n + uncertain)
        problems.push(`${name}: ${got} ${type}, expected ${n} (+ up to ${uncertain})`);
    }
    if (s.outOfOrder > 0) problems.push(`${name}: ${s.outOfOrder} events out of commit order`);
  }
  return problems;
}

/** What must stay bounded: the file descriptors the last run keeps, the WAL, and the queues once drained. */
export function compareResources(samples) {
  const problems = [];
  // The last run only: it ends drained and idle, where a killed run ends under load.
  const life = samples.at(-1)?.life;
  const run = samples.filter((s) => s.life === life);
  const settled = run.find((s) => s.t - run[0].t >= 60) ?? run[0];
  const end = run.at(-1)?.fds ?? settled.fds;
  if (end - settled.fds > MAX_FD_GROWTH)
    problems.push(`run ${life}: file descriptors grew from ${settled.fds} to ${end} by its end`);
  const maxWal = Math.max(...samples.map((s) => s.walMb));
  if (maxWal > MAX_WAL_MB) problems.push(`the WAL reached ${maxWal.toFixed(1)} MB`);
  const last = samples.at(-1);
  if (last && last.queued > 0) problems.push(`${last.queued} jobs still queued after the drain`);
  if (last && last.failed > 0) problems.push(`${last.failed} jobs dead-lettered`);
  return problems;
}

/**
 * What the service says of itself once drained: `/health` is `ok`, and the backup component has
 * made generations and passed its last restore drill.
 */
export async function healthProblems(url) {
  const problems = [];
  const health = await (await fetch(`${url}/health`)).json();
  if (health.status !== "ok") problems.push(`/health is ${health.status}: ${JSON.stringify(health.components ?? {})}`);
  const backup = await (await fetch(`${url}/health/backup`)).json();
  if (backup.last_backup?.ok !== true) problems.push(`last backup: ${JSON.stringify(backup.last_backup ?? null)}`);
  if (backup.drill?.ok !== true) problems.push(`last restore drill: ${JSON.stringify(backup.drill ?? null)}`);
  return { problems, backup };
}

/** Least-squares slope of `y` over `t` (per minute), or NaN for fewer than two points. */
function slopePerMinute(points) {
  if (points.length < 2) return Number.NaN;
  const n = points.length;
  const mt = points.reduce((s, p) => s + p.t, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.t - mt) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.t - mt) ** 2, 0);
  return den === 0 ? Number.NaN : (num / den) * 60;
}

/** Memory of each run of the server: a minute in (or at its first sample), at its end, and the slope over its second half. */
export function memoryLines(samples) {
  const lines = [];
  for (const life of new Set(samples.map((s) => s.life))) {
    const run = samples.filter((s) => s.life === life);
    const start = run[0].t;
    const end = run.at(-1).t;
    const settled = run.find((s) => s.t - start >= 60) ?? run[0];
    const half = run.filter((s) => s.t >= start + (end - start) / 2).map((s) => ({ t: s.t, y: s.rssMb }));
    const peak = Math.max(...run.map((s) => s.rssMb));
    lines.push(
      `run ${life} (${((end - start) / 60).toFixed(1)} min): RSS ${settled.rssMb.toFixed(0)} MB at ${(settled.t - start).toFixed(0)} s, ` +
        `${run.at(-1).rssMb.toFixed(0)} MB at its end (peak ${peak.toFixed(0)}), ${slopePerMinute(half).toFixed(2)} MB/min over its second half; ` +
        `file descriptors ${settled.fds} → ${run.at(-1).fds} (max ${Math.max(...run.map((s) => s.fds))})`,
    );
  }
  return lines;
}

/** Answers by operation: counts by status, and p50 / p99 latency. */
export function trafficLines(traffic) {
  const lines = [];
  for (const [op, byStatus] of [...traffic.statuses].sort(([a], [b]) => a.localeCompare(b))) {
    const latency = traffic.latency.get(op) ?? [];
    const statuses = [...byStatus].map(([status, n]) => `${status || "no answer"}: ${n}`).join(", ");
    const p = (q) => (latency.length ? percentile(latency, q).toFixed(1) : "n/a");
    lines.push(`| ${op} | ${statuses} | ${p(50)} | ${p(99)} |`);
  }
  return ["| operation | answers by status | p50 ms | p99 ms |", "| --- | --- | ---: | ---: |", ...lines];
}

/** The samples at each whole minute (and the last): the server's resources and the database's rows over time. */
export function sampleTable(samples) {
  const rows = samples.filter(
    (s, i) => i === samples.length - 1 || Math.floor(s.t / 60) !== Math.floor((samples[i + 1]?.t ?? 0) / 60),
  );
  return [
    "| s | run | RSS MB | fds | WAL MB | db MB | data MB | backups | job rows | queued | outbox rows |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows.map(
      (s) =>
        `| ${s.t.toFixed(0)} | ${s.life} | ${s.rssMb.toFixed(0)} | ${s.fds} | ${s.walMb.toFixed(1)} | ${s.dbMb.toFixed(1)} | ` +
        `${s.dataMb.toFixed(1)} | ${s.backups} | ${s.jobs} | ${s.queued} | ${s.events} |`,
    ),
  ];
}
