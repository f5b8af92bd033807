import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { defaultDuration } from "../lib/load.mjs";
import { runNodeJson } from "../lib/node-json.mjs";
import { readWrites } from "../lib/server.mjs";

const LOAD = fileURLToPath(new URL("./articles-create-load.mjs", import.meta.url));
const CONNECTIONS = 50;
const SAMPLE_MS = 250;
const PROBE_EVERY_MS = 100;
const PROBE_POLL_MS = 5;
const DRAIN_TIMEOUT_MS = 180_000;
/** Seconds on top of the load duration before the load process is killed. */
const LOAD_GRACE_SECONDS = 60;

/** @param {number[]} values @param {number} q */
function quantile(values, q) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the POST load in its own process (autocannon, a new slug per request). */
function runCreateLoad({ url, apiKey, duration }) {
  const args = [LOAD, "--url", url, "--api-key", apiKey, "--prefix", `load-${Date.now()}`];
  args.push("--connections", String(CONNECTIONS), "--duration", String(duration));
  return runNodeJson(args, { label: "create load", timeoutMs: (duration + LOAD_GRACE_SECONDS) * 1000 });
}

/**
 * Headers of an API write from a client without a session: the API key, and a CSRF token fetched
 * from the server, sent as its cookie and its header.
 * @param {string} url the server's base URL
 * @param {string} apiKey
 */
export async function writeHeaders(url, apiKey) {
  const { token } = await (await fetch(`${url}/api/v1/csrf`)).json();
  if (!token) throw new Error("GET /api/v1/csrf gave no token");
  return {
    authorization: `Bearer ${apiKey}`,
    cookie: `svc_csrf=${token}`,
    "x-csrf-token": token,
    "content-type": "application/json",
  };
}

/**
 * While the load runs, one probe create every 100 ms, each polled on GET /api/v1/jobs/:id until
 * applied: milliseconds from its 202 to `applied`, as a client sees it.
 */
async function probe({ url, apiKey, until }) {
  const headers = await writeHeaders(url, apiKey);
  const lags = [];
  const pending = [];
  for (let n = 0; performance.now() < until; n++) {
    const slug = `probe-${Date.now()}-${n}`;
    const body = JSON.stringify({ title: slug, slug, content: `<p>${slug}</p>`, tags: ["probe"] });
    pending.push(
      (async () => {
        const res = await fetch(`${url}/api/v1/articles`, { method: "POST", headers, body });
        if (res.status !== 202) return;
        const acked = performance.now();
        const { id } = await res.json();
        for (;;) {
          const job = await (await fetch(`${url}/api/v1/jobs/${id}`)).json();
          if (job.status !== "queued") break;
          await sleep(PROBE_POLL_MS);
        }
        lags.push(performance.now() - acked);
      })(),
    );
    await sleep(PROBE_EVERY_MS);
  }
  await Promise.all(pending);
  return lags;
}

/**
 * Sustained creates for the run duration: acknowledged/s (202s), applied/s (rows written, sampled
 * from the database file every 250 ms), backlog and drain time, 202 → applied latency both
 * from client probes and from every job's accept/applied timestamps in the queue table, and what
 * the server (`pid`) handed to write calls per create, load and drain (Linux only).
 * @param {{ url: string, dataDir: string, apiKey: string, pid: number }} options
 */
export async function measureCreates({ url, dataDir, apiKey, pid }) {
  const duration = defaultDuration();
  const db = new Database(join(dataDir, "db", "vellum.sqlite"), { readonly: true });
  const lastRow = db.prepare("SELECT max(rowid) AS n FROM articles_items");
  const queued = db.prepare("SELECT count(*) AS n FROM _vellum_jobs WHERE queue = 'articles' AND status = 'queued'");
  const lags = db.prepare(
    `SELECT (julianday(updated_at) - julianday(created_at)) * 86400000.0 AS ms FROM _vellum_jobs
     WHERE queue = 'articles' AND status = 'applied' AND created_at >= ?`,
  );
  try {
    const writesBefore = readWrites(pid);
    const startIso = new Date().toISOString();
    const samples = [];
    const sample = () => samples.push({ t: performance.now(), rows: lastRow.get().n, queued: queued.get().n });
    sample();
    const sampler = setInterval(sample, SAMPLE_MS);
    const started = performance.now();
    const [load, probeLags] = await Promise.all([
      runCreateLoad({ url, apiKey, duration }),
      probe({ url, apiKey, until: performance.now() + duration * 1000 }),
    ]);
    const loadEnd = performance.now();
    sample();
    const atEnd = samples.at(-1);
    while (queued.get().n > 0 && performance.now() - loadEnd < DRAIN_TIMEOUT_MS) await sleep(50);
    const drainMs = performance.now() - loadEnd;
    clearInterval(sampler);
    const writesAfter = readWrites(pid);
    const writes =
      writesBefore && writesAfter && load.accepted > 0
        ? {
            bytesPerCreate: (writesAfter.bytes - writesBefore.bytes) / load.accepted,
            callsPerCreate: (writesAfter.calls - writesBefore.calls) / load.accepted,
          }
        : undefined;

    const first = samples[0];
    const appliedPerSecond = (atEnd.rows - first.rows) / ((atEnd.t - first.t) / 1000);
    const perSecond = [];
    for (let s = 1; started + s * 1000 <= loadEnd; s++) {
      const at = (ms) => samples.reduce((best, x) => (Math.abs(x.t - ms) < Math.abs(best.t - ms) ? x : best));
      const a = at(started + (s - 1) * 1000);
      const b = at(started + s * 1000);
      perSecond.push(((b.rows - a.rows) * 1000) / (b.t - a.t));
    }
    const jobLags = lags.all(startIso).map((row) => row.ms);
    const fmt = (n) => (Number.isFinite(n) ? n.toFixed(1) : "n/a");
    return {
      load,
      appliedPerSecond,
      appliedPerSecondBySecond: perSecond,
      backlogAtEnd: atEnd.queued,
      drainMs,
      probeLagMs: { n: probeLags.length, p50: quantile(probeLags, 0.5), p99: quantile(probeLags, 0.99) },
      jobLagMs: { n: jobLags.length, p50: quantile(jobLags, 0.5), p99: quantile(jobLags, 0.99) },
      writes,
      lines: [
        `${load.accepted} acknowledged in ${load.durationSeconds.toFixed(1)} s = ${load.rps.toFixed(0)}/s (p50 ${load.p50} ms, p99 ${load.p99} ms);` +
          ` applied ${appliedPerSecond.toFixed(0)}/s over the same window (slowest second ${Math.min(...perSecond).toFixed(0)}/s);` +
          ` backlog at the end ${atEnd.queued}, drained ${(drainMs / 1000).toFixed(1)} s later`,
        `202 → applied: p50 ${fmt(quantile(probeLags, 0.5))} ms, p99 ${fmt(quantile(probeLags, 0.99))} ms (${probeLags.length} client probes polling GET /api/v1/jobs/:id);` +
          ` accept → applied over all ${jobLags.length} jobs: p50 ${fmt(quantile(jobLags, 0.5))} ms, p99 ${fmt(quantile(jobLags, 0.99))} ms`,
        ...(writes
          ? [
              `server write calls per create (files and sockets, load and drain, /proc/<pid>/io): ${writes.callsPerCreate.toFixed(1)},` +
                ` ${(writes.bytesPerCreate / 1024).toFixed(1)} KiB`,
            ]
          : []),
      ],
    };
  } finally {
    db.close();
  }
}
