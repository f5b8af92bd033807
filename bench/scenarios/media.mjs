import { randomUUID } from "node:crypto";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { defaultDuration } from "../lib/load.mjs";
import { sampleProcessTree } from "../lib/process-tree.mjs";
import { vellum } from "../lib/targets.mjs";
import { percentile } from "../search/stats.mjs";
import { writeHeaders } from "./articles-creates.mjs";
import { mediaInputs } from "./media-inputs.mjs";

/** Sequential uploads per input; env BENCH_MEDIA_UPLOADS overrides (quick trial runs). */
const SEQUENTIAL = Number(process.env.BENCH_MEDIA_UPLOADS) || 30;
/** Clients uploading at once for the throughput runs; env BENCH_MEDIA_CLIENTS. */
const CLIENTS = Number(process.env.BENCH_MEDIA_CLIENTS) || 4;
/** Rounds of `AT_ONCE` simultaneous uploads per input for the memory target; env BENCH_MEDIA_ROUNDS. */
const ROUNDS = Number(process.env.BENCH_MEDIA_ROUNDS) || 3;
/** Issue 14: the server's RSS stays under 300 MB while 4 large uploads run at once. */
const AT_ONCE = 4;
const RSS_TARGET_BYTES = 300 * 1024 * 1024;
/** How often the server's and the decoders' memory is read. */
const SAMPLE_MS = 50;
/** Most one upload may take before the client gives up on it (the server's decode limit is 30 s). */
const UPLOAD_TIMEOUT_MS = 120_000;
const API_KEY = "bench-media-api-key-0123456789abcdef";
/** How the decoder children are told apart from any other process the server starts. */
const DECODER_MAIN = "/decode/child/main.mjs";

/**
 * @typedef {object} Upload
 * @property {number} ms request sent → response read, as the client sees it
 * @property {number} status 0 when the request failed
 * @property {string} [error] the answer's body (not 201) or the failure's message
 */

/**
 * @typedef {object} Phase
 * @property {string} name
 * @property {string} input
 * @property {number} clients
 * @property {Upload[]} uploads
 * @property {number} elapsedMs first request sent → last response read
 * @property {import("../lib/process-tree.mjs").TreeWindow} memory
 */

const roundsText = `${ROUNDS} round${ROUNDS === 1 ? "" : "s"}`;
const mb = (bytes) => bytes / 1024 / 1024;
const n0 = (value) => (Number.isFinite(value) ? value.toFixed(0) : "n/a");
const n1 = (value) => (Number.isFinite(value) ? value.toFixed(1) : "n/a");
const n2 = (value) => (Number.isFinite(value) ? value.toFixed(2) : "n/a");

/**
 * Uploads through `POST /api/v1/media` on one server: every upload's bytes differ from every
 * other's (a run id and a counter in a comment of the image), so none is answered from the
 * deduplication (200) without a decode.
 * @param {string} url
 */
async function uploader(url) {
  // The API key and a CSRF token, without the JSON content type: fetch sets the multipart one.
  const headers = Object.fromEntries(
    Object.entries(await writeHeaders(url, API_KEY)).filter(([name]) => name !== "content-type"),
  );
  const run = randomUUID();
  let count = 0;
  /**
   * @param {import("./media-inputs.mjs").MediaInput} input
   * @returns {Promise<Upload>}
   */
  return async function upload(input) {
    const form = new FormData();
    const bytes = input.variant(`vellum bench ${run} ${count++}`);
    form.append("file", new Blob([bytes], { type: input.mime }), input.filename);
    const started = performance.now();
    try {
      const res = await fetch(`${url}/api/v1/media`, {
        method: "POST",
        headers,
        body: form,
        signal: AbortSignal.timeout(UPLOAD_TIMEOUT_MS),
      });
      const body = await res.text();
      const ms = performance.now() - started;
      if (res.status !== 201) return { ms, status: res.status, error: body.slice(0, 300) };
      const item = JSON.parse(body);
      const size = `${input.width}×${input.height}`;
      // `mime` is the upload's sniffed type; the stored file is the webp.
      if (item.mime !== input.mime || !item.url?.endsWith(".webp") || `${item.width}×${item.height}` !== size) {
        return { ms, status: 201, error: `201: ${item.mime}, ${item.url}, ${item.width}×${item.height}, not ${size}` };
      }
      return { ms, status: 201 };
    } catch (err) {
      return { ms: performance.now() - started, status: 0, error: err instanceof Error ? err.message : String(err) };
    }
  };
}

/**
 * `clients` clients uploading `input` one after another each, until `done(started, now)` (how many
 * uploads were started, the ms since the first), with the server's and its children's memory and
 * CPU over the phase.
 * @param {ReturnType<typeof sampleProcessTree>} tree
 * @param {Awaited<ReturnType<typeof uploader>>} upload
 * @param {{ name: string, input: import("./media-inputs.mjs").MediaInput, clients: number, done: (started: number, ms: number) => boolean }} options
 * @returns {Promise<Phase>}
 */
async function phase(tree, upload, { name, input, clients, done }) {
  process.stderr.write(`media: ${name}, ${input.name}\n`);
  const window = tree.window();
  /** @type {Upload[]} */
  const uploads = [];
  let started = 0;
  const first = performance.now();
  const client = async () => {
    while (!done(started, performance.now() - first)) {
      started++;
      uploads.push(await upload(input));
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  const elapsedMs = performance.now() - first;
  return { name, input: input.name, clients, uploads, elapsedMs, memory: window.end() };
}

/**
 * Rounds of `AT_ONCE` uploads of `input` sent together, each round waiting for the last.
 * @param {ReturnType<typeof sampleProcessTree>} tree
 * @param {Awaited<ReturnType<typeof uploader>>} upload
 * @param {import("./media-inputs.mjs").MediaInput} input
 * @returns {Promise<Phase>}
 */
async function atOnce(tree, upload, input) {
  const name = `${AT_ONCE} at once`;
  process.stderr.write(`media: ${name}, ${input.name}, ${roundsText}\n`);
  const window = tree.window();
  const uploads = [];
  const first = performance.now();
  for (let round = 0; round < ROUNDS; round++) {
    uploads.push(...(await Promise.all(Array.from({ length: AT_ONCE }, () => upload(input)))));
  }
  const elapsedMs = performance.now() - first;
  return { name, input: input.name, clients: AT_ONCE, uploads, elapsedMs, memory: window.end() };
}

/** What a phase's answers say: counts, time per upload, rate, decoder figures. */
function summarize(/** @type {Phase} */ p) {
  const ok = p.uploads.filter((u) => u.status === 201 && !u.error);
  const ms = ok.map((u) => u.ms);
  /** @type {Record<string, number>} */
  const statuses = {};
  for (const u of p.uploads) statuses[u.status] = (statuses[u.status] ?? 0) + 1;
  const decoders = p.memory.descendants.filter((d) => d.command.includes(DECODER_MAIN));
  return {
    ok: ok.length,
    total: p.uploads.length,
    statuses,
    firstError: p.uploads.find((u) => u.error)?.error,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    max: ms.length ? Math.max(...ms) : Number.NaN,
    perSecond: (ok.length * 1000) / p.elapsedMs,
    serverPeakRss: p.memory.rootPeakRssBytes,
    serverCpuMsPerUpload: ok.length ? (p.memory.rootCpuSeconds * 1000) / ok.length : Number.NaN,
    decoders: decoders.length,
    decoderPeakRss: Math.max(0, ...decoders.map((d) => d.peakRssBytes)),
    decodersPeakRssTogether: p.memory.descendantsPeakRssBytes,
    decoderCpuMsPerUpload: ok.length ? (decoders.reduce((s, d) => s + d.cpuSeconds, 0) * 1000) / ok.length : Number.NaN,
    others: p.memory.descendants.filter((d) => !d.command.includes(DECODER_MAIN)).map((d) => d.command),
  };
}

/** @param {ReturnType<typeof summarize>} s */
const memoryText = (s) =>
  `server RSS peak ${n0(mb(s.serverPeakRss))} MB; decoders: ${s.decoders} seen, one at most ` +
  `${n0(mb(s.decoderPeakRss))} MB, all together at most ${n0(mb(s.decodersPeakRssTogether))} MB; CPU per upload: ` +
  `server ${n0(s.serverCpuMsPerUpload)} ms, decoders ${n0(s.decoderCpuMsPerUpload)} ms`;

/** @param {ReturnType<typeof summarize>} s */
const problemOf = (s) => {
  if (s.ok === s.total) return undefined;
  const statuses = Object.entries(s.statuses)
    .map(([status, n]) => `${n} × ${status === "0" ? "no answer" : status}`)
    .join(", ");
  return `${s.total - s.ok} of ${s.total} uploads not a 201 with a webp of the input's size (answers: ${statuses}); first: ${s.firstError}`;
};

/**
 * Media uploads (issue 14) on `vellum serve` with the default plugins (`MEDIA_DECODERS`, default 2,
 * decoder processes): a 12-megapixel JPEG and a 2000×2000 PNG generated at the start, each upload's
 * bytes distinct. Time per upload one at a time (p50, p99), uploads per second with `CLIENTS`
 * clients for the run duration, and the server's and its decoders' memory sampled every 50 ms;
 * the target: the server under 300 MB while 4 large uploads run at once.
 * @type {import("./registry.mjs").Scenario}
 */
export default async function mediaScenario() {
  /** @type {string[]} */
  const lines = [];
  /** @type {string[]} */
  const failures = [];
  const duration = defaultDuration();

  process.stderr.write("media: generating the inputs\n");
  const inputs = await mediaInputs();
  lines.push(
    `media: ${inputs.map((i) => `${i.name} (${i.width}×${i.height}, ${n1(mb(i.bytes.length))} MB)`).join(" and ")}, ` +
      `each upload's bytes distinct; sequential: ${SEQUENTIAL} uploads per input; throughput: ${CLIENTS} clients ` +
      `for ${duration} s per input; memory sampled every ${SAMPLE_MS} ms; load average at start ` +
      `${loadavg()
        .map((l) => l.toFixed(1))
        .join(", ")}`,
  );

  let server;
  let tree;
  /** @type {Phase[]} */
  const phases = [];
  try {
    server = await vellum.start({ SERVICE_API_KEY: API_KEY });
    tree = sampleProcessTree(server.pid, { everyMs: SAMPLE_MS });
    const upload = await uploader(server.url);
    const idleRss = server.rssBytes();

    // Warm-up, not reported: both decoders started, each input once.
    process.stderr.write("media: warm-up\n");
    const warm = await Promise.all([upload(inputs[0]), upload(inputs[1])]);
    const warmProblem = warm.find((u) => u.status !== 201);
    if (warmProblem) throw new Error(`warm-up upload answered ${warmProblem.status}: ${warmProblem.error}`);

    // First, so that the server's VmHWM (its peak since start) covers no more than start, warm-up and this.
    const together = [];
    for (const input of inputs) together.push(await atOnce(tree, upload, input));
    const hwm = server.peakRssBytes();
    const sampled = Math.max(...together.map((p) => p.memory.rootPeakRssBytes));
    const met = Math.max(hwm, sampled) < RSS_TARGET_BYTES;
    phases.push(...together);

    for (const input of inputs) {
      phases.push(await phase(tree, upload, { name: "sequential", input, clients: 1, done: (n) => n >= SEQUENTIAL }));
    }
    for (const input of inputs) {
      phases.push(
        await phase(tree, upload, {
          name: `${CLIENTS} clients`,
          input,
          clients: CLIENTS,
          done: (_, ms) => ms >= duration * 1000,
        }),
      );
    }

    for (const p of phases) {
      const s = summarize(p);
      const target = `POST /api/v1/media · ${p.input} · ${p.name}`;
      lines.push(
        `${p.input}, ${p.name}: ${s.ok} of ${s.total} answered 201 in ${n1(p.elapsedMs / 1000)} s, ` +
          `${n2(s.perSecond)} uploads/s; per upload p50 ${n0(s.p50)} ms, p99 ${n0(s.p99)} ms, max ${n0(s.max)} ms; ` +
          memoryText(s) +
          (s.others.length ? `; other processes under the server: ${s.others.join("; ")}` : ""),
      );
      const problem = problemOf(s);
      if (problem) failures.push(`${target}: ${problem}`);
    }

    const allDecoders = tree
      .window()
      .end()
      .descendants.filter((d) => d.command.includes(DECODER_MAIN));
    lines.push(
      `server RSS: ${n0(mb(idleRss))} MB before the first upload, peak (VmHWM) ${n0(mb(server.peakRssBytes()))} MB ` +
        `over the whole run; decoders' own peaks (VmHWM): ${allDecoders.map((d) => `${n0(mb(d.hwmBytes))} MB`).join(", ")}`,
    );
    lines.push(
      `server RSS while ${AT_ONCE} uploads run at once (${inputs.map((i) => i.name).join(", then ")}, ${roundsText} each): ` +
        `peak sampled ${n0(mb(sampled))} MB, VmHWM since start ${n0(mb(hwm))} MB; ` +
        `target under ${mb(RSS_TARGET_BYTES)} MB: ${met ? "met" : "NOT met"}`,
    );
    if (!met) failures.push(`server RSS over ${mb(RSS_TARGET_BYTES)} MB with ${AT_ONCE} uploads at once`);
  } catch (err) {
    failures.push(`vellum serve: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    tree?.stop();
    await server?.stop();
  }
  return {
    lines,
    failures,
    data: {
      inputs: inputs.map(({ name, width, height, bytes }) => ({ name, width, height, bytes: bytes.length })),
      sequential: SEQUENTIAL,
      clients: CLIENTS,
      duration,
      phases: phases.map((p) => ({ ...p, summary: summarize(p) })),
    },
  };
}
