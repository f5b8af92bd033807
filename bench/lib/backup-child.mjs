/**
 * One operation of the backup bench in a process of its own, so that its peak RSS is its own:
 * `node backup-child.mjs <op> <json args>`. Prints one JSON line on stdout: the op's wall time and
 * CPU time (from just before to just after the op, imports excluded), the process's peak RSS
 * (VmHWM of /proc/self/status, imports included), the op's own peak (see `startOwnPeak`), the
 * Argon2id time, and the op's own result. Ops: `idle-bare` (node, nothing imported), `idle` (the backup library imported,
 * nothing done), `argon2id` (one default Argon2id alone), `raw-encrypt`, `raw-decrypt`, `raw-decrypt-write`,
 * `backup`, `verify`, `restore`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

const [op, json = "{}"] = process.argv.slice(2);
const args = JSON.parse(json);

/** A size line of /proc/self/status (`VmHWM`: the peak RSS of this process's own mm), or null off Linux. */
function statusBytes(/** @type {"VmHWM" | "VmRSS"} */ field) {
  try {
    const kib = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    return kib === undefined ? null : Number(kib) * 1024;
  } catch {
    return null;
  }
}

/**
 * Starts the op's own peak: collects garbage (the child runs with --expose-gc), reads VmRSS, and
 * resets VmHWM to it by writing 5 to /proc/self/clear_refs (Linux ≥ 4.0). VmHWM at the end, less
 * this RSS, is the memory the op itself added, free of the few MiB by which one process's baseline
 * differs from the next. `baseBytes` is null where the reset is not possible; `peakBytes` is the
 * process's peak so far (the imports), which the reset forgets.
 */
function startOwnPeak() {
  globalThis.gc?.();
  const peakBytes = statusBytes("VmHWM");
  const rss = statusBytes("VmRSS");
  try {
    writeFileSync("/proc/self/clear_refs", "5");
    return { baseBytes: rss, peakBytes };
  } catch {
    return { baseBytes: null, peakBytes };
  }
}

const cpuMs = () => {
  const usage = process.resourceUsage();
  return (usage.userCPUTime + usage.systemCPUTime) / 1000;
};

/** Argon2id calls, timed (wall, and the process's CPU over the call). */
const kdf = { calls: 0, ms: 0, cpuMs: 0 };

/**
 * RSS sampled every 20 ms while the op runs, peak per phase: before the first Argon2id call (for
 * a backup: the snapshot), during Argon2id, after it (streaming). VmHWM is the exact peak; these
 * say where it was.
 */
const phases = { startBytes: 0, beforeKdfBytes: 0, kdfBytes: 0, afterKdfBytes: 0 };
let phase = /** @type {"beforeKdfBytes" | "kdfBytes" | "afterKdfBytes"} */ ("beforeKdfBytes");
const sample = () => {
  phases[phase] = Math.max(phases[phase], process.memoryUsage.rss());
};

async function library() {
  const lib = await import(args.dist);
  const deriveKek = async (...params) => {
    const started = performance.now();
    const cpu = cpuMs();
    sample();
    phase = "kdfBytes";
    try {
      return await lib.argon2idKek(...params);
    } finally {
      sample();
      phase = "afterKdfBytes";
      kdf.calls++;
      kdf.ms += performance.now() - started;
      kdf.cpuMs += cpuMs() - cpu;
    }
  };
  return { lib, deriveKek };
}

/** @type {Record<string, () => Promise<() => Promise<unknown>>>} each prepares (imports), then returns the op */
const ops = {
  "idle-bare": async () => async () => null,
  idle: async () => {
    await library();
    return async () => null;
  },
  argon2id: async () => {
    const { lib, deriveKek } = await library();
    return () => deriveKek(Buffer.from(args.passphrase), Buffer.alloc(16, 7), lib.DEFAULT_KDF).then(() => null);
  },
  "raw-encrypt": async () => {
    const { rawEncrypt } = await import("./backup-raw.mjs");
    return () => rawEncrypt(args.files, args.output);
  },
  "raw-decrypt": async () => {
    const { rawDecrypt } = await import("./backup-raw.mjs");
    return () => rawDecrypt(args.input, args.key, args.sizes);
  },
  "raw-decrypt-write": async () => {
    const { rawDecrypt } = await import("./backup-raw.mjs");
    return () => rawDecrypt(args.input, args.key, args.sizes, args.output);
  },
  backup: async () => {
    const { lib, deriveKek } = await library();
    const warnings = [];
    return async () => {
      const result = await lib.writeGeneration({
        dataDir: args.dataDir,
        target: args.target,
        passphrase: args.passphrase,
        deriveKek,
        warn: (message) => warnings.push(message),
      });
      return { ...result, skipped: result.skipped.length, warnings };
    };
  },
  verify: async () => {
    const { lib, deriveKek } = await library();
    return async () => {
      const summary = await lib.verifyVpbk(args.file, { passphrase: args.passphrase, deriveKek });
      return { dataBytes: summary.dataBytes, fileBytes: summary.fileBytes, entries: summary.entries };
    };
  },
  restore: async () => {
    const { lib, deriveKek } = await library();
    return async () => {
      const result = await lib.restoreGeneration({
        file: args.file,
        dest: args.dest,
        passphrase: args.passphrase,
        deriveKek,
      });
      return { generationId: result.generationId, fileBytes: result.summary.fileBytes, replaced: result.replaced };
    };
  },
};

const prepare = ops[op];
if (!prepare) {
  process.stderr.write(`backup-child: unknown op ${op}\n`);
  process.exit(2);
}
const run = await prepare();
const own = startOwnPeak();
phases.startBytes = process.memoryUsage.rss();
const sampler = setInterval(sample, 20);
const cpuAtStart = cpuMs();
const started = performance.now();
let result;
let error;
try {
  result = await run();
} catch (err) {
  error = err instanceof Error ? `${err.name}: ${err.message}${"code" in err ? ` (${err.code})` : ""}` : String(err);
}
const wallMs = performance.now() - started;
sample();
clearInterval(sampler);
const opCpuMs = cpuMs() - cpuAtStart;
const usage = process.resourceUsage();
const peakNow = statusBytes("VmHWM");
process.stdout.write(
  `${JSON.stringify({
    op,
    wallMs,
    cpuMs: opCpuMs,
    processCpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000,
    peakRssBytes: peakNow === null ? usage.maxRSS * 1024 : Math.max(peakNow, own.peakBytes ?? 0),
    ownPeakBytes: own.baseBytes === null || peakNow === null ? null : peakNow - own.baseBytes,
    kdf,
    rss: phases,
    result,
    error,
  })}\n`,
);
