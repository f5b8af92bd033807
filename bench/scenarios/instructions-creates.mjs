import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { callgrindLauncher, control, dumpedEvents, hasCallgrind, mainThreadEvents } from "../lib/callgrind.mjs";
import { runNodeJson } from "../lib/node-json.mjs";
import { DEEP_PAGES, READY_PATH, SEED_API_KEY, SEEDED, seededTemplate, serveCopy } from "./articles-seed.mjs";

const vellumBin = fileURLToPath(new URL("../../packages/vellum/bin/vellum.mjs", import.meta.url));
const referenceCreates = fileURLToPath(new URL("../servers/reference-creates.mjs", import.meta.url));
const createLoad = fileURLToPath(new URL("./articles-create-load.mjs", import.meta.url));
const CONNECTIONS = 10;
/** Creates before counting (the hot code is optimised by then), and creates counted. */
const WARMUP_CREATES = 1_000;
const COUNTED_CREATES = 2_000;
/** Under callgrind a create takes 20–50 times longer: these bound each load and the wait for its applies. */
const LOAD_TIMEOUT_SECONDS = 600;
const REQUEST_TIMEOUT_SECONDS = 120;
const APPLY_TIMEOUT_MS = 600_000;
const VELLUM = "vellum serve (default plugins, CACHE_MAX_ENTRIES=0)";
const REFERENCE = "node:http + better-sqlite3, the same writes (creates reference)";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** @type {Array<{ name: string, args: (port: number, dir: string) => string[], env: Record<string, string> }>} */
const targets = [
  {
    name: VELLUM,
    args: (port, dir) => [vellumBin, "serve", "--port", String(port), "--host", "127.0.0.1", "--data-dir", dir],
    env: { CACHE_MAX_ENTRIES: "0" },
  },
  {
    name: REFERENCE,
    args: (port, dir) => [referenceCreates, "--port", String(port), "--data-dir", dir],
    env: {},
  },
];

/**
 * `amount` creates of new slugs on `server` (10 connections), then waits until every queued create
 * is applied, so what the worker does for them is counted with what the requests did.
 * @param {{ url: string, dataDir: string }} server
 * @param {number} amount
 * @param {string} prefix
 */
async function createAndApply(server, amount, prefix) {
  const args = [createLoad, "--url", server.url, "--api-key", SEED_API_KEY, "--prefix", prefix];
  args.push(
    "--connections",
    String(CONNECTIONS),
    "--amount",
    String(amount),
    "--timeout",
    String(REQUEST_TIMEOUT_SECONDS),
  );
  const load = await runNodeJson(args, { label: "create load", timeoutMs: LOAD_TIMEOUT_SECONDS * 1000 });
  if (load.accepted !== amount)
    throw new Error(`${load.accepted} of ${amount} creates accepted (${load.errors} errors)`);
  const db = new Database(join(server.dataDir, "db", "vellum.sqlite"), { readonly: true });
  try {
    const queued = db.prepare("SELECT count(*) AS n FROM _vellum_jobs WHERE queue = 'articles' AND status = 'queued'");
    const deadline = Date.now() + APPLY_TIMEOUT_MS;
    while (queued.get().n > 0) {
      if (Date.now() > deadline) throw new Error(`creates still queued after ${APPLY_TIMEOUT_MS / 1000} s`);
      await sleep(200);
    }
  } finally {
    db.close();
  }
}

/**
 * The user-space instructions a create costs `target` on a private copy of the seed, acknowledged
 * and applied, counting switched on after the warm-up: on the main thread, and in all threads.
 * @param {string} template
 * @param {(typeof targets)[number]} target
 * @returns {Promise<{ main: number, all: number }>}
 */
async function eventsPerCreate(template, target) {
  const dir = await mkdtemp(join(tmpdir(), "vellum-callgrind-"));
  let server;
  try {
    server = await serveCopy(template, tmpdir(), {
      args: target.args,
      readyPath: READY_PATH,
      env: { SERVICE_API_KEY: SEED_API_KEY, SERVICE_LOG_LEVEL: "warn", ...target.env },
      launcher: callgrindLauncher(dir, false, true),
    });
    const prefix = `counted-${Date.now()}`;
    await createAndApply(server, WARMUP_CREATES, `${prefix}-warm`);
    control(["--instr=on"], server.pid);
    await createAndApply(server, COUNTED_CREATES, prefix);
    control(["--dump"], server.pid);
    const main = (await mainThreadEvents(dir)).Ir ?? 0;
    const all = (await dumpedEvents(dir)).Ir ?? 0;
    return { main: main / COUNTED_CREATES, all: all / COUNTED_CREATES };
  } finally {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** @param {number} n */
const count = (n) => Math.round(n).toLocaleString("en-US");

/**
 * User-space instructions per create, acknowledged and applied, each server run under callgrind:
 * `vellum serve` with the default plugins against the creates reference (`servers/reference-creates.mjs`,
 * the same rows written with `node:http` and better-sqlite3 alone), 10 connections, on copies of the
 * articles scenario's seed. Sustained creates/s moves by tens of percent from one run to the next on
 * the shared 2-core machines, more than most changes to the write path; an instruction count
 * moves far less (the batch sizes still follow the timing), so a change can be judged by it. The
 * share is taken on the main thread, which bounds a Node server's creates/s; V8 compiles and
 * marks on other threads, and after a short warm-up its compiler still ran a quarter of all the
 * instructions. What the operating system does (the WAL's writes and flushes, the sockets) is left
 * out, the same for both. Skipped, with a line saying so, where valgrind is not installed.
 * @type {import("./registry.mjs").Scenario}
 */
export default async function instructionsCreates() {
  if (!hasCallgrind()) {
    return { lines: ["skipped: valgrind is not installed (apt-get install -y valgrind)"] };
  }
  const seed = await seededTemplate({ apiKey: SEED_API_KEY, count: SEEDED, deepPages: DEEP_PAGES });
  /** @type {Map<string, { main: number, all: number }>} */
  const perCreate = new Map();
  const lines = [];
  const failures = [];
  for (const target of targets) {
    process.stderr.write(`instructions-creates: ${target.name}, under callgrind\n`);
    try {
      const counted = await eventsPerCreate(seed.template, target);
      perCreate.set(target.name, counted);
      lines.push(
        `POST /api/v1/articles · ${target.name}: ${count(counted.main)} instructions a create on the main thread, ` +
          `${count(counted.all)} in all threads`,
      );
    } catch (err) {
      failures.push(`${target.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const reference = perCreate.get(REFERENCE);
  const ours = perCreate.get(VELLUM);
  if (reference && ours) {
    const share = (a, b) => `${((a / b) * 100).toFixed(0)} %`;
    lines.push(
      `creates, by instructions on the main thread: ${share(reference.main, ours.main)} of the creates reference ` +
        `(in all threads ${share(reference.all, ours.all)})`,
    );
  }
  const counted = [...perCreate].map(([target, instructions]) => ({ target, ...instructions }));
  return { lines, failures, data: { counted, warmupCreates: WARMUP_CREATES, countedCreates: COUNTED_CREATES } };
}
