import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { callgrindLauncher, control, dumpedEvents, hasCallgrind } from "../lib/callgrind.mjs";
import { runLoad } from "../lib/load.mjs";
import { startServer } from "../lib/server.mjs";
import { bare, h3Headers, vellum } from "../lib/targets.mjs";
import {
  DEEP_PAGES,
  ONE_ARTICLE_PATH,
  READY_PATH,
  SEED_API_KEY,
  SEEDED,
  seededTemplate,
  serveCopy,
} from "./articles-seed.mjs";

const reference = fileURLToPath(new URL("../servers/reference-articles.mjs", import.meta.url));
const vellumBin = fileURLToPath(new URL("../../packages/vellum/bin/vellum.mjs", import.meta.url));
const CONNECTIONS = 10;
/** Requests before counting: the hot code is optimised by then. */
const WARMUP_REQUESTS = 3_000;
const COUNTED_REQUESTS = 5_000;
/**
 * BENCH_CACHE_SIM=1 also simulates the caches and branch predictors (callgrind's `--cache-sim`
 * and `--branch-sim`, a little slower): L1 and last-level misses and mispredicted branches a
 * request, which explain CPU time where instruction counts do not.
 */
const SIMULATE = process.env.BENCH_CACHE_SIM === "1";
/** Under callgrind a server runs 20–50 times slower: this bounds the load's wait. */
const LOAD_TIMEOUT_SECONDS = 300;

/**
 * @typedef {object} CountedTarget
 * @property {string} name
 * @property {(launcher: import("../lib/server.mjs").Launcher) => Promise<import("../lib/server.mjs").RunningServer>} start
 */

/**
 * @typedef {object} Route a request counted on each of `targets`; `share` names the reference and
 * the Vellum target whose ratio the report gives
 * @property {string} label
 * @property {string} path
 * @property {CountedTarget[]} targets
 * @property {[string, string]} share
 */

/** @returns {Route} the kernel's route on bare node:http, h3 with Vellum's headers and `vellum serve` */
const kernelRoute = () => ({
  label: "kernel on a constant JSON route",
  path: "/health/live",
  targets: [bare, h3Headers, vellum].map((target) => ({
    name: target.name,
    start: (launcher) => target.start({}, launcher),
  })),
  share: [h3Headers.name, vellum.name],
});

/**
 * The reference article server on the seed (it only reads it), with `options` (`--headers`, `--mode`).
 * @param {string} name
 * @param {string} template the articles scenario's seeded data directory
 * @param {string[]} options
 * @returns {CountedTarget}
 */
const referenceOnSeed = (name, template, options) => ({
  name,
  start: (launcher) =>
    startServer({
      args: (port) => [reference, "--port", String(port), "--data-dir", template, ...options],
      readyPath: READY_PATH,
      launcher,
    }),
});

/**
 * `vellum serve` on a private copy of the seed, with `env` added.
 * @param {string} name
 * @param {string} template
 * @param {Record<string, string>} env
 * @returns {CountedTarget}
 */
const vellumOnSeed = (name, template, env) => ({
  name,
  start: (launcher) =>
    serveCopy(template, tmpdir(), {
      args: (port, dir) => [vellumBin, "serve", "--port", String(port), "--host", "127.0.0.1", "--data-dir", dir],
      readyPath: READY_PATH,
      env: { SERVICE_API_KEY: SEED_API_KEY, SERVICE_LOG_LEVEL: "warn", ...env },
      launcher,
    }),
});

/**
 * @param {string} template the articles scenario's seeded data directory
 * @returns {Route[]} one article by slug, uncached, against the reference with the contract's headers;
 *   and from the response cache, against bare node:http sending the same bytes from memory
 */
const articleRoutes = (template) => [
  {
    label: "one article by slug, uncached",
    path: ONE_ARTICLE_PATH,
    targets: [
      referenceOnSeed("reference + the contract's headers", template, ["--headers", "contract"]),
      vellumOnSeed("vellum serve (CACHE_MAX_ENTRIES=0)", template, { CACHE_MAX_ENTRIES: "0" }),
    ],
    share: ["reference + the contract's headers", "vellum serve (CACHE_MAX_ENTRIES=0)"],
  },
  {
    label: "one article from the response cache",
    path: ONE_ARTICLE_PATH,
    targets: [
      referenceOnSeed("bare node:http (same bytes, from memory)", template, ["--mode", "static"]),
      vellumOnSeed("vellum serve (response cache on)", template, {}),
    ],
    share: ["bare node:http (same bytes, from memory)", "vellum serve (response cache on)"],
  },
];

/**
 * The simulated misses a request, summed as the report prints them.
 * @param {Record<string, number>} events per request
 */
const missLine = (events) => {
  const sum = (...names) => Math.round(names.reduce((total, name) => total + (events[name] ?? 0), 0));
  return (
    `L1 misses ${sum("I1mr", "D1mr", "D1mw").toLocaleString("en-US")} (instructions ${sum("I1mr")}, data ` +
    `${sum("D1mr", "D1mw")}), last-level misses ${sum("ILmr", "DLmr", "DLmw")}, mispredicted branches ` +
    `${sum("Bcm", "Bim").toLocaleString("en-US")} a request`
  );
};

/**
 * Counts the user-space instructions (and, simulating, the misses) `target` spends on each of
 * `COUNTED_REQUESTS` requests of `path`, under callgrind with counting switched on only after the
 * warm-up: callgrind's events a request, by name.
 * @param {CountedTarget} target
 * @param {string} path
 */
async function instructionsPerRequest(target, path) {
  const dir = await mkdtemp(join(tmpdir(), "vellum-callgrind-"));
  const launcher = callgrindLauncher(dir, SIMULATE);
  let server;
  try {
    server = await target.start(launcher);
    const options = { url: server.url + path, connections: CONNECTIONS, duration: LOAD_TIMEOUT_SECONDS };
    await runLoad({ ...options, amount: WARMUP_REQUESTS });
    control(["--instr=on"], server.pid);
    const load = await runLoad({ ...options, amount: COUNTED_REQUESTS });
    control(["--dump"], server.pid);
    if (load.non2xx > 0 || load.errors > 0) throw new Error(`${load.non2xx} non-2xx, ${load.errors} errors`);
    const events = await dumpedEvents(dir);
    return Object.fromEntries(Object.entries(events).map(([name, total]) => [name, total / load.total]));
  } finally {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * User-space instructions per request, each server run under callgrind: `GET /health/live` on bare
 * `node:http`, h3 sending the same headers and `vellum serve` (the kernel's share of h3, issue 10's
 * first target), and one article by slug on the articles scenario's seed, uncached, on the
 * `node:http` + better-sqlite3 reference sending the contract's headers and `vellum serve` (its
 * read target), and the same article from Vellum's response cache against bare `node:http`
 * sending the same bytes (issue 12's target). Unlike req/s, which moves by tens of percent on the shared 2-core machines from one
 * run to the next, an instruction count repeats within a fraction of a percent, so these shares
 * can be compared across runs and machines. They leave out what the operating system does for a
 * request (the socket's reads and writes), the same for every target, so they are lower than the
 * req/s shares. Skipped, with a line saying so, where valgrind is not installed.
 * @type {import("./registry.mjs").Scenario}
 */
export default async function instructions() {
  if (!hasCallgrind()) {
    return { lines: ["skipped: valgrind is not installed (apt-get install -y valgrind)"] };
  }
  const seed = await seededTemplate({ apiKey: SEED_API_KEY, count: SEEDED, deepPages: DEEP_PAGES });
  /** @type {Array<{ route: string, target: string, instructionsPerRequest: number }>} */
  const counted = [];
  /** @type {string[]} */
  const failures = [];
  /** @type {string[]} */
  const lines = [];
  for (const route of [kernelRoute(), ...articleRoutes(seed.template)]) {
    /** @type {Map<string, number>} */
    const perRequest = new Map();
    for (const target of route.targets) {
      process.stderr.write(`instructions: ${route.path} on ${target.name}, under callgrind\n`);
      try {
        const events = await instructionsPerRequest(target, route.path);
        const instructions = events.Ir ?? 0;
        perRequest.set(target.name, instructions);
        counted.push({ route: route.path, target: target.name, instructionsPerRequest: instructions, events });
        lines.push(
          `${route.path} · ${target.name}: ${Math.round(instructions).toLocaleString("en-US")} instructions a request`,
        );
        if (SIMULATE) lines.push(`${route.path} · ${target.name}: ${missLine(events)}`);
      } catch (err) {
        failures.push(`${route.path} · ${target.name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    const [reference, ours] = route.share.map((name) => perRequest.get(name));
    if (reference && ours) {
      lines.push(`${route.label}, by instructions: ${((reference / ours) * 100).toFixed(0)} % of ${route.share[0]}`);
    }
  }
  return { lines, failures, data: { counted, warmupRequests: WARMUP_REQUESTS, countedRequests: COUNTED_REQUESTS } };
}
