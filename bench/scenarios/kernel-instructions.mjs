import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runLoad } from "../lib/load.mjs";
import { bare, h3Headers, vellum } from "../lib/targets.mjs";

const PATH = "/health/live";
const CONNECTIONS = 10;
/** Requests before counting: the hot code is optimised by then. */
const WARMUP_REQUESTS = 3_000;
const COUNTED_REQUESTS = 5_000;
/** Under callgrind a server runs 20–50 times slower: these bound the waits. */
const READY_TIMEOUT_MS = 180_000;
const LOAD_TIMEOUT_SECONDS = 300;

const targets = [bare, h3Headers, vellum];

/** @returns {boolean} */
function hasCallgrind() {
  try {
    execFileSync("valgrind", ["--version"], { stdio: "ignore" });
    execFileSync("callgrind_control", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** @param {string[]} args @param {number} pid */
const control = (args, pid) => execFileSync("callgrind_control", [...args, String(pid)], { stdio: "ignore" });

/**
 * The events callgrind counted since instrumentation was switched on: the `totals:` (or, in older
 * dumps, `summary:`) line of the dump `callgrind_control -d` wrote into `dir`.
 * @param {string} dir
 * @returns {Promise<number>}
 */
async function dumpedInstructions(dir) {
  const dumps = (await readdir(dir)).filter((name) => /^cg\.\d+\.\d+$/.test(name));
  if (dumps.length !== 1) throw new Error(`expected one callgrind dump, found ${dumps.length}`);
  const text = await readFile(join(dir, dumps[0] ?? ""), "utf8");
  const match = /^(?:totals|summary): (\d+)/m.exec(text);
  if (!match) throw new Error("the callgrind dump has no totals line");
  return Number(match[1]);
}

/**
 * User-space instructions per request of `GET /health/live` for bare `node:http`, h3 sending the
 * same headers and `vellum serve`, each run under callgrind with counting switched on only for
 * `COUNTED_REQUESTS` requests after a warm-up. Unlike req/s, which moves by tens of percent on the
 * shared 2-core machines from one run to the next, an instruction count repeats within about 2 %,
 * so the kernel's share of h3 measured this way can be compared across runs and machines. It
 * leaves out what the operating system does for a request (the socket writes), which is the same
 * for every target: shares here are lower than the req/s shares of `health-live`.
 * Skipped, with a line saying so, where valgrind is not installed.
 * @type {import("./registry.mjs").Scenario}
 */
export default async function kernelInstructions() {
  if (!hasCallgrind()) {
    return { lines: ["skipped: valgrind is not installed (apt-get install -y valgrind)"] };
  }
  /** @type {Array<{ target: string, instructionsPerRequest: number }>} */
  const counted = [];
  /** @type {string[]} */
  const failures = [];
  for (const target of targets) {
    process.stderr.write(`kernel-instructions: ${target.name} under callgrind\n`);
    const dir = await mkdtemp(join(tmpdir(), "vellum-callgrind-"));
    const launcher = {
      command: "valgrind",
      args: ["--tool=callgrind", "--instr-atstart=no", `--callgrind-out-file=${join(dir, "cg.%p")}`],
      readyTimeoutMs: READY_TIMEOUT_MS,
    };
    let server;
    try {
      server = await target.start({}, launcher);
      const url = server.url + PATH;
      const options = { url, connections: CONNECTIONS, duration: LOAD_TIMEOUT_SECONDS };
      await runLoad({ ...options, amount: WARMUP_REQUESTS });
      control(["--instr=on"], server.pid);
      const load = await runLoad({ ...options, amount: COUNTED_REQUESTS });
      control(["--dump"], server.pid);
      if (load.non2xx > 0 || load.errors > 0) throw new Error(`${load.non2xx} non-2xx, ${load.errors} errors`);
      counted.push({ target: target.name, instructionsPerRequest: (await dumpedInstructions(dir)) / load.total });
    } catch (err) {
      failures.push(`${target.name}: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }
  const base = counted[0]?.instructionsPerRequest;
  const lines = counted.map(
    ({ target, instructionsPerRequest }) =>
      `${target}: ${Math.round(instructionsPerRequest).toLocaleString("en-US")} instructions a request` +
      (base ? ` (${(instructionsPerRequest / base).toFixed(2)}× bare node:http)` : ""),
  );
  const h3 = counted.find((row) => row.target === h3Headers.name);
  const kernel = counted.find((row) => row.target === vellum.name);
  if (h3 && kernel) {
    const share = (h3.instructionsPerRequest / kernel.instructionsPerRequest) * 100;
    lines.push(
      `kernel on a constant JSON route, by instructions: ${share.toFixed(0)} % of h3 sending the same headers`,
    );
  }
  return { lines, failures, data: { counted, warmupRequests: WARMUP_REQUESTS, countedRequests: COUNTED_REQUESTS } };
}
