import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { summary } from "../search/stats.mjs";

/**
 * Webhook receivers of the webhooks scenario, all in this one process (so their CPU is never the
 * server's): one `node:http` server per port of `--ports`, each taking deliveries on `POST /hook`
 * and answering 204 as soon as the body has been read. Nothing is verified; each receiver counts
 * its deliveries, notes the first and the last (ms, this process's clock) and how many arrived in
 * each second of that clock (`bySecond`, keyed by the whole second), events that arrive out
 * of commit order (an `X-Service-Delivery` id lower than one already seen: ids are monotonic ULIDs
 * made at commit) or twice, and the lag from the event's `created_at` (its commit) to its arrival.
 *
 * With `--hold`, deliveries are left unanswered until `POST /release`, so a backlog builds up in the
 * server's outbox and the release measures how fast it drains (a delivery counts when answered).
 * With `--fail-every <n>`, every n-th delivery to each receiver is answered 500 and not counted: the
 * server retries it (the soak's flaky receiver). `unique` counts distinct events, `types` them by event.
 * Every port also answers `GET /health/live` (200) and `GET /stats` (every receiver, JSON).
 * The process exits by itself after `--lifetime` seconds.
 * Usage: node webhook-receiver.mjs --ports <p1,p2,…> [--hold] [--fail-every <n>] [--lifetime <s>]
 */
const { values } = parseArgs({
  options: {
    ports: { type: "string" },
    hold: { type: "boolean", default: false },
    lifetime: { type: "string", default: "300" },
    "fail-every": { type: "string", default: "0" },
  },
});
const ports = (values.ports ?? "").split(",").map(Number);
const lifetime = Number(values.lifetime);
const failEvery = Number(values["fail-every"]);
if (
  ports.length === 0 ||
  !ports.every((port) => Number.isInteger(port) && port > 0) ||
  !(lifetime > 0) ||
  !(Number.isInteger(failEvery) && failEvery >= 0)
) {
  console.error("webhook-receiver: pass --ports <p1,p2,…> [--hold] [--fail-every <n>] [--lifetime <s>]");
  process.exit(2);
}
setTimeout(() => process.exit(0), lifetime * 1000);

const CREATED_AT = /"created_at":"([^"]+)"/;
let holding = values.hold;
/** @type {Array<() => void>} deliveries waiting for POST /release */
const held = [];

const receivers = ports.map((port) => ({
  port,
  count: 0,
  firstMs: Number.NaN,
  lastMs: Number.NaN,
  lastId: "",
  outOfOrder: 0,
  duplicates: 0,
  ids: new Set(),
  /** Delivery requests seen, answered or refused (for `--fail-every`). */
  requests: 0,
  /** @type {Record<string, number>} distinct events by `X-Service-Event` */
  types: {},
  /** @type {Record<number, number>} */
  bySecond: {},
  /** @type {number[]} */
  lagMs: [],
}));

/** @param {(typeof receivers)[number]} receiver */
function stats(receiver) {
  const { port, count, firstMs, lastMs, outOfOrder, duplicates, lagMs, bySecond, types } = receiver;
  const unique = receiver.ids.size;
  return { port, count, unique, types, firstMs, lastMs, outOfOrder, duplicates, lagMs: summary(lagMs), bySecond };
}

/** @param {(typeof receivers)[number]} receiver */
function onDelivery(receiver, req, res) {
  let head = "";
  req.on("data", (chunk) => {
    if (head.length < 200) head += chunk.toString("latin1", 0, 200);
  });
  req.on("end", () => {
    if (failEvery > 0 && ++receiver.requests % failEvery === 0) {
      res.writeHead(500);
      res.end();
      return;
    }
    const answer = () => {
      const now = performance.now();
      const id = String(req.headers["x-service-delivery"] ?? "");
      if (receiver.ids.has(id)) receiver.duplicates++;
      else {
        receiver.ids.add(id);
        const type = String(req.headers["x-service-event"] ?? "");
        receiver.types[type] = (receiver.types[type] ?? 0) + 1;
      }
      if (id < receiver.lastId) receiver.outOfOrder++;
      else receiver.lastId = id;
      const createdAt = Date.parse(CREATED_AT.exec(head)?.[1] ?? "");
      if (Number.isFinite(createdAt)) receiver.lagMs.push(Date.now() - createdAt);
      if (receiver.count++ === 0) receiver.firstMs = now;
      receiver.lastMs = now;
      const second = Math.floor(now / 1000);
      receiver.bySecond[second] = (receiver.bySecond[second] ?? 0) + 1;
      res.writeHead(204);
      res.end();
    };
    if (holding) held.push(answer);
    else answer();
  });
}

/** @param {import("node:http").ServerResponse} res @param {unknown} body */
function json(res, body) {
  const text = JSON.stringify(body);
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

for (const receiver of receivers) {
  createServer((req, res) => {
    if (req.method === "POST" && req.url === "/hook") return onDelivery(receiver, req, res);
    req.resume();
    if (req.method === "GET" && req.url === "/health/live") return json(res, { live: true });
    if (req.method === "GET" && req.url === "/stats") return json(res, receivers.map(stats));
    if (req.method === "POST" && req.url === "/release") {
      holding = false;
      const released = held.splice(0);
      for (const answer of released) answer();
      return json(res, { released: released.length });
    }
    res.writeHead(404);
    res.end();
  }).listen(receiver.port, "127.0.0.1");
}
