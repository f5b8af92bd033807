import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { defaultDuration, withServerCpu } from "../lib/load.mjs";
import { outboxRowCost } from "../lib/outbox-rows.mjs";
import { freePort, machineTicks, stolenShare } from "../lib/server.mjs";
import { hookUrl, lagHistogram, startReceivers, totals } from "../lib/webhook-receivers.mjs";
import { vellum } from "../lib/targets.mjs";
import { measureCreates, writeHeaders } from "./articles-creates.mjs";
import { articleBody } from "./articles-data.mjs";

/** Articles created for the delivery rate; env BENCH_WEBHOOK_EVENTS overrides (quick trial runs). */
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS) || 3_000;
/** Create-throughput runs per configuration, alternating (none, 3, held; held, 3, none; …); env BENCH_WEBHOOK_ROUNDS. */
const ROUNDS = Number(process.env.BENCH_WEBHOOK_ROUNDS) || 2;
/** Issue 13's target: with 3 receivers, under 10 % fewer creates per second than with none. */
const TARGET_SHARE = 0.9;
const API_KEY = "bench-articles-api-key-0123456789abcdef";
const SECRET = "bench-webhook-secret-0123456789abcdef";
const QUEUE = "webhooks:deliveries";
/** One job per transaction that wrote events: it makes them deliveries, after the commit. */
const FANOUT = "webhooks:fanout";
/** Creates in flight while the backlog for the delivery rate is made. */
const IN_FLIGHT = 32;
const POLL_MS = 100;
/** Most a backlog may take to be written, or to drain, before the run goes on without it. */
const WAIT_MS = 300_000;
/** The receivers' process exits by itself this long after the longest wait it may see. */
const RECEIVER_SLACK_SECONDS = 60;
/** How long the receivers' process may live: the load, three of the longest waits, and slack. */
const receiverLifetime = () => defaultDuration() + (3 * WAIT_MS) / 1000 + RECEIVER_SLACK_SECONDS;

/** The server's environment with these receivers (none: webhooks installed but off, as by default). */
const webhookEnv = (urls, extra = {}) => ({
  SERVICE_API_KEY: API_KEY,
  ...(urls.length ? { SERVICE_WEBHOOK_URLS: urls.join(","), SERVICE_WEBHOOK_SECRET: SECRET } : {}),
  ...extra,
});

/** Read-only counts of the server's queues, from its database file. */
function queueCounts(dataDir) {
  const db = new Database(join(dataDir, "db", "vellum.sqlite"), { readonly: true });
  const count = db.prepare("SELECT count(*) AS n FROM _vellum_jobs WHERE queue = ? AND status = ?").pluck();
  const articles = db.prepare("SELECT count(*) AS n FROM articles_items").pluck();
  return {
    /** @param {string} queue @param {"queued" | "applied" | "failed"} status */
    jobs: (queue, status) => Number(count.get(queue, status)),
    articles: () => Number(articles.get()),
    close: () => db.close(),
  };
}

/**
 * Polls `done` every 100 ms for at most 300 s: whether it came true, and the milliseconds waited.
 * @param {() => boolean} done
 */
async function waitFor(done) {
  const started = performance.now();
  let ok = done();
  while (!ok && performance.now() - started < WAIT_MS) {
    await sleep(POLL_MS);
    ok = done();
  }
  return { ok, ms: performance.now() - started };
}

/** `count` creates through the API (POST /api/v1/articles, 32 in flight), each expected to answer 202. */
async function createArticles(url, count, prefix) {
  const headers = await writeHeaders(url, API_KEY);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const body = JSON.stringify(articleBody(`${prefix}-${i}`, i));
      const res = await fetch(`${url}/api/v1/articles`, { method: "POST", headers, body });
      await res.arrayBuffer();
      if (res.status !== 202) throw new Error(`create ${i} answered ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}

const n0 = (value) => (Number.isFinite(value) ? value.toFixed(0) : "n/a");
const n1 = (value) => (Number.isFinite(value) ? value.toFixed(1) : "n/a");
const cpuText = (us) => (typeof us === "number" ? `${us.toFixed(0)} µs` : "n/a");
const orderText = (t) => `${t.outOfOrder} out of commit order, ${t.duplicates} twice`;

/**
 * Deliveries per second with `receiverCount` receivers: `EVENTS` creates make a backlog while the
 * receivers hold their first delivery unanswered; once every create is applied (its deliveries in
 * the outbox), the receivers let go and the backlog drains. The rate runs from the first answered
 * delivery to the last, over all receivers. CPU per delivery: the server's and the receivers'.
 */
async function deliveryRate(receiverCount) {
  const receivers = await startReceivers(receiverCount, { hold: true, lifetimeSeconds: receiverLifetime() });
  let server;
  let counts;
  try {
    // A held delivery must not time out while the backlog is made.
    server = await vellum.start(webhookEnv(receivers.urls, { SERVICE_WEBHOOK_TIMEOUT_SECONDS: "120" }));
    counts = queueCounts(server.dataDir);
    const expected = EVENTS * receiverCount;
    await createArticles(server.url, EVENTS, `rate-${receiverCount}`);
    const outbox = await waitFor(() => counts.jobs(QUEUE, "queued") === expected);
    if (!outbox.ok) throw new Error(`the outbox did not reach ${expected} deliveries within ${WAIT_MS / 1000} s`);
    const { result, cpuUsPerUnit: receiverCpuUs } = await withServerCpu(
      receivers.process,
      () =>
        withServerCpu(
          server,
          async () => {
            await receivers.release();
            const drain = await waitFor(() => counts.jobs(QUEUE, "queued") === 0);
            return { ...totals(await receivers.stats()), drained: drain.ok };
          },
          (drained) => drained.count,
        ),
      ({ result: drained }) => drained.count,
    );
    const failed = counts.jobs(QUEUE, "failed");
    return {
      receivers: receiverCount,
      expected,
      ...result.result,
      failed,
      cpuUsPerDelivery: result.cpuUsPerUnit,
      receiverCpuUs,
    };
  } finally {
    counts?.close();
    await server?.stop();
    await receivers.process.stop();
  }
}

/**
 * One create-throughput run (the articles scenario's create load: 50 connections, the run
 * duration, then the creates' backlog drained) on a fresh `vellum serve` with `receiverCount`
 * receivers; with receivers, it then waits for every delivery. With `hold`, the receivers leave
 * the first delivery each unanswered until the load is over, so the run measures what the outbox
 * itself costs a create (the ceiling with deliveries out of the way), then the drain. Server CPU per acknowledged create,
 * over the load and the creates' drain (as the articles scenario counts it), and then over the
 * deliveries' drain. With `down`, the receivers' ports have nothing listening: every attempt is refused, and
 * each receiver's later events wait behind its first one's retry.
 */
async function createRun(receiverCount, { hold = false, down = false } = {}) {
  const receivers =
    receiverCount && !down
      ? await startReceivers(receiverCount, { hold, lifetimeSeconds: receiverLifetime() })
      : undefined;
  // A receiver that is down: nothing listens on its port, so every attempt is refused at once.
  const downUrls = down ? (await Promise.all(Array.from({ length: receiverCount }, freePort))).map(hookUrl) : [];
  let server;
  let counts;
  try {
    // Held deliveries must not time out during the load.
    server = await vellum.start(
      webhookEnv(receivers?.urls ?? downUrls, hold ? { SERVICE_WEBHOOK_TIMEOUT_SECONDS: "120" } : {}),
    );
    counts = queueCounts(server.dataDir);
    const machineBefore = machineTicks();
    const { result: creates, cpuUsPerUnit: cpuUsPerCreate } = await withServerCpu(
      server,
      () => measureCreates({ url: server.url, dataDir: server.dataDir, apiKey: API_KEY, pid: server.pid }),
      (measured) => measured.load.accepted,
    );
    const stolen = stolenShare(machineBefore, machineTicks());
    const run = { receivers: receiverCount, creates, cpuUsPerCreate, stolen, deliveries: undefined, deadLetters: 0 };
    if (down) run.deadLetters = counts.jobs(QUEUE, "failed");
    if (receivers) {
      const backlogAtEnd = counts.jobs(QUEUE, "queued");
      const fanOutAtEnd = counts.jobs(FANOUT, "queued");
      if (hold) await receivers.release();
      const { result: drain, cpuUsPerUnit: cpuUsPerCreateAfter } = await withServerCpu(
        server,
        () => waitFor(() => counts.jobs(FANOUT, "queued") === 0 && counts.jobs(QUEUE, "queued") === 0),
        () => creates.load.accepted,
      );
      const stats = await receivers.stats();
      run.deliveries = {
        ...totals(stats),
        expected: counts.articles() * receiverCount,
        failed: counts.jobs(QUEUE, "failed"),
        left: counts.jobs(QUEUE, "queued"),
        backlogAtEnd,
        fanOutAtEnd,
        drainMs: drain.ms,
        cpuUsPerCreateAfter,
        lagMs: stats.map((s) => s.lagMs),
        histogram: await lagHistogram(server.url),
      };
    }
    return { ...run, peakRssBytes: server.peakRssBytes() };
  } finally {
    counts?.close();
    await server?.stop();
    await receivers?.process.stop();
  }
}

/**
 * The steady run's rate: creates a second the writes keep up with, a tenth of what the machine
 * takes without receivers in this run (machines of the same kind differ threefold; 200 a second
 * saturated the slowest one seen).
 */
const STEADY_SHARE = 0.1;
/** The steady rate when no run without receivers gave one. */
const STEADY_FALLBACK_RATE = 200;

/**
 * Creates at a steady `rate` a second for the run's duration, one request at a time on a timer,
 * with 3 live receivers: a load the writes keep up with must not hold deliveries back. Counts what
 * each receiver had when the load ended and a second later, and the commit → delivery lag.
 * @param {number} rate
 */
async function steadyRun(rate) {
  const receivers = await startReceivers(3, { lifetimeSeconds: receiverLifetime() });
  let server;
  try {
    server = await vellum.start(webhookEnv(receivers.urls));
    const headers = await writeHeaders(server.url, API_KEY);
    const started = performance.now();
    const answers = [];
    let sent = 0;
    while (performance.now() - started < defaultDuration() * 1000) {
      const due = Math.floor(((performance.now() - started) / 1000) * rate);
      for (; sent < due; sent++) {
        const body = JSON.stringify(articleBody(`steady-${sent}`, sent));
        answers.push(fetch(`${server.url}/api/v1/articles`, { method: "POST", headers, body }).then((r) => r.status));
      }
      await sleep(5);
    }
    const statuses = await Promise.all(answers);
    const atEnd = (await receivers.stats()).map((s) => s.count);
    await sleep(1_000);
    const stats = await receivers.stats();
    return {
      sent,
      accepted: statuses.filter((status) => status === 202).length,
      atEnd,
      aSecondLater: stats.map((s) => s.count),
      lagMs: stats.map((s) => s.lagMs),
      ...totals(stats),
    };
  } finally {
    await server?.stop();
    await receivers.process.stop();
  }
}

const mean = (values) => values.reduce((sum, v) => sum + v, 0) / values.length;
const percentText = (share) => (share === null ? "n/a" : `${(share * 100).toFixed(1)} %`);
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** What went wrong with the deliveries of a measure, or undefined. */
function deliveryProblem(d) {
  const problems = [];
  if (d.count < d.expected) problems.push(`${d.count} of ${d.expected} delivered`);
  if (d.failed) problems.push(`${d.failed} dead`);
  if (d.outOfOrder || d.duplicates) problems.push(orderText(d));
  return problems.length ? problems.join(", ") : undefined;
}

/**
 * Webhooks (issue 13) on `vellum serve` with the default plugins, receivers on 127.0.0.1 in a
 * process of their own answering 204: deliveries per second to 1 receiver and to 3 (a backlog of
 * `EVENTS` creates drained), and creates per second with 3 receivers against none, in alternating
 * runs of the same length (target: under 10 % fewer), with the server's CPU per create and the
 * commit → delivery lag. Runs with 3 and with 1 receiver whose deliveries are held until the load
 * ends tell what the outbox costs a create in the live server.
 * @type {import("./registry.mjs").Scenario}
 */
export default async function webhooksScenario() {
  /** @type {import("./registry.mjs").LoadRow[]} */
  const rows = [];
  /** @type {string[]} */
  const lines = [
    `webhooks: a fresh data directory per server; receivers on 127.0.0.1 answer 204 from a process of their own; ` +
      `delivery rate: a backlog of ${EVENTS} creates drained; create load: 50 connections, ${defaultDuration()} s per run`,
  ];
  /** @type {string[]} */
  const failures = [];
  const rates = [];
  for (const receiverCount of [1, 3]) {
    const name = `deliveries, ${plural(receiverCount, "receiver")}`;
    process.stderr.write(`webhooks: ${name}, a backlog of ${EVENTS} creates\n`);
    try {
      const rate = await deliveryRate(receiverCount);
      rates.push(rate);
      lines.push(
        `${name}: ${n0(rate.perSecond)}/s from the first to the last (slowest second ${n0(rate.slowestSecond)}, ` +
          `fastest ${n0(rate.fastestSecond)}); ${rate.count} of ${rate.expected} delivered, ${rate.failed} dead, ` +
          `${orderText(rate)}; CPU per delivery: server ${cpuText(rate.cpuUsPerDelivery)}, receivers ${cpuText(rate.receiverCpuUs)}`,
      );
      const problem = deliveryProblem(rate);
      if (problem) failures.push(`${name}: ${problem}`);
    } catch (err) {
      failures.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** @type {Record<"none" | "three" | "held" | "heldOne" | "down", Array<Awaited<ReturnType<typeof createRun>>>>} */
  const runs = { none: [], three: [], held: [], heldOne: [], down: [] };
  // none, 3, held, held 1, down, down, held 1, held, 3, none, …: a drift of the machine over the runs falls on all alike.
  const round = ["none", "three", "held", "heldOne", "down"];
  const order = Array.from({ length: ROUNDS }, (_, i) => (i % 2 === 0 ? round : [...round].reverse())).flat();
  for (const [i, kind] of order.entries()) {
    const receiverCount = { none: 0, three: 3, held: 3, heldOne: 1, down: 1 }[kind];
    const hold = kind === "held" || kind === "heldOne";
    const down = kind === "down";
    const how = hold ? ", deliveries held until the load ends" : down ? " that is down (nothing listens)" : "";
    const name = `vellum serve, ${receiverCount ? plural(receiverCount, "receiver") : "no receivers"}${how} (run ${i + 1})`;
    process.stderr.write(`webhooks: creates, ${name}\n`);
    try {
      const run = await createRun(receiverCount, { hold, down });
      runs[kind].push(run);
      rows.push({
        target: `POST /api/v1/articles (acknowledged) · ${name}`,
        ...run.creates.load,
        peakRssBytes: run.peakRssBytes,
        cpuUsPerRequest: run.cpuUsPerCreate,
        ratio: null,
      });
      lines.push(
        `creates, ${name}: ${run.creates.lines[0]}; server CPU ${cpuText(run.cpuUsPerCreate)} per create; ` +
          `CPU time the host took for other guests during the load: ${percentText(run.stolen)}`,
      );
      const d = run.deliveries;
      if (d) {
        const lag = d.lagMs.map((l) => `${n0(l.p50)} / ${n0(l.p99)} / ${n0(l.max)}`).join(", ");
        const h = d.histogram;
        lines.push(
          `deliveries, ${name}: ${d.count} of ${d.expected} (${d.failed} dead, ${orderText(d)}), ` +
            `${n0(d.perSecond)}/s from the first to the last (slowest second ${n0(d.slowestSecond)}); ` +
            `${d.backlogAtEnd} waiting and ${d.fanOutAtEnd} transactions' events not yet fanned out when the ` +
            `creates were applied, delivered ${n1(d.drainMs / 1000)} s later` +
            `${d.left ? ` except ${d.left}` : ""}, ${cpuText(d.cpuUsPerCreateAfter)} of server CPU more per create; ` +
            `commit → delivery p50 / p99 / max per receiver ${lag} ms; ` +
            `server histogram: mean ${n0(h.meanMs)} ms, p50 ≤ ${n0(h.p50LeMs)} ms, p99 ≤ ${n0(h.p99LeMs)} ms (${h.count})`,
        );
        const problem = deliveryProblem(d);
        if (problem) failures.push(`deliveries, ${name}: ${problem}`);
      }
    } catch (err) {
      failures.push(`creates, ${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  const noneRates = runs.none.map((run) => run.creates.load.rps);
  const steadyRate = noneRates.length ? Math.round(STEADY_SHARE * mean(noneRates)) : STEADY_FALLBACK_RATE;
  process.stderr.write(`webhooks: ${steadyRate} creates a second, 3 receivers\n`);
  try {
    const steady = await steadyRun(steadyRate);
    const lag = steady.lagMs.map((l) => `${n0(l.p50)} / ${n0(l.p99)} / ${n0(l.max)}`).join(", ");
    lines.push(
      `steady ${steadyRate} creates a second (${noneRates.length ? `${STEADY_SHARE * 100} % of the rate without receivers` : "no run without receivers gave a rate"}) ` +
        `for ${defaultDuration()} s, 3 receivers: ${steady.accepted} of ` +
        `${steady.sent} accepted; each receiver had ${steady.atEnd.join(", ")} events when the load ended and ` +
        `${steady.aSecondLater.join(", ")} a second later (${orderText(steady)}); commit → delivery p50 / p99 / max ` +
        `per receiver ${lag} ms`,
    );
    // A load the writes keep up with must not hold deliveries back (they once went out at 4 a second).
    const behind = steady.aSecondLater.filter((count) => count < steady.accepted).length;
    if (behind || steady.accepted < steady.sent || steady.outOfOrder || steady.duplicates) {
      failures.push(`steady creates: ${behind} receivers behind a second after the load (${orderText(steady)})`);
    }
  } catch (err) {
    failures.push(`steady creates: ${err instanceof Error ? err.message : String(err)}`);
  }

  const { none, three, held, heldOne, down } = runs;
  if (none.length && three.length) {
    const acked = (list) => mean(list.map((run) => run.creates.load.rps));
    const applied = (list) => mean(list.map((run) => run.creates.appliedPerSecond));
    const cpu = (list) => {
      const us = list.map((run) => run.cpuUsPerCreate).filter((value) => typeof value === "number");
      return us.length ? mean(us) : Number.NaN;
    };
    const after = mean(three.map((run) => run.deliveries?.cpuUsPerCreateAfter ?? Number.NaN));
    const stolenMean = (list) => {
      const shares = list.map((run) => run.stolen).filter((value) => value !== null);
      return shares.length ? mean(shares) : null;
    };
    const share = acked(three) / acked(none);
    // Round k's run with 3 receivers and its run without, made one after the other.
    const pairShares = three.map((run, k) =>
      none[k] ? percentText(run.creates.load.rps / none[k].creates.load.rps) : "n/a",
    );
    lines.push(
      `creates with 3 receivers: ${n0(acked(three))}/s acknowledged against ${n0(acked(none))}/s with none, ` +
        `${(share * 100).toFixed(1)} % (target ≥ ${TARGET_SHARE * 100} %, under 10 % fewer: ` +
        `${share >= TARGET_SHARE ? "met" : "NOT met"}); applied ${n0(applied(three))} vs ${n0(applied(none))}/s; ` +
        `server CPU per create ${n0(cpu(three))} vs ${n0(cpu(none))} µs, plus ${n0(after)} µs delivering after the load ` +
        `(means of ${three.length} and ${none.length} runs, alternating; each round's pair, run next to each other: ` +
        `${pairShares.join(", ")}); ` +
        `CPU time the host took for other guests ` +
        `${percentText(stolenMean(three))} and ${percentText(stolenMean(none))}`,
    );
    // One create per transaction, and 32 (the create worker commits a batch of up to 64 under load).
    const single = await outboxRowCost(1);
    const floor = await outboxRowCost(32);
    const base = cpu(none);
    lines.push(
      `outbox rows alone (SQLite through better-sqlite3, prepared, no fsync; \`bench/lib/outbox-rows.mjs\`), per create: ` +
        `event row ${floor[0].toFixed(0)} µs (what a create's transaction writes, with one fan-out row per ` +
        `transaction), with 1 delivery row ${floor[1].toFixed(0)} µs, with 3 ${floor[3].toFixed(0)} µs (the delivery rows ` +
        `come from the fan-out, after the commit) in transactions of 32 creates (${single[0].toFixed(0)}, ` +
        `${single[1].toFixed(0)} and ${single[3].toFixed(0)} µs with one create per transaction); on ${n0(base)} µs per ` +
        `create without receivers the event row caps 3 receivers at ${((base / (base + floor[0])) * 100).toFixed(1)} % ` +
        `of the create rate before any of the plugin's own code runs`,
    );
    if (held.length) {
      const heldShare = acked(held) / acked(none);
      lines.push(
        `creates with 3 receivers whose deliveries wait until the load ends (the outbox's own cost, the ceiling ` +
          `without concurrent deliveries): ${n0(acked(held))}/s, ${(heldShare * 100).toFixed(1)} % of none; ` +
          `server CPU per create ${n0(cpu(held))} µs (means of ${held.length} runs)`,
      );
    }
    if (down.length) {
      const downShare = acked(down) / acked(none);
      lines.push(
        `creates with 1 receiver that is down (every attempt refused, later events waiting behind the first's ` +
          `retry): ${n0(acked(down))}/s, ${(downShare * 100).toFixed(1)} % of none; server CPU per create ` +
          `${n0(cpu(down))} µs; dead letters at the end ${down.map((run) => run.deadLetters).join(" and ")} ` +
          `(means of ${down.length} runs)`,
      );
    }
    if (held.length && heldOne.length) {
      // A create's transaction writes the same rows whatever the number of receivers (the event and
      // the fan-out); what 1 and 3 receivers add is the fan-out's share of the load, and noise.
      lines.push(
        `in the live server (held runs, server CPU per create): none ${n0(base)} µs, 1 receiver ${n0(cpu(heldOne))} µs, ` +
          `3 receivers ${n0(cpu(held))} µs: the outbox costs a create ${n0(cpu(heldOne) - base)} and ` +
          `${n0(cpu(held) - base)} µs (means of ${heldOne.length} and ${held.length} runs)`,
      );
    }
  }
  return { rows, lines, failures, data: { events: EVENTS, rates, runs } };
}
