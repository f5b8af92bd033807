import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { machineHeader, machineInfo } from "./lib/report.mjs";
import { startServer } from "./lib/server.mjs";
import { startReceivers } from "./lib/webhook-receivers.mjs";
import { Monitor } from "./soak/monitor.mjs";
import { Traffic } from "./soak/traffic.mjs";
import {
  compareDeliveries,
  compareModel,
  compareResources,
  healthProblems,
  listedArticles,
  memoryLines,
  sampleTable,
  trafficLines,
} from "./soak/verdict.mjs";

/**
 * The soak (docs/testing.md "Soak"): `vellum serve` with every default plugin on (webhooks to three
 * receivers, one of them failing every 25th delivery; backups every 30 s with retention and drills;
 * media), under a steady mix of every public route for SOAK_MINUTES, killed with SIGKILL and
 * restarted SOAK_KILLS times along the way. Then it checks what must hold: every answer as the
 * contract gives it, the service holding exactly what it acknowledged, every receiver given every
 * event in commit order, nothing dead-lettered or left queued, no error in the log, file
 * descriptors and the WAL bounded. Memory is reported, not judged. Exits 1 when a check fails.
 *
 * SOAK_PROCESSES=2 (or more) runs that many `vellum serve` on the one data dir, as a process
 * manager's cluster mode does, with the requests spread over them in turn; each kill takes the one
 * holding the queues' leases (read from the lease table), so every kill makes another take its
 * queues over, and the same checks hold. Resources and memory are sampled in the first-started
 * process (and its restarts, when it is the one killed).
 */

const MINUTES = Number(process.env.SOAK_MINUTES) || 5;
/** Operations started per second. */
const RATE = Number(process.env.SOAK_RATE) || 100;
const KILLS = process.env.SOAK_KILLS === undefined ? 1 : Number(process.env.SOAK_KILLS);
/** `vellum serve` processes sharing the data dir. */
const PROCESSES = Math.max(1, Number(process.env.SOAK_PROCESSES) || 1);
/** Live articles at most: past them a create becomes a delete, so the data set stays about this size. */
const MAX_ARTICLES = Number(process.env.SOAK_ARTICLES) || 2_000;
const MAX_IN_FLIGHT = 64;
/**
 * The flaky receiver answers every 25th delivery 500. Its later events wait while that one is
 * retried (order per receiver), so its retries start at 250 ms: at 1 s, one failure in 7 held it
 * to about 6 events/s, below what the mix commits (about 30/s), and its backlog only grew.
 */
const FAIL_EVERY = 25;
const SAMPLE_EVERY_MS = 5_000;
const DRAIN_LIMIT_MS = 180_000;
const API_KEY = "soak-api-key-0123456789abcdefghij";
const vellumBin = fileURLToPath(new URL("../packages/vellum/bin/vellum.mjs", import.meta.url));

const root = await mkdtemp(join(tmpdir(), "vellum-soak-"));
const dataDir = join(root, "data");
const backupDir = join(root, "backups");
await mkdir(backupDir);
const lifetimeSeconds = MINUTES * 60 + 900;
const healthy = await startReceivers(2, { lifetimeSeconds });
const flaky = await startReceivers(1, { failEvery: FAIL_EVERY, lifetimeSeconds });
const env = {
  SERVICE_API_KEY: API_KEY,
  SERVICE_LOG_FORMAT: "json",
  SERVICE_LOG_LEVEL: "warn",
  SERVICE_WEBHOOK_URLS: [...healthy.urls, ...flaky.urls].join(","),
  SERVICE_WEBHOOK_SECRET: "soak-webhook-secret-0123456789",
  SERVICE_WEBHOOK_RETRY_SCHEDULE: "250ms,1s,2s,4s,8s,16s",
  BACKUP_TARGET: backupDir,
  SERVICE_BACKUP_PASSPHRASE: "soak-backup-passphrase-0123456789",
  BACKUP_INTERVAL_MINUTES: "0.5",
  BACKUP_KEEP_GENERATIONS: "3",
  BACKUP_KEEP_DAYS: "0.001",
  BACKUP_DRILL_HOURS: "0.03",
};

/** Log lines of the server by level, and the first few warnings and errors. */
const log = { lines: 0, byLevel: new Map(), firstProblems: [] };
/** A reader of one process's output: its lines, counted into `log` (each process keeps its own partial line). */
function logReader() {
  let pending = "";
  return (chunk) => {
    pending += chunk.toString();
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.trim()) continue;
      log.lines++;
      let level = "text";
      try {
        level = String(JSON.parse(line).level ?? "unknown");
      } catch {
        // A line that is not JSON (a crash's stack trace, say) counts as "text".
      }
      log.byLevel.set(level, (log.byLevel.get(level) ?? 0) + 1);
      if (level !== "info" && log.firstProblems.length < 12) log.firstProblems.push(line.slice(0, 300));
    }
  };
}

const start = () =>
  startServer({
    args: (port) => [vellumBin, "serve", "--port", String(port), "--host", "127.0.0.1", "--data-dir", dataDir],
    env,
    onOutput: logReader(),
  });

const traffic = new Traffic({ apiKey: API_KEY, seed: Number(process.env.SOAK_SEED) || 1, maxArticles: MAX_ARTICLES });
const monitor = new Monitor({ dataDir, backupDir });
const servers = [];
for (let i = 0; i < PROCESSES; i++) servers.push(await start());
/** The first-started process (or its restart): the one sampled. */
const first = () => servers[0];
/** Which run of the sampled process this is: 1, then 2 after it was killed and restarted, … */
let life = 1;
let kills = 0;
await traffic.connect(servers.map((s) => s.url));
process.stderr.write(
  `soak: ${MINUTES} min at ${RATE} operations/s, ${KILLS} kill(s), ${PROCESSES} process(es); data in ${root}\n`,
);

const running = new Set();
let skipped = 0;
let paused = false;
const issue = () => {
  if (paused) return;
  if (traffic.inFlight >= MAX_IN_FLIGHT) {
    skipped++;
    return;
  }
  const step = traffic.step().finally(() => running.delete(step));
  running.add(step);
};

const totalMs = MINUTES * 60_000;
const killAt = Array.from({ length: KILLS }, (_, i) => ((i + 1) * totalMs) / (KILLS + 1));
const began = performance.now();
let issued = 0;
let nextSample = 0;
const problems = [];
try {
  while (performance.now() - began < totalMs) {
    const elapsed = performance.now() - began;
    const due = Math.floor((elapsed / 1000) * RATE);
    for (; issued < due; issued++) issue();
    if (elapsed >= nextSample) {
      monitor.sample(first().pid, life);
      nextSample += SAMPLE_EVERY_MS;
    }
    if (killAt.length > 0 && elapsed >= (killAt[0] ?? Infinity)) {
      killAt.shift();
      // The holder of the queues' leases: after a restart the process killed before holds none, so
      // killing the same one again would test no takeover.
      const holders = monitor.queueLeaseHolders();
      const index = servers.findIndex((server) => holders.has(server.pid));
      if (index < 0) problems.push(`no running process held the queues' leases at ${(elapsed / 1000).toFixed(0)} s`);
      const victim = Math.max(index, 0);
      process.kill(servers[victim].pid, "SIGKILL");
      paused = true;
      await servers[victim].stop();
      process.stderr.write(
        `soak: killed process ${victim + 1} (pid ${servers[victim].pid}) at ${(elapsed / 1000).toFixed(0)} s; restarting\n`,
      );
      servers[victim] = await start();
      kills++;
      if (victim === 0) life++;
      await traffic.connect(servers.map((s) => s.url));
      paused = false;
    }
    await sleep(10);
  }
  await Promise.all(running);
  // Drain: the queues empty (the flaky receiver's retries take up to a minute).
  const drainStarted = performance.now();
  let last = monitor.sample(first().pid, life);
  while (last.queued > 0 && performance.now() - drainStarted < DRAIN_LIMIT_MS) {
    await sleep(1_000);
    last = monitor.sample(first().pid, life);
  }
  // Listed through the last-started process: with several, not the one sampled.
  const listed = await listedArticles(servers.at(-1).url);
  const stats = [...(await healthy.stats()), ...(await flaky.stats())];
  const health = await healthProblems(first().url);
  problems.push(...health.problems);
  for (const other of servers.slice(1)) problems.push(...(await healthProblems(other.url)).problems);
  problems.push(
    ...compareModel(traffic, listed),
    ...compareDeliveries(traffic, stats),
    ...compareResources(monitor.samples),
  );
  if (traffic.unexpectedCount > 0)
    problems.push(`${traffic.unexpectedCount} unexpected answers: ${traffic.unexpected.join("; ")}`);
  const errors = (log.byLevel.get("error") ?? 0) + (log.byLevel.get("fatal") ?? 0) + (log.byLevel.get("text") ?? 0);
  if (errors > 0) problems.push(`${errors} error lines in the server's log`);

  const liveCount = [...traffic.model.values()].filter((s) => s.live && !s.uncertain).length;
  const lines = [
    machineHeader(machineInfo()),
    "",
    `soak: ${MINUTES} min, ${RATE} operations/s started (${skipped} skipped: ${MAX_IN_FLIGHT} in flight), ` +
      `${PROCESSES} process(es) on one data dir, ${kills} kill(s) with SIGKILL and restart; drained in ${((performance.now() - drainStarted) / 1000).toFixed(1)} s`,
    "",
    ...trafficLines(traffic),
    "",
    ...sampleTable(monitor.samples),
    "",
    `- articles: ${liveCount} live as acknowledged, ${listed.size} listed; writes whose answer was lost: ${traffic.events.uncertain}`,
    `- events acknowledged: ${traffic.events["article.created"]} created, ${traffic.events["article.updated"]} updated, ${traffic.events["article.deleted"]} deleted; ` +
      `receivers: ${stats.map((s) => `${s.unique} distinct (${s.duplicates} again)`).join(", ")}`,
    ...memoryLines(monitor.samples).map((line) => `- ${line}`),
    `- WAL at most ${Math.max(...monitor.samples.map((s) => s.walMb)).toFixed(1)} MB; database ${last.dbMb.toFixed(1)} MB, ` +
      `data directory ${last.dataMb.toFixed(1)} MB at the end; job rows ${last.jobs}, outbox rows ${last.events}`,
    `- backups: ${health.backup.generations} generations at the end; last drill ${health.backup.drill?.ok ? "passed" : "did not pass"} ` +
      `(${health.backup.drill?.at ?? "never"})`,
    `- server log: ${[...log.byLevel].map(([level, n]) => `${n} ${level}`).join(", ") || "nothing"}`,
    ...log.firstProblems.map((line) => `  - ${line}`),
    "",
    problems.length === 0
      ? "soak: every check held"
      : `soak: ${problems.length} check(s) failed:\n${problems.map((p) => `- ${p}`).join("\n")}`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  for (const server of servers) await server.stop();
  await healthy.process.stop();
  await flaky.process.stop();
  await rm(root, { recursive: true, force: true });
}
process.exitCode = problems.length === 0 ? 0 : 1;
