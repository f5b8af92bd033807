import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { defaultDuration, runLoad, runServerLoad, withServerCpu } from "../lib/load.mjs";
import { startServer } from "../lib/server.mjs";
import { measureCreates } from "./articles-creates.mjs";
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
/** The creates reference (`servers/reference-creates.mjs`): Vellum's creates are compared with it. */
const CREATES_REFERENCE = "node:http + better-sqlite3, the same writes (creates reference)";

const reference = fileURLToPath(new URL("../servers/reference-articles.mjs", import.meta.url));
const referenceCreates = fileURLToPath(new URL("../servers/reference-creates.mjs", import.meta.url));
const articlesOnly = fileURLToPath(new URL("../servers/vellum-articles.mjs", import.meta.url));
const defaultsWithout = fileURLToPath(new URL("../servers/vellum-defaults-without.mjs", import.meta.url));
const vellumBin = fileURLToPath(new URL("../../packages/vellum/bin/vellum.mjs", import.meta.url));
const env = { SERVICE_API_KEY: API_KEY, SERVICE_LOG_LEVEL: "warn" };

/**
 * @typedef {object} ArticlesTarget
 * @property {string} name
 * @property {boolean} writes whether it takes creates (the read references do not)
 * @property {boolean} [reads] false for a target measured on creates only
 * @property {boolean} [comparedWithCreatesReference] its creates write what the creates reference writes (articles and search)
 * @property {(template: string) => Promise<import("../lib/server.mjs").RunningServer>} start
 */

/** Starts `args` on a private copy of the seeded directory, removed again on stop. */
const onCopy = (template, args, extraEnv = {}) =>
  serveCopy(template, tmpdir(), { args, readyPath: READY_PATH, env: { ...env, ...extraEnv } });

/** @type {ArticlesTarget[]} baseline first, then the four references and h3's (the ratios below depend on this order) */
const targets = [
  {
    name: "bare node:http (same bytes, from memory)",
    writes: false,
    start: (template) =>
      startServer({
        args: (port) => [reference, "--port", String(port), "--data-dir", template, "--mode", "static"],
        readyPath: READY_PATH,
      }),
  },
  {
    name: "node:http + better-sqlite3 (reference)",
    writes: false,
    start: (template) =>
      startServer({
        args: (port) => [reference, "--port", String(port), "--data-dir", template, "--mode", "sqlite"],
        readyPath: READY_PATH,
      }),
  },
  {
    name: "reference + the §3–4 headers",
    writes: false,
    start: (template) =>
      startServer({
        args: (port) => [reference, "--port", String(port), "--data-dir", template, "--headers", "security"],
        readyPath: READY_PATH,
      }),
  },
  {
    // And the caching headers contract §6 asks of article reads, the ETag hashed from each body.
    name: "reference + the contract's headers (§3–4, and §6 on a 200)",
    writes: false,
    start: (template) =>
      startServer({
        args: (port) => [reference, "--port", String(port), "--data-dir", template, "--headers", "contract"],
        readyPath: READY_PATH,
      }),
  },
  {
    // And Vellum's Surrogate-Key.
    name: "reference + every header Vellum sends on the read",
    writes: false,
    start: (template) =>
      startServer({
        args: (port) => [reference, "--port", String(port), "--data-dir", template, "--headers", "vellum"],
        readyPath: READY_PATH,
      }),
  },
  {
    // The ceiling of any h3 app: the same statements and the contract's headers, through h3's router and srvx.
    name: "h3 + better-sqlite3, the contract's headers",
    writes: false,
    start: (template) =>
      startServer({
        args: (port) => [
          reference,
          ...["--port", String(port), "--data-dir", template, "--headers", "contract", "--framework", "h3"],
        ],
        readyPath: READY_PATH,
      }),
  },
  {
    // Uncached reads: the response cache (scenario `cache`) would answer every measured read from memory.
    name: "vellum serve (default plugins, CACHE_MAX_ENTRIES=0)",
    writes: true,
    comparedWithCreatesReference: true,
    start: (template) =>
      onCopy(
        template,
        (port, dir) => [vellumBin, "serve", "--port", String(port), "--host", "127.0.0.1", "--data-dir", dir],
        { CACHE_MAX_ENTRIES: "0" },
      ),
  },
  {
    // Creates only, right after Vellum's: the same rows written with node:http and better-sqlite3 alone.
    name: CREATES_REFERENCE,
    writes: true,
    reads: false,
    start: (template) => onCopy(template, (port, dir) => [referenceCreates, "--port", String(port), "--data-dir", dir]),
  },
  {
    // What the cache plugin's validators cost an uncached read: the default plugins' row without it.
    name: "vellum, default plugins without the cache plugin",
    writes: false,
    start: (template) =>
      onCopy(template, (port, dir) => [
        defaultsWithout,
        "--port",
        String(port),
        "--data-dir",
        dir,
        "--without",
        "cache",
      ]),
  },
  {
    name: "vellum, articles plugin only",
    writes: true,
    start: (template) => onCopy(template, (port, dir) => [articlesOnly, "--port", String(port), "--data-dir", dir]),
  },
];

/** @param {string} deepCursor */
function reads(deepCursor) {
  return [
    { name: "GET /api/v1/articles/:slug", path: ONE_ARTICLE_PATH },
    { name: "GET /api/v1/articles?limit=20", path: "/api/v1/articles?limit=20" },
    { name: "GET /api/v1/articles?tag=…&limit=20", path: "/api/v1/articles?tag=topic-7&limit=20" },
    {
      name: `GET /api/v1/articles?limit=20&cursor=… (${DEEP_PAGES * 100} deep)`,
      path: `/api/v1/articles?limit=20&cursor=${encodeURIComponent(deepCursor)}`,
    },
  ];
}

/** Checks a server answers `path` with 200 before loading it (a 4xx would measure the error path). */
async function expectOk(url) {
  const res = await fetch(url);
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
}

/**
 * Articles on a database seeded with 100,000 articles: the four reads (one article, a list page,
 * a tag page, a deep cursor page) on bare node:http, a node:http + better-sqlite3 reference, and
 * Vellum; then sustained creates on Vellum (acknowledged/s, applied/s, 202 → applied latency).
 * @type {import("./registry.mjs").Scenario}
 */
export default async function articlesScenario() {
  /** @type {import("./registry.mjs").LoadRow[]} */
  const rows = [];
  /** @type {string[]} */
  const lines = [];
  /** @type {string[]} */
  const failures = [];
  const seed = await seededTemplate({ apiKey: API_KEY, count: SEEDED, deepPages: DEEP_PAGES });
  lines.push(
    `articles: ${SEEDED} articles seeded through the write path in ${seed.seedSeconds.toFixed(0)} s` +
      `${seed.reused ? " (cached seed reused)" : ""}; load: 50 connections, ${defaultDuration()} s per row`,
  );
  const readList = reads(seed.deepCursor);
  /** @type {Record<string, unknown>} */
  const creates = {};

  for (const target of targets) {
    process.stderr.write(`articles: ${target.name}\n`);
    let server;
    try {
      server = await target.start(seed.template);
      for (const read of target.reads === false ? [] : readList) {
        await expectOk(server.url + read.path);
        await runLoad({ url: server.url + read.path, duration: WARMUP_SECONDS });
        const load = await runServerLoad(server, { url: server.url + read.path });
        rows.push({
          target: `${read.name} · ${target.name}`,
          ...load,
          peakRssBytes: server.peakRssBytes(),
          ratio: null,
        });
      }
      if (target.writes) {
        // CPU per create includes applying them: the run ends once the backlog has drained.
        const { result, cpuUsPerUnit } = await withServerCpu(
          server,
          () => measureCreates({ url: server.url, dataDir: server.dataDir, apiKey: API_KEY, pid: server.pid }),
          (measured) => measured.load.accepted,
        );
        creates[target.name] = result;
        rows.push({
          target: `POST /api/v1/articles (acknowledged) · ${target.name}`,
          ...result.load,
          peakRssBytes: server.peakRssBytes(),
          cpuUsPerRequest: cpuUsPerUnit,
          ratio: null,
        });
        lines.push(...result.lines.map((line) => `creates, ${target.name}: ${line}`));
      }
    } catch (err) {
      failures.push(`${target.name}: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      await server?.stop();
    }
  }

  for (const read of readList) {
    const ofRead = rows.filter((row) => row.target.startsWith(`${read.name} · `));
    const bare = ofRead.find((row) => row.target.endsWith(targets[0].name));
    const ref = ofRead.find((row) => row.target.endsWith(targets[1].name));
    const refSecurity = ofRead.find((row) => row.target.endsWith(targets[2].name));
    const refContract = ofRead.find((row) => row.target.endsWith(targets[3].name));
    const refVellum = ofRead.find((row) => row.target.endsWith(targets[4].name));
    const refH3 = ofRead.find((row) => row.target.endsWith(targets[5].name));
    const percentOf = (row, of) => (of?.rps ? `${((row.rps / of.rps) * 100).toFixed(0)} %` : "n/a");
    for (const row of ofRead) {
      row.ratio = bare?.rps ? row.rps / bare.rps : null;
      if (![ref, refSecurity, refContract, refVellum, bare].includes(row)) {
        const ofH3 =
          row === refH3 ? "" : `, ${percentOf(row, refH3)} of h3 + better-sqlite3 with the contract's headers`;
        lines.push(
          `${row.target}: ${percentOf(row, ref)} of the reference's req/s, ${percentOf(row, refSecurity)} of the ` +
            `reference with the §3–4 headers, ${percentOf(row, refContract)} of the reference with the contract's ` +
            `headers, ${percentOf(row, refVellum)} of the reference with every header Vellum sends${ofH3}, p99 ${row.p99} ms`,
        );
      }
    }
  }
  const ceiling = creates[CREATES_REFERENCE];
  for (const { name } of targets.filter((target) => target.comparedWithCreatesReference)) {
    const result = creates[name];
    if (!result || !ceiling) continue;
    const share = (of, by) => `${((of / by) * 100).toFixed(0)} %`;
    lines.push(
      `creates, ${name}: ${share(result.load.rps, ceiling.load.rps)} of the creates reference's acknowledged/s` +
        ` (${result.load.rps.toFixed(0)} against ${ceiling.load.rps.toFixed(0)}/s),` +
        ` ${share(result.appliedPerSecond, ceiling.appliedPerSecond)} of its applied/s`,
    );
  }
  return { rows, lines, failures, data: { seed: { ...seed, template: undefined }, creates } };
}
