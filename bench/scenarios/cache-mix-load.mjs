import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { loadSummary } from "../lib/load.mjs";
import { percentile } from "../search/stats.mjs";

/**
 * Child process of the cache scenario: a read/write mix on one Vellum server with autocannon.
 * Every 20th request sent (5 %) is `PUT /api/v1/articles/:slug` with a new title ("Bench write <n>",
 * n increasing from --version-from) of one of the plan's articles, round robin, skipping an article
 * whose previous write is still unanswered (so the writes of one article are ordered). The others
 * are GETs, drawn from a fixed pseudo-random sequence: 70 % one of the plan's article pages, 10 %
 * the list page, 20 % one of the plan's tag pages.
 *
 * Stale-read check: a GET sent after the load received the 200 of a write must show that write or a
 * later one. Every 200 of a read is checked for every planned article it shows (its page, or its
 * summary on a list or tag page): the version in its title against the last write of that article
 * acknowledged before the GET was sent. Prints one JSON line.
 * Usage: node cache-mix-load.mjs --url <base> --api-key <key> --plan <json> --connections <n>
 *   --duration <s> --version-from <n>
 *   plan: { "slugs": ["article-1", …], "tags": ["topic-0", …], "listPath": "/api/v1/articles?limit=20" }
 */
const { values } = parseArgs({
  options: {
    url: { type: "string" },
    "api-key": { type: "string" },
    plan: { type: "string" },
    connections: { type: "string", default: "50" },
    duration: { type: "string", default: "10" },
    "version-from": { type: "string", default: "1" },
  },
});
const base = values.url;
/** @type {{ slugs: string[], tags: string[], listPath: string }} */
const plan = JSON.parse(values.plan ?? "{}");
const WRITE_EVERY = 20;
const ARTICLE_SHARE = 0.7;
const LIST_SHARE = 0.1;

const { token } = await (await fetch(`${base}/api/v1/csrf`)).json();
if (!token) throw new Error("mix load: GET /api/v1/csrf gave no token");
const writeHeaders = {
  authorization: `Bearer ${values["api-key"]}`,
  cookie: `svc_csrf=${token}`,
  "x-csrf-token": token,
  "content-type": "application/json",
};

/** mulberry32: the same read sequence on every run. */
let state = 0x5eed;
function random() {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const articlePath = (slug) => `/api/v1/articles/${slug}`;
const tagPath = (tag) => `/api/v1/articles?tag=${encodeURIComponent(tag)}&limit=20`;

/** Per planned article: the writes the load received a 200 for, in order: { seq, version }. */
const acked = new Map(plan.slugs.map((slug) => [slug, []]));
let ackSeq = 0;
const inFlight = new Set();
let sent = 0;
let nextSlug = 0;
let nextVersion = Number(values["version-from"]);

/** The newest version of `slug` acknowledged before ack number `seq` (0: never written). */
function ackedBefore(slug, seq) {
  const writes = acked.get(slug) ?? [];
  for (let i = writes.length - 1; i >= 0; i--) if (writes[i].seq < seq) return writes[i].version;
  return 0;
}

/** A free planned article to write, or undefined when every one has a write in flight. */
function slugToWrite() {
  for (let tries = 0; tries < plan.slugs.length; tries++) {
    const slug = plan.slugs[nextSlug++ % plan.slugs.length];
    if (!inFlight.has(slug)) return slug;
  }
  return undefined;
}

const TITLE_AND_SLUG = /"title":"((?:[^"\\]|\\.)*)","slug":"([^"]+)"/g;
const VERSION = /^Bench write (\d+)$/;
const stale = { checked: 0, stale: 0, examples: [] };

/** Checks every planned article a read's body shows against the writes acknowledged before it was sent. */
function checkRead(body, seq, path) {
  for (const match of body.matchAll(TITLE_AND_SLUG)) {
    const slug = match[2];
    if (!acked.has(slug)) continue;
    const shown = Number(VERSION.exec(match[1])?.[1] ?? 0);
    const expected = ackedBefore(slug, seq);
    stale.checked++;
    if (shown < expected) {
      stale.stale++;
      if (stale.examples.length < 5) stale.examples.push({ path, slug, shown, expected });
    }
  }
}

const latency = { read: [], write: [] };
const statuses = { read: {}, write: {} };

const instance = autocannon({
  url: base,
  connections: Number(values.connections),
  duration: Number(values.duration),
  requests: [
    {
      // One slot, built anew for every request; `context` is the connection's own until its response.
      setupRequest(request, context) {
        const n = sent++;
        const slug = n % WRITE_EVERY === WRITE_EVERY - 1 ? slugToWrite() : undefined;
        if (slug) {
          const version = nextVersion++;
          inFlight.add(slug);
          Object.assign(context, { kind: "write", slug, version });
          return {
            ...request,
            method: "PUT",
            path: articlePath(slug),
            headers: { ...writeHeaders },
            body: JSON.stringify({ title: `Bench write ${version}` }),
          };
        }
        const r = random();
        const path =
          r < ARTICLE_SHARE
            ? articlePath(plan.slugs[Math.floor(random() * plan.slugs.length)])
            : r < ARTICLE_SHARE + LIST_SHARE
              ? plan.listPath
              : tagPath(plan.tags[Math.floor(random() * plan.tags.length)]);
        Object.assign(context, { kind: "read", seq: ackSeq, path });
        return { ...request, method: "GET", path };
      },
      onResponse(status, body, context) {
        if (context.kind === "write") {
          inFlight.delete(context.slug);
          if (status === 200) acked.get(context.slug)?.push({ seq: ackSeq++, version: context.version });
        } else if (status === 200) {
          checkRead(body, context.seq, context.path);
        }
      },
    },
  ],
});
instance.on("response", (client, status, _bytes, responseTime) => {
  const kind = client.requestIterator.context.kind === "write" ? "write" : "read";
  latency[kind].push(responseTime);
  statuses[kind][status] = (statuses[kind][status] ?? 0) + 1;
});
const result = await instance;

const summary = (kind) => ({
  n: latency[kind].length,
  p50: percentile(latency[kind], 50),
  p99: percentile(latency[kind], 99),
  statuses: statuses[kind],
});
process.stdout.write(
  `${JSON.stringify({
    ...loadSummary(result),
    durationSeconds: result.duration,
    reads: summary("read"),
    writes: summary("write"),
    stale,
  })}\n`,
);
