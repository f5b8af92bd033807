import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { AnyVellumPlugin, VellumConfig } from "@vellum/core";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { articles } from "@vellum/plugin-articles";
import { type CacheOptions, cache } from "@vellum/plugin-cache";
import { expect } from "vitest";
import { metric } from "./support.js";

export { ARTICLES, createArticle, metric, waitFor } from "./support.js";

// Helpers of cache-http.test.ts: a real instance (SQLite file, queue worker) with the articles and cache plugins,
// the same requests over `vellum.fetch` and over a real HTTP server (the Node shortcut path), the SQL each request
// runs, and the cache's own counters.

export const PURGE = "/api/v1/cache/purge";
export const CACHE_CONTROL = "public, max-age=0, s-maxage=60, stale-while-revalidate=30";

/**
 * SQL that background work runs on its own timers (the queue workers' polls, the health plugin's WAL upkeep),
 * never on behalf of a request: left out when counting what a request cost.
 */
const BACKGROUND = /_vellum_jobs|total_changes\(\)/;

export interface CacheHarness {
  t: TestVellum;
  /** The SQL the instance ran while `work` ran, background polls left out. */
  queriesDuring(work: () => Promise<unknown>): Promise<string[]>;
  close(): Promise<void>;
}

export async function bootCache(
  options: { cache?: Partial<CacheOptions>; plugins?: AnyVellumPlugin[]; config?: Partial<VellumConfig> } = {},
): Promise<CacheHarness> {
  let recording: string[] | undefined;
  const t = await createTestVellum({
    plugins: [articles({ retryBaseMs: 5 }), cache(options.cache), ...(options.plugins ?? [])],
    config: {
      ...options.config,
      database: { onQuery: ({ sql }) => (BACKGROUND.test(sql) ? undefined : recording?.push(sql)) },
    },
  });
  return {
    t,
    async queriesDuring(work) {
      const queries: string[] = [];
      recording = queries;
      try {
        await work();
      } finally {
        recording = undefined;
      }
      return queries;
    },
    close: () => t.close(),
  };
}

// -------------------------------------------------------------------------------------------------------------
// Clients: the same request through `vellum.fetch` or a real socket

export interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

export interface RequestOptions {
  method?: "GET" | "HEAD";
  headers?: Record<string, string>;
}

export interface Client {
  readonly name: string;
  get(path: string, options?: RequestOptions): Promise<Answer>;
}

export function fetchClient(t: TestVellum): Client {
  return {
    name: "vellum.fetch",
    async get(path, options = {}) {
      const res = await t.fetch(path, { method: options.method ?? "GET", headers: options.headers ?? {} });
      return { status: res.status, headers: res.headers, body: await res.text() };
    },
  };
}

/** A real HTTP server on 127.0.0.1 with `vellum.handler` (shortcut first, then srvx), and a raw `node:http` client. */
export async function httpClient(t: TestVellum): Promise<Client & { close(): Promise<void> }> {
  const server: Server = createServer(t.vellum.handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    name: "real HTTP",
    get(path, options = {}) {
      return new Promise<Answer>((resolve, reject) => {
        const req = httpRequest(
          { host: "127.0.0.1", port, path, method: options.method ?? "GET", headers: options.headers ?? {} },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("error", reject);
            res.on("end", () => {
              const headers = new Headers();
              for (let i = 0; i < res.rawHeaders.length; i += 2) {
                headers.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
              }
              resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString("utf8") });
            });
          },
        );
        req.on("error", reject);
        req.end();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// -------------------------------------------------------------------------------------------------------------
// The cache's counters and gauges, read from the instance's registry (what `/metrics` exposes)

export interface CacheCounters {
  hits: number;
  misses: number;
}

export async function counters(t: TestVellum): Promise<CacheCounters> {
  return {
    hits: await metric(t, "service_cache_hits_total"),
    misses: await metric(t, "service_cache_misses_total"),
  };
}

/** What one request did to the cache: `hit`, `miss` (kept or not) or `none` (not a cacheable read). */
export async function outcome(t: TestVellum, work: () => Promise<unknown>): Promise<"hit" | "miss" | "none"> {
  const before = await counters(t);
  await work();
  const after = await counters(t);
  const hits = after.hits - before.hits;
  const misses = after.misses - before.misses;
  expect(hits + misses).toBeLessThanOrEqual(1);
  return hits === 1 ? "hit" : misses === 1 ? "miss" : "none";
}

/** The caching headers of an answer, for comparing two answers of the same resource. */
export function cachingHeaders(answer: Answer) {
  return {
    etag: answer.headers.get("etag"),
    cacheControl: answer.headers.get("cache-control"),
    cacheTag: answer.headers.get("cache-tag"),
    surrogateKey: answer.headers.get("surrogate-key"),
  };
}

/** Adds a query parameter the handlers ignore: a distinct cache key for the same response. */
export function variant(path: string, name: string): string {
  return `${path}${path.includes("?") ? "&" : "?"}_v=${encodeURIComponent(name)}`;
}
