import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { get } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defaultDuration, runLoad, runServerLoad, withServerCpu } from "../lib/load.mjs";
import { runNodeJson } from "../lib/node-json.mjs";
import { startServer } from "../lib/server.mjs";
import { TAGS } from "./articles-data.mjs";
import {
  DEEP_PAGES,
  ONE_ARTICLE_PATH,
  READY_PATH,
  SEED_API_KEY as API_KEY,
  SEEDED,
  seededTemplate,
  serveCopy,
} from "./articles-seed.mjs";

const WARMUP_SECONDS = 2;
const CONNECTIONS = 50;
/** Issue targets: cached one article and list page as a share of bare node:http, p99 of cached reads. */
const TARGETS = { article: 0.6, list: 0.5, p99Ms: 10 };
/** Versions of the measured mix start here, above any the warm-up wrote (the stale-read check compares them). */
const MIX_VERSION_FROM = 1_000_000;
/** Seconds on top of a mix run before its load process is killed. */
const MIX_GRACE_SECONDS = 30;
/** Planned articles of the mix: the newest (on the list page and the first tag pages) and some spread out. */
const MIX_NEWEST = 20;
const MIX_SPREAD = 80;

const reference = fileURLToPath(new URL("../servers/reference-articles.mjs", import.meta.url));
const replay = fileURLToPath(new URL("../servers/replay.mjs", import.meta.url));
const vellumBin = fileURLToPath(new URL("../../packages/vellum/bin/vellum.mjs", import.meta.url));
const mixLoad = fileURLToPath(new URL("./cache-mix-load.mjs", import.meta.url));
const env = { SERVICE_API_KEY: API_KEY, SERVICE_LOG_LEVEL: "warn" };

const READS = [
  { key: "article", name: "GET /api/v1/articles/:slug", path: ONE_ARTICLE_PATH },
  { key: "list", name: "GET /api/v1/articles?limit=20", path: "/api/v1/articles?limit=20" },
  { key: "tag", name: "GET /api/v1/articles?tag=…&limit=20", path: "/api/v1/articles?tag=topic-7&limit=20" },
];

/**
 * @typedef {object} CacheTarget
 * @property {string} name
 * @property {"bare" | "security" | "vellum" | "replay" | "off"} role
 * @property {(context: { template: string, workDir: string, captured?: string }) => Promise<import("../lib/server.mjs").RunningServer>} start
 */

/** `vellum serve` (default plugins) on a private copy of the seeded directory, removed again on stop. */
const vellumOnCopy = (template, workDir, extraEnv) =>
  serveCopy(template, workDir, {
    args: (port, dataDir) => [vellumBin, "serve", "--port", String(port), "--host", "127.0.0.1", "--data-dir", dataDir],
    readyPath: READY_PATH,
    env: { ...env, ...extraEnv },
  });

/** @type {CacheTarget[]} baseline first; the replay needs the responses captured from the cached Vellum before it */
const targets = [
  {
    name: "bare node:http (same bytes, from memory)",
    role: "bare",
    start: ({ template }) =>
      startServer({
        args: (port) => [reference, "--port", String(port), "--data-dir", template, "--mode", "static"],
        readyPath: READY_PATH,
      }),
  },
  {
    name: "bare node:http + the §3–4 headers",
    role: "security",
    start: ({ template }) =>
      startServer({
        args: (port) => [
          reference,
          ...["--port", String(port), "--data-dir", template, "--mode", "static", "--headers", "security"],
        ],
        readyPath: READY_PATH,
      }),
  },
  {
    name: "vellum serve (default plugins, cache on)",
    role: "vellum",
    start: ({ template, workDir }) => vellumOnCopy(template, workDir, {}),
  },
  {
    name: "node:http replaying vellum's cached response (every header)",
    role: "replay",
    start: ({ captured }) => {
      if (!captured) throw new Error("no responses were captured from vellum serve to replay");
      return startServer({ args: (port) => [replay, "--port", String(port), "--responses", captured] });
    },
  },
  {
    name: "vellum serve, CACHE_MAX_ENTRIES=0 (cache off)",
    role: "off",
    start: ({ template, workDir }) => vellumOnCopy(template, workDir, { CACHE_MAX_ENTRIES: "0" }),
  },
];

/** GETs `url` with a fresh connection: status, raw headers in order, body bytes. */
function getRaw(url) {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false, timeout: 10_000 }, (res) => {
      const chunks = [];
      res.on("data", (chunk) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }),
      );
      res.on("error", reject);
    });
    req.once("timeout", () => req.destroy(new Error(`GET ${url} timed out`)));
    req.once("error", reject);
  });
}

/** GETs `url` and fails unless it answers 200 (a 4xx would measure the error path); the body bytes. */
async function okBody(url) {
  const res = await getRaw(url);
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  return res.body;
}

/** Headers `node:http` adds to every response itself; the replay server leaves them to it too. */
const TRANSPORT_HEADERS = new Set(["date", "connection", "keep-alive"]);

/** Vellum's responses to the reads, for the replay server: every header in order, the body. */
async function capture(server, file) {
  /** @type {Record<string, { status: number, headers: string[], body: string }>} */
  const responses = {};
  for (const read of READS) {
    const res = await getRaw(server.url + read.path);
    const headers = [];
    for (let i = 0; i < res.rawHeaders.length; i += 2) {
      if (!TRANSPORT_HEADERS.has(res.rawHeaders[i].toLowerCase()))
        headers.push(res.rawHeaders[i], res.rawHeaders[i + 1]);
    }
    responses[read.path] = { status: res.status, headers, body: res.body.toString("base64") };
  }
  await writeFile(file, JSON.stringify(responses));
  return file;
}

/** The response cache's counters from `GET /metrics` (loopback may read it). */
async function cacheCounters(url) {
  const res = await fetch(`${url}/metrics`);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
  const counters = { hits: 0, misses: 0, raced: 0, purges: 0, purgedEntries: 0 };
  for (const match of text.matchAll(/^service_cache_(\w+?)_total\{reason="(\w+)"\} (\d+(?:\.\d+)?)$/gm)) {
    const [, name, reason, value] = match;
    const n = Number(value);
    if (name === "hits") counters.hits += n;
    if (name === "misses") counters.misses += n;
    if (name === "misses" && reason === "raced") counters.raced += n;
    if (name === "purges") counters.purges += n;
    if (name === "purged_entries") counters.purgedEntries += n;
  }
  return counters;
}

/** `after - before`, field by field. */
function delta(before, after) {
  return Object.fromEntries(Object.entries(after).map(([key, value]) => [key, value - before[key]]));
}

/** The mix's plan: the newest articles, some spread over the rest, every tag's first page, the list page. */
function mixPlan() {
  const slugs = new Set();
  for (let i = 0; i < Math.min(MIX_NEWEST, SEEDED); i++) slugs.add(`article-${SEEDED - 1 - i}`);
  const spreadOver = Math.max(1, SEEDED - MIX_NEWEST);
  for (let k = 0; k < MIX_SPREAD; k++) slugs.add(`article-${Math.floor(((k + 0.5) * spreadOver) / MIX_SPREAD)}`);
  return { slugs: [...slugs], tags: TAGS, listPath: "/api/v1/articles?limit=20" };
}

/** Every URL the mix reads. */
function mixPaths(plan) {
  return [
    ...plan.slugs.map((slug) => `/api/v1/articles/${slug}`),
    plan.listPath,
    ...plan.tags.map((tag) => `/api/v1/articles?tag=${encodeURIComponent(tag)}&limit=20`),
  ];
}

/** One run of the mix's load process. */
function runMix({ url, plan, duration, versionFrom }) {
  const args = [mixLoad, "--url", url, "--api-key", API_KEY, "--plan", JSON.stringify(plan)];
  args.push("--connections", String(CONNECTIONS), "--duration", String(duration));
  args.push("--version-from", String(versionFrom));
  return runNodeJson(args, { label: "mix load", timeoutMs: (duration + MIX_GRACE_SECONDS) * 1000 });
}

/**
 * After the mix: every URL it read, as the server answers it now (from the cache where held),
 * against the same read with a query parameter no entry has (a miss, so the handler reads SQLite).
 */
async function endStateCheck(url, plan) {
  const paths = mixPaths(plan);
  const differing = [];
  for (const path of paths) {
    const held = await okBody(url + path);
    const fresh = await okBody(`${url}${path}${path.includes("?") ? "&" : "?"}bench-fresh=1`);
    if (!held.equals(fresh)) differing.push(path);
  }
  return { urls: paths.length, differing };
}

const percent = (ratio) => `${(ratio * 100).toFixed(0)} %`;
const ms = (value) => (Number.isFinite(value) ? `${value.toFixed(1)} ms` : "n/a");
const met = (ok) => (ok ? "met" : "NOT met");

/** The 95 % read / 5 % write mix on `server`: a 2 s warm-up, then the measured run. */
async function measureMix(server, target, plan) {
  for (const path of mixPaths(plan)) await okBody(server.url + path);
  await runMix({ url: server.url, plan, duration: WARMUP_SECONDS, versionFrom: 1 });
  const before = await cacheCounters(server.url);
  const { result, cpuUsPerUnit } = await withServerCpu(
    server,
    () => runMix({ url: server.url, plan, duration: defaultDuration(), versionFrom: MIX_VERSION_FROM }),
    (load) => load.total,
  );
  const counters = delta(before, await cacheCounters(server.url));
  const endState = await endStateCheck(server.url, plan);
  const lookups = counters.hits + counters.misses;
  const row = {
    target: `95 % GET / 5 % PUT mix · ${target.name}`,
    rps: result.rps,
    p50: result.p50,
    p99: result.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    total: result.total,
    cpuUsPerRequest: cpuUsPerUnit,
    peakRssBytes: server.peakRssBytes(),
    ratio: null,
  };
  const { reads, writes, stale } = result;
  const writeShare = result.total ? writes.n / (reads.n + writes.n) : 0;
  const lines = [
    `mix, ${target.name}: ${result.rps.toFixed(0)} req/s (${reads.n} reads, ${writes.n} writes = ` +
      `${(writeShare * 100).toFixed(1)} %); reads p50 ${ms(reads.p50)}, p99 ${ms(reads.p99)}; ` +
      `writes p50 ${ms(writes.p50)}, p99 ${ms(writes.p99)}; overall p99 ${result.p99} ms ` +
      `(target < ${TARGETS.p99Ms} ms: ${met(result.p99 < TARGETS.p99Ms)})`,
    `mix, ${target.name}: hit rate ${lookups ? ((counters.hits / lookups) * 100).toFixed(1) : "n/a"} % ` +
      `(${counters.hits} hits, ${counters.misses} misses of which ${counters.raced} raced a purge; ` +
      `${counters.purges} purges removed ${counters.purgedEntries} entries)`,
    `mix, ${target.name}: stale reads ${stale.stale} of ${stale.checked} article views checked ` +
      `(a GET sent after a write's 200 must show it); after the run ` +
      `${endState.urls - endState.differing.length} of ${endState.urls} URLs equal an uncached read`,
  ];
  const failures = [];
  if (stale.stale > 0) failures.push(`${row.target}: stale reads, e.g. ${JSON.stringify(stale.examples)}`);
  if (endState.differing.length > 0) {
    failures.push(
      `${row.target}: held responses differ from fresh reads: ${endState.differing.slice(0, 5).join(", ")}`,
    );
  }
  const statuses = { reads: reads.statuses, writes: writes.statuses };
  return { row, lines, failures, data: { ...result, counters, endState, statuses } };
}

/**
 * The response cache on the articles scenario's seeded database: one article, a list page and a tag
 * page from `vellum serve`'s cache (warmed first; the hits are counted from /metrics before and after
 * each run), next to bare node:http sending the same body bytes, that server with the headers of
 * contract §3–4, node:http replaying Vellum's cached response byte for byte, and Vellum with the cache off.
 * Then a 95 % read / 5 % write mix on Vellum with the cache on and off: req/s, read and write
 * latency, hit rate while writes purge, stale reads.
 * @type {import("./registry.mjs").Scenario}
 */
export default async function cacheScenario() {
  /** @type {import("./registry.mjs").LoadRow[]} */
  const rows = [];
  /** @type {string[]} */
  const lines = [];
  /** @type {string[]} */
  const failures = [];
  const seed = await seededTemplate({ apiKey: API_KEY, count: SEEDED, deepPages: DEEP_PAGES });
  const workDir = await mkdtemp(join(tmpdir(), "vellum-bench-cache-"));
  const plan = mixPlan();
  /** @type {Record<string, Record<string, Buffer>>} body bytes of each read, by target role */
  const bodies = {};
  /** @type {Record<string, Record<string, unknown>>} */
  const hitCounts = {};
  /** @type {Record<string, unknown>} */
  const mix = {};
  /** @type {string[]} */
  const mixLines = [];
  let captured;

  try {
    for (const target of targets) {
      process.stderr.write(`cache: ${target.name}\n`);
      let server;
      try {
        server = await target.start({ template: seed.template, workDir, captured });
        bodies[target.role] = {};
        for (const read of READS) {
          bodies[target.role][read.key] = await okBody(server.url + read.path);
          await runLoad({ url: server.url + read.path, duration: WARMUP_SECONDS });
          const counted = target.role === "vellum" || target.role === "off";
          const before = counted ? await cacheCounters(server.url) : undefined;
          const load = await runServerLoad(server, { url: server.url + read.path });
          if (before) {
            const counters = delta(before, await cacheCounters(server.url));
            hitCounts[`${read.key} · ${target.role}`] = { ...counters, requests: load.total };
            if (target.role === "vellum" && (counters.misses > 0 || counters.hits < load.total)) {
              failures.push(
                `${read.name} · ${target.name}: not all hits (${counters.hits} hits, ${counters.misses} misses ` +
                  `for ${load.total} requests): the row does not measure the cache alone`,
              );
            }
          }
          rows.push({
            target: `${read.name} · ${target.name}`,
            ...load,
            peakRssBytes: server.peakRssBytes(),
            ratio: null,
          });
        }
        if (target.role === "vellum") captured = await capture(server, join(workDir, "responses.json"));
        if (target.role === "vellum" || target.role === "off") {
          const measured = await measureMix(server, target, plan);
          rows.push(measured.row);
          mixLines.push(...measured.lines);
          failures.push(...measured.failures);
          mix[target.role] = measured.data;
        }
      } catch (err) {
        failures.push(`${target.name}: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        await server?.stop();
      }
    }
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }

  const sameBytes = READS.map((read) => {
    const reference = bodies.bare?.[read.key];
    const differing = Object.entries(bodies)
      .filter(([, byRead]) => reference && byRead[read.key] && !byRead[read.key].equals(reference))
      .map(([role]) => role);
    if (differing.length) failures.push(`${read.name}: bodies differ from bare node:http's (${differing.join(", ")})`);
    return differing.length === 0;
  });
  lines.unshift(
    `cache: ${SEEDED} articles (the articles scenario's seed${seed.reused ? ", cached seed reused" : ""}); ` +
      `load: ${CONNECTIONS} connections, ${defaultDuration()} s per row after ${WARMUP_SECONDS} s of warm-up; ` +
      `response bodies byte-identical on every target: ${sameBytes.every(Boolean) ? "yes" : "NO"}`,
  );

  const roleOf = (row) => targets.find((target) => row.target.endsWith(` · ${target.name}`))?.role;
  for (const read of READS) {
    const ofRead = rows.filter((row) => row.target.startsWith(`${read.name} · `));
    const byRole = Object.fromEntries(ofRead.map((row) => [roleOf(row), row]));
    const share = (role, of) => (byRole[role]?.rps && byRole[of]?.rps ? byRole[role].rps / byRole[of].rps : null);
    for (const row of ofRead) row.ratio = byRole.bare?.rps ? row.rps / byRole.bare.rps : null;
    const cached = byRole.vellum;
    if (!cached) continue;
    const ofBare = share("vellum", "bare");
    const target = TARGETS[read.key];
    const hits = /** @type {{ hits: number, misses: number } | undefined} */ (hitCounts[`${read.key} · vellum`]);
    const hitRatio = hits && hits.hits + hits.misses ? hits.hits / (hits.hits + hits.misses) : null;
    const cpu = (role) =>
      typeof byRole[role]?.cpuUsPerRequest === "number" ? byRole[role].cpuUsPerRequest.toFixed(0) : "n/a";
    const shareText = (of) => (share("vellum", of) === null ? "n/a" : percent(share("vellum", of)));
    const parts = [
      `${shareText("bare")} of bare node:http's req/s` +
        (target ? ` (target ≥ ${percent(target)}: ${ofBare === null ? "n/a" : met(ofBare >= target)})` : ""),
      `${shareText("security")} of bare with the §3–4 headers`,
      `${shareText("replay")} of node:http replaying the same response`,
      `${share("vellum", "off") === null ? "n/a" : `${share("vellum", "off").toFixed(1)}×`} the cache off; ` +
        `server CPU ${cpu("vellum")} µs/req (bare ${cpu("bare")}, with the §3–4 headers ${cpu("security")}, ` +
        `replay ${cpu("replay")}, cache off ${cpu("off")})`,
      `p99 ${cached.p99} ms (target < ${TARGETS.p99Ms} ms: ${met(cached.p99 < TARGETS.p99Ms)})`,
      `hits ${hits ? `${hits.hits} of ${hits.hits + hits.misses} lookups` : "n/a"}` +
        ` (${hitRatio === null ? "n/a" : `${(hitRatio * 100).toFixed(2)} %`})`,
    ];
    lines.push(`cached ${read.name}: ${parts.join(", ")}`);
  }
  lines.push(...mixLines);
  return { rows, lines, failures, data: { seed: { ...seed, template: undefined }, plan, hitCounts, mix } };
}
