import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createDataDir, treeBytes } from "../lib/backup-data.mjs";
import { best, figures, runChild, warmPageCache } from "../lib/backup-run.mjs";

const MIB = 1024 * 1024;
/** Size of the data dir in MiB; env BENCH_BACKUP_MB scales it down for a quick check. */
const SIZE_MIB = Number(process.env.BENCH_BACKUP_MB) || 1024;
/** Rounds of every op (the best wall time of each is reported); env BENCH_BACKUP_ROUNDS. */
const ROUNDS = Number(process.env.BENCH_BACKUP_ROUNDS) || 3;
/** Most one child may take: 60 s plus 0.5 s per MiB (572 s for 1 GiB). */
const CHILD_TIMEOUT_MS = 60_000 + SIZE_MIB * 500;
const PASSPHRASE = "bench backup passphrase, long enough";
const DIST = new URL("../../plugins/backup/dist/index.js", import.meta.url);

/** Issue 15's targets (backup-format.md §6). */
const MIN_RATIO = 0.5;
/** Restore of 1 GiB in under 2 minutes, scaled linearly for a smaller data dir. */
const RESTORE_LIMIT_S = (120 * SIZE_MIB) / 1024;
/**
 * Verify or restore: Argon2id's 64 MiB and 1 MiB of frame buffers, read as the op's own peak (what
 * it adds to its process's RSS; bench/lib/backup-child.mjs `startOwnPeak`).
 */
const READ_RSS_BOUND = 64 * MIB + 1 * MIB;
/** Backup: the DB image, Argon2id's 64 MiB and 16 MiB, read the same way. */
const writeRssBound = (dbBytes) => dbBytes + 64 * MIB + 16 * MIB;

const n0 = (value) => (Number.isFinite(value) ? value.toFixed(0) : "n/a");
const n1 = (value) => (Number.isFinite(value) ? value.toFixed(1) : "n/a");
const n2 = (value) => (Number.isFinite(value) ? value.toFixed(2) : "n/a");
const mib = (bytes) => n0(bytes / MIB);
const mib1 = (bytes) => n1(bytes / MIB);

/** What each op does, for the report. */
const DESCRIPTIONS = {
  "raw-encrypt":
    "raw AES-256-GCM encrypt: read every source file in 256 KiB chunks, one cipher object per 64 KiB frame, write frames + tags to one file, fsync",
  "raw-decrypt": "raw AES-256-GCM decrypt: read that file, one decipher object per frame, check every tag, discard",
  "raw-decrypt-write": "raw decrypt as above, then write the plaintext to one file and fsync",
  backup:
    "writeGeneration: serialize() snapshot in a worker (handed over in 1 MiB slices), each file read once with its SHA-256, encrypt, write (1 MiB writes), then fsync and the read-after-write check of every frame side by side (content digests taken from the authenticated stream), then publish",
  verify: "verifyVpbk: Argon2id, decrypt and authenticate every frame, decode records, check every per-file SHA-256",
  restore:
    "restoreGeneration: Argon2id, decrypt, write every file into staging with fdatasync, integrity_check, fsync the tree, rename into place",
};

/**
 * Backup, verify and restore (issue 15) of a generated data dir of `BENCH_BACKUP_MB` MiB (default
 * 1 GiB: a 128 MiB WAL-mode SQLite database with random blobs and 896 MiB of incompressible media),
 * with the built `plugins/backup` library and its default Argon2id (64 MiB, t 3, p 4), against raw
 * AES-256-GCM in Node over the same bytes. Every op runs in a child process of its own (peak RSS
 * its own), `ROUNDS` times, interleaved; the best wall time of each op is reported.
 * @type {import("./registry.mjs").Scenario}
 */
export default async function backupScenario() {
  /** @type {string[]} */
  const lines = [];
  /** @type {string[]} */
  const failures = [];
  if (!existsSync(fileURLToPath(DIST))) {
    failures.push(
      "plugins/backup/dist/index.js is missing: build first (`npx tsc -b tsconfig.build.json`; `npm run bench` does)",
    );
    return { lines, failures };
  }
  const dist = DIST.href;
  const tmp = await mkdtemp(join(tmpdir(), "vellum-bench-backup-"));
  /** @type {Record<string, import("../lib/backup-run.mjs").ChildRun[]>} */
  const runs = {};
  let data;
  try {
    const dataDir = join(tmp, "data");
    await mkdir(dataDir);
    process.stderr.write(`backup: creating a ${SIZE_MIB} MiB data dir in ${tmp}\n`);
    data = await createDataDir(dataDir, SIZE_MIB * MIB);
    const { sizes } = data;
    lines.push(
      `backup: data dir of ${mib(data.bytes)} MiB (${data.bytes} bytes): db/vellum.sqlite ${mib(data.dbBytes)} MiB ` +
        `(WAL mode, ${data.rows} rows of 4000 random bytes), ${data.mediaFiles} incompressible media files ` +
        `(${data.smallFiles} under 256 KiB, the rest a mean 4.48 MiB); default Argon2id (64 MiB, t 3, p 4); ` +
        `each op in its own node process, ${ROUNDS} round${ROUNDS === 1 ? "" : "s"} interleaved, best wall time shown; ` +
        `the files an op reads are read once just before it (page cache), writes go to disk (fsync); MiB = 2^20 bytes; load average at start ` +
        loadavg()
          .map((l) => l.toFixed(1))
          .join(", "),
    );

    /** Runs `op` in its child, the files it reads (`reads`) in the page cache first. */
    const run = async (op, args, reads = []) => {
      process.stderr.write(`backup: ${op}\n`);
      await warmPageCache(reads);
      const result = await runChild(op, { dist, ...args }, CHILD_TIMEOUT_MS);
      (runs[op] ??= []).push(result);
      return result;
    };
    await run("idle-bare", {});
    await run("idle", {});
    await run("argon2id", { passphrase: PASSPHRASE });
    await run("argon2id", { passphrase: PASSPHRASE });
    for (let round = 0; round < ROUNDS; round++) {
      const dir = join(tmp, `round-${round}`);
      const target = join(dir, "target");
      await mkdir(target, { recursive: true });
      const rawFile = join(dir, "raw.enc");
      const encrypted = await run("raw-encrypt", { files: data.files, output: rawFile }, data.files);
      const generation = await run("backup", { dataDir, target, passphrase: PASSPHRASE }, data.files);
      const archive = generation.result.path;
      await run("raw-decrypt", { input: rawFile, key: encrypted.result.key, sizes }, [rawFile]);
      await run("verify", { file: archive, passphrase: PASSPHRASE }, [archive]);
      await run(
        "raw-decrypt-write",
        { input: rawFile, key: encrypted.result.key, sizes, output: join(dir, "raw.out") },
        [rawFile],
      );
      await rm(rawFile);
      await rm(join(dir, "raw.out"));
      const dest = join(dir, "restored");
      await run("restore", { file: archive, dest, passphrase: PASSPHRASE }, [archive]);
      const restored = await treeBytes(join(dest, "media"));
      if (restored.bytes !== data.bytes - data.dbBytes || restored.files !== data.mediaFiles) {
        failures.push(
          `restore, round ${round + 1}: ${restored.files} media files of ${restored.bytes} bytes restored, ` +
            `not ${data.mediaFiles} of ${data.bytes - data.dbBytes}`,
        );
      }
      if (generation.result.fileBytes !== data.bytes) {
        lines.push(
          `backup, round ${round + 1}: the generation holds ${generation.result.fileBytes} content bytes, the source ${data.bytes}`,
        );
      }
      await rm(dir, { recursive: true, force: true });
    }
    report(lines, failures, runs, data);
    lines.push(
      `backup: load average at the end ${loadavg()
        .map((l) => l.toFixed(1))
        .join(", ")}`,
    );
  } catch (err) {
    failures.push(`backup: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return {
    lines,
    failures,
    data: {
      sizeMiB: SIZE_MIB,
      rounds: ROUNDS,
      dataDir: data && { ...data, files: data.files.length, sizes: undefined },
      runs,
    },
  };
}

/**
 * The report lines and the targets.
 * @param {string[]} lines
 * @param {string[]} failures
 * @param {Record<string, import("../lib/backup-run.mjs").ChildRun[]>} runs
 * @param {{ bytes: number, dbBytes: number }} data
 */
function report(lines, failures, runs, data) {
  const idle = Math.max(...runs.idle.map((r) => r.peakRssBytes));
  const bare = Math.max(...runs["idle-bare"].map((r) => r.peakRssBytes));
  lines.push(
    `idle child peak RSS: ${mib1(bare)} MiB bare node, ${mib1(idle)} MiB with plugins/backup/dist imported (the baseline below)`,
  );
  /** @type {Record<string, ReturnType<typeof figures> & { worstRssBytes: number, all: number[] }>} */
  const f = {};
  for (const op of Object.keys(DESCRIPTIONS)) {
    f[op] = {
      ...figures(best(runs[op]), data.bytes),
      worstRssBytes: Math.max(...runs[op].map((r) => r.peakRssBytes)),
      all: runs[op].map((r) => figures(r, data.bytes).mibPerS),
    };
    const x = f[op];
    const base = op.startsWith("raw") ? bare : idle;
    lines.push(
      `${op}: ${n0(x.mibPerS)} MiB/s wall (${n1(x.seconds)} s; rounds: ${x.all.map(n0).join(", ")} MiB/s), ` +
        `${n0(x.mibPerCpuS)} MiB per CPU-s` +
        (x.kdfMs ? `, ${n0(x.mibPerSNoKdf)} MiB/s without Argon2id (${n0(x.kdfMs)} ms)` : "") +
        `; peak RSS ${mib(x.worstRssBytes)} MiB (${mib(x.worstRssBytes - base)} above ${op.startsWith("raw") ? "bare node" : "the idle baseline"}) — ${DESCRIPTIONS[op]}`,
    );
  }
  const kdf = ["backup", "verify", "restore"].flatMap((op) => runs[op].map((r) => r.kdf));
  lines.push(
    `Argon2id (64 MiB, t 3, p 4), ${kdf.length} unlocks: ${kdf.map((k) => n0(k.ms)).join(", ")} ms wall, ` +
      `${kdf.map((k) => n0(k.cpuMs)).join(", ")} ms CPU`,
  );

  const ratio = (op, raw, what) => {
    const wall = f[op].mibPerS / f[raw].mibPerS;
    const cpu = f[op].mibPerCpuS / f[raw].mibPerCpuS;
    const met = wall >= MIN_RATIO;
    lines.push(
      `${op} / ${raw}: ${n2(wall)}× wall (${n2(f[op].mibPerSNoKdf / f[raw].mibPerS)}× without Argon2id), ${n2(cpu)}× per CPU-s; ` +
        `target ≥ ${MIN_RATIO}× ${what}: ${met ? "met" : "NOT met"}`,
    );
    if (!met) failures.push(`${op} at ${n2(wall)}× ${raw} (wall), under ${MIN_RATIO}×`);
  };
  ratio("backup", "raw-encrypt", "raw AES-256-GCM encrypt");
  ratio("verify", "raw-decrypt", "raw AES-256-GCM decrypt");

  const restoreMet = f.restore.seconds < RESTORE_LIMIT_S;
  lines.push(
    `restore of ${mib(data.bytes)} MiB: ${n1(f.restore.seconds)} s (slowest round ${n1(Math.max(...runs.restore.map((r) => r.wallMs)) / 1000)} s); ` +
      `target under ${n1(RESTORE_LIMIT_S)} s: ${restoreMet ? "met" : "NOT met"}`,
  );
  if (!restoreMet) failures.push(`restore took ${n1(f.restore.seconds)} s, not under ${n1(RESTORE_LIMIT_S)} s`);

  /** The op's own peak over its rounds (VmHWM reset at its start), or the idle-baseline reading. */
  const own = (op) => {
    const peaks = runs[op].map((r) => r.ownPeakBytes);
    return peaks.every((p) => typeof p === "number") ? Math.max(...peaks) : null;
  };
  const rss = (op, bound, what) => {
    const mine = own(op);
    const above = f[op].worstRssBytes - idle;
    const measured = mine ?? above;
    const met = measured <= bound;
    lines.push(
      `${op} peak RSS ${mib1(f[op].worstRssBytes)} MiB, ${mib1(above)} MiB above the idle baseline` +
        (mine === null ? "" : `, ${mib1(mine)} MiB above the op's own start (VmHWM reset there)`) +
        `; target ≤ ${mib1(bound)} MiB (${what}): ${met ? "met" : "NOT met"}`,
    );
    if (!met) failures.push(`${op} peak RSS ${mib1(measured)} MiB above its start, over ${mib1(bound)} MiB`);
    const worst = runs[op].reduce((a, b) => (b.peakRssBytes > a.peakRssBytes ? b : a)).rss;
    lines.push(
      `${op} RSS sampled every 20 ms (worst round), above the idle baseline: ${mib1(worst.startBytes - idle)} MiB at the start, ` +
        `peaks ${mib1(worst.beforeKdfBytes - idle)} MiB before Argon2id${op === "backup" ? " (the snapshot)" : ""}, ` +
        `${mib1(worst.kdfBytes - idle)} MiB during it, ${mib1(worst.afterKdfBytes - idle)} MiB after it`,
    );
  };
  const argon2 = runs.argon2id.map((r) => r.peakRssBytes - idle);
  const argon2Own = own("argon2id");
  lines.push(
    `Argon2id alone (64 MiB, t 3, p 4, in a child that imported the library): ${argon2.map(mib1).join(" and ")} MiB above ` +
      `the idle baseline` +
      (argon2Own === null ? "" : `, ${mib1(argon2Own)} MiB above its own start`) +
      `; the floor of the verify and restore bound below`,
  );
  rss("backup", writeRssBound(data.dbBytes), `DB ${mib(data.dbBytes)} MiB + 64 MiB Argon2id + 16 MiB`);
  rss("verify", READ_RSS_BOUND, "64 MiB Argon2id + 1 MiB frame buffers");
  rss("restore", READ_RSS_BOUND, "64 MiB Argon2id + 1 MiB frame buffers");
}
