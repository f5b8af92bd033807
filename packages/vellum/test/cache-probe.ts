import { isDeepStrictEqual } from "node:util";
import { type AnyVellumPlugin, type ArticleRecord, collectForCommit, definePlugin } from "@vellum/core";
import { createTestVellum, type TestRequestInit, type TestVellum } from "@vellum/core/testing";
import { articles } from "@vellum/plugin-articles";
import { cache } from "@vellum/plugin-cache";

// Helpers of cache-invalidation.test.ts and cache-consistency.test.ts: a real instance with the articles and cache
// plugins, the article writes, whether one GET was a cache hit (from the cache's own counters), and the database as
// the oracle of what every article read must answer.

export const ARTICLES = "/api/v1/articles";
export const PURGE = "/api/v1/cache/purge";

/**
 * A real instance (SQLite file, queue worker) with articles (fast retries) and the response cache. `jitter` adds
 * co-installed plugins that take random time (below); `slowAfterCommitMs` one whose `article:after*` hooks, run
 * before the cache's, each take that long (a webhook subscriber, say): the cache's second purge then comes that
 * long after the commit.
 */
export function bootCached(options: { jitter?: boolean; slowAfterCommitMs?: number } = {}): Promise<TestVellum> {
  const plugins: AnyVellumPlugin[] = [articles({ retryBaseMs: 5 })];
  if (options.jitter) plugins.push(jitterBefore());
  if (options.slowAfterCommitMs !== undefined) plugins.push(slowAfterCommit({ ms: options.slowAfterCommitMs }));
  plugins.push(cache());
  if (options.jitter) plugins.push(jitterAfter());
  return createTestVellum({ plugins });
}

const slowAfterCommit = definePlugin<{ ms: number }>({
  name: "slow-after-commit",
  optionalDependsOn: ["articles"],
  setup(ctx) {
    const wait = () => settle(ctx.options.ms);
    ctx.hooks.hook("article:afterCreate", wait, { optional: true });
    ctx.hooks.hook("article:afterUpdate", wait, { optional: true });
    ctx.hooks.hook("article:afterDelete", wait, { optional: true });
  },
});

/** Sometimes nothing, sometimes a turn of the event loop, sometimes a timer of up to `maxMs`. */
function jitter(maxMs = 2): Promise<void> | undefined {
  const roll = Math.random();
  if (roll < 0.3) return undefined;
  if (roll < 0.6) return new Promise((resolve) => setImmediate(resolve));
  return new Promise((resolve) => setTimeout(resolve, Math.round(((roll - 0.6) / 0.4) * maxMs)));
}

/**
 * Co-installed plugins that take their time, as real ones may (a rewriting or logging `http:reply` hook, a
 * search index subscribed to `article:commit`, a flush that waits, a webhook subscriber of `article:afterCreate`):
 * they widen the windows the cache's epoch rule and its two purges exist for. `jitterBefore` is set up before the
 * cache, so its hooks run before the cache's: its `http:reply` hook delays keeping a miss (a read that saw the
 * database before a write can end after both of the write's purges), its commit subscriber keeps the write's
 * transaction open across turns of the event loop, and its `article:after*` hooks delay the cache's second purge
 * past the commit (a queued create is `applied` on the job route from its commit on). `jitterAfter` is set up after
 * the cache: its flush runs after the cache's pre-commit purge, before the commit.
 */
const jitterBefore = definePlugin({
  name: "jitter-before",
  optionalDependsOn: ["articles"],
  setup(ctx) {
    ctx.hooks.hook("http:reply", ({ event }) => (event.req.method === "GET" ? jitter(5) : undefined));
    ctx.hooks.hook("article:commit", () => jitter(), { optional: true });
    ctx.hooks.hook("article:afterCreate", () => jitter(), { optional: true });
    ctx.hooks.hook("article:afterUpdate", () => jitter(), { optional: true });
    ctx.hooks.hook("article:afterDelete", () => jitter(), { optional: true });
  },
});

const jitterAfter = definePlugin({
  name: "jitter-after",
  optionalDependsOn: ["articles", "cache"],
  setup(ctx) {
    ctx.hooks.hook(
      "article:commit",
      ({ trx }) => collectForCommit(trx, "jitter:flush", null, async () => await jitter()),
      { optional: true },
    );
  },
});

export const pageUrl = (slug: string): string => `${ARTICLES}/${slug}`;
export const tagUrl = (tag: string, limit?: number): string =>
  `${ARTICLES}?tag=${encodeURIComponent(tag)}${limit === undefined ? "" : `&limit=${limit}`}`;

// ---------------------------------------------------------------------------------------------------------------
// Writes

export interface ArticleFields {
  title?: string;
  slug?: string;
  content?: string;
  tags?: string[];
}

export function articleBody(slug: string, fields: ArticleFields = {}): Required<ArticleFields> {
  return { title: `Title of ${slug}`, slug, content: `<p>Body of ${slug}</p>`, tags: [], ...fields };
}

export async function post(t: TestVellum, json: unknown): Promise<Response> {
  return t.fetch(ARTICLES, { method: "POST", json, headers: await t.writeHeaders() });
}

export async function put(t: TestVellum, slug: string, json: unknown): Promise<Response> {
  return t.fetch(pageUrl(slug), { method: "PUT", json, headers: await t.writeHeaders() });
}

export async function del(t: TestVellum, slug: string): Promise<Response> {
  return t.fetch(pageUrl(slug), { method: "DELETE", headers: await t.writeHeaders() });
}

let purgeClients = 0;

/**
 * `POST /api/v1/cache/purge {"slug"}`. The route allows 5 purges a minute per client address, so each call comes
 * from an address of its own (10.0.0.0/8).
 */
export async function purge(t: TestVellum, slug: string): Promise<Response> {
  const n = ++purgeClients;
  const clientAddress = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  return t.fetch(PURGE, { method: "POST", json: { slug }, headers: await t.writeHeaders(), clientAddress });
}

/** The status of a queued write, from `GET /api/v1/jobs/:id`. */
export async function jobStatus(t: TestVellum, id: string): Promise<string> {
  const res = await t.fetch(`/api/v1/jobs/${id}`);
  if (res.status !== 200) throw new Error(`GET /api/v1/jobs/${id} answered ${res.status}`);
  return ((await res.json()) as { status: string }).status;
}

/**
 * Polls the job route until job `id` leaves `queued` and returns that status; `whileQueued` runs between polls
 * (reads that may see the state before the create, and may put it in the cache).
 */
export async function waitForJob(
  t: TestVellum,
  id: string,
  whileQueued?: () => Promise<void>,
  timeoutMs = 10_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await jobStatus(t, id);
    if (status !== "queued") return status;
    if (Date.now() > deadline) throw new Error(`job ${id} still queued after ${timeoutMs} ms`);
    if (whileQueued) await whileQueued();
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** POSTs a create, expects the 202, waits until its job is applied; returns the job id. */
export async function createApplied(t: TestVellum, slug: string, fields: ArticleFields = {}): Promise<string> {
  const res = await post(t, articleBody(slug, fields));
  if (res.status !== 202) throw new Error(`POST ${slug} answered ${res.status}: ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  const status = await waitForJob(t, id);
  if (status !== "applied") throw new Error(`the create of ${slug} ended ${status}`);
  return id;
}

/** Lets what a write deferred past its commit (`article:after*`, the second purge) run. */
export const settle = (ms = 10): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------------------------
// Hits and misses

export interface CacheCounts {
  hits: number;
  misses: number;
  /** Misses not kept because a purge ran while they were read. */
  raced: number;
}

async function metricValues(t: TestVellum, name: string): Promise<Array<{ value: number; labels: object }>> {
  const metric = t.vellum.metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`metric ${name} is not registered`);
  return (await metric.get()).values as Array<{ value: number; labels: object }>;
}

/** The cache's own counters: `service_cache_hits_total` and `service_cache_misses_total` over all reasons. */
export async function cacheCounts(t: TestVellum): Promise<CacheCounts> {
  const hits = await metricValues(t, "service_cache_hits_total");
  const misses = await metricValues(t, "service_cache_misses_total");
  const sum = (values: Array<{ value: number }>) => values.reduce((total, v) => total + v.value, 0);
  const raced = misses.filter((v) => (v.labels as { reason?: string }).reason === "raced");
  return { hits: sum(hits), misses: sum(misses), raced: sum(raced) };
}

/** `hit`: answered from the cache; `miss`: a cacheable 200 the handler produced; `uncached`: neither (a 404). */
export type Outcome = "hit" | "miss" | "uncached";

export interface Probe {
  outcome: Outcome;
  status: number;
  /** The parsed JSON body (undefined for a 304). */
  body: unknown;
  etag: string | null;
}

/**
 * One GET through `t.fetch` (the in-process path, where hits are answered by the kernel's shortcut before routing),
 * classified by the cache's counters read around it. Only for sequential use: a concurrent request would count too.
 */
export async function probe(t: TestVellum, path: string, init?: TestRequestInit): Promise<Probe> {
  const before = await cacheCounts(t);
  const res = await t.fetch(path, init);
  const text = await res.text();
  const after = await cacheCounts(t);
  const hits = after.hits - before.hits;
  const misses = after.misses - before.misses;
  if (hits + misses > 1) throw new Error(`GET ${path} counted ${hits} hits and ${misses} misses`);
  const outcome: Outcome = hits === 1 ? "hit" : misses === 1 ? "miss" : "uncached";
  return {
    outcome,
    status: res.status,
    body: text === "" ? undefined : JSON.parse(text),
    etag: res.headers.get("etag"),
  };
}

/** Whether `GET path` is answered from the local cache. */
export async function isHit(t: TestVellum, path: string): Promise<boolean> {
  return (await probe(t, path)).outcome === "hit";
}

// ---------------------------------------------------------------------------------------------------------------
// The database as the oracle

/** Every article, oldest first, straight from the articles service (not through HTTP or the cache). */
export async function dbArticles(t: TestVellum): Promise<ArticleRecord[]> {
  const service = t.vellum.service("articles");
  if (!service) throw new Error("no articles service");
  const all: ArticleRecord[] = [];
  for await (const batch of service.iterate()) all.push(...batch);
  return all;
}

/**
 * What a read shows, normalized so that it can be compared with the database: the status, and for a 200 the
 * article (a page) or the summaries in order with the id the next cursor continues after (a list page; the
 * cursor's MAC is left out).
 */
export interface View {
  status: number;
  body?: unknown;
}

interface ListBody {
  articles: unknown[];
  next_cursor: string | null;
}

export function viewOf(url: string, status: number, body: unknown): View {
  if (status !== 200) return { status };
  if (!isListUrl(url)) return { status, body };
  const list = body as ListBody;
  const next = list.next_cursor === null ? null : (list.next_cursor.split(".")[0] ?? "");
  return { status, body: { articles: list.articles, next } };
}

const isListUrl = (url: string) => new URL(url, "http://x").pathname === ARTICLES;

/** An article as a list page shows it (everything but `content`). */
export function summaryOf(article: ArticleRecord): Omit<ArticleRecord, "content"> {
  const { content: _content, ...summary } = article;
  return summary;
}

/** What `GET url` must show given the articles in the database (oldest first). */
export function expectedView(url: string, all: readonly ArticleRecord[]): View {
  const parsed = new URL(url, "http://x");
  if (parsed.pathname !== ARTICLES) {
    const slug = decodeURIComponent(parsed.pathname.slice(ARTICLES.length + 1));
    const article = all.find((a) => a.slug === slug);
    return article ? { status: 200, body: article } : { status: 404 };
  }
  const tag = parsed.searchParams.get("tag")?.trim();
  const limit = Number(parsed.searchParams.get("limit") ?? 20);
  const before = parsed.searchParams.get("cursor")?.split(".")[0];
  const matching = [...all]
    .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .filter((a) => tag === undefined || a.tags.includes(tag))
    .filter((a) => before === undefined || a.id < before);
  const page = matching.slice(0, limit);
  const next = matching.length > limit ? (page.at(-1)?.id ?? null) : null;
  return { status: 200, body: { articles: page.map(summaryOf), next } };
}

export const sameView = (a: View, b: View): boolean => isDeepStrictEqual(a, b);
