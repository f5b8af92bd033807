import { type H3Event, matchedRoute, type PreparedResponse, Reply, requestTarget } from "@vellum/core";
import type { ShortcutRequest } from "@vellum/core";
import {
  buildEntry,
  CACHING_HEADERS,
  type CacheEntry,
  type CachingHeaders,
  cachingHeaders,
  matchesIfNoneMatch,
} from "./entry.js";
import type { CacheMetrics, MissReason, PurgeReason } from "./metrics.js";
import type { CacheStore } from "./store.js";

const EPOCH = "cacheEpoch";

/**
 * The handler's own headers without those the cache sets (and, for a 304, without its content
 * type), then the cache's. Copied by assignment: in Node 20's V8, `{ ...a, ...b }` gives every
 * result a hidden class of its own, slow to build and slow for the kernel to read (docs/benchmarks.md).
 */
function replyHeaders(reply: Reply, notModified: boolean, caching: CachingHeaders): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.headers)) {
    const lower = name.toLowerCase();
    if (CACHING_HEADERS.has(lower) || (notModified && lower === "content-type")) continue;
    headers[name] = value;
  }
  return Object.assign(headers, caching);
}

const setsCookie = (reply: Reply) => Object.keys(reply.headers).some((name) => name.toLowerCase() === "set-cookie");

/**
 * The response cache: answers hits before routing (the kernel's shortcut), gives every response of
 * a cacheable route its validators and caching headers, and keeps misses.
 *
 * No read serves a state older than the last acknowledged write: every purge moves the epoch on,
 * a cacheable read notes the epoch before its handler touches the database, and its response is
 * kept only if no purge ran in between. A read that raced a write is still answered, just not kept.
 */
export class ResponseCache {
  readonly #store: CacheStore | undefined;
  readonly #metrics: CacheMetrics;
  readonly #cacheControl: string;
  readonly #dataVersion: () => number;
  #version: number | undefined;
  #epoch = 0;

  constructor(options: {
    store: CacheStore | undefined;
    metrics: CacheMetrics;
    cacheControl: string;
    /** `DatabaseOps.dataVersion`: moves when another process sharing the database commits. */
    dataVersion: () => number;
  }) {
    this.#store = options.store;
    this.#metrics = options.metrics;
    this.#cacheControl = options.cacheControl;
    this.#dataVersion = options.dataVersion;
  }

  /** The kernel's shortcut: a held response as its prepared 200, or its 304 when the client has it. */
  readonly lookup = (request: ShortcutRequest): PreparedResponse | undefined => {
    const entry = this.#store?.get(request.url);
    if (!entry || this.#writtenElsewhere()) return undefined;
    if (matchesIfNoneMatch(request.header("if-none-match"), entry.etag)) {
      this.#metrics.hit("not_modified");
      return entry.notModified;
    }
    this.#metrics.hit("fresh");
    return entry.ok;
  };

  /** `http:request`: notes the epoch before a cacheable read runs its handler. */
  beforeRead(event: H3Event): void {
    if (matchedRoute(event)?.meta?.cacheTags) event.context[EPOCH] = this.#epoch;
  }

  /** `http:reply`: the validators and caching headers, a 304 when the client has it, and the miss kept. */
  afterReply(payload: { event: H3Event; reply: Reply }): void {
    const { event, reply } = payload;
    const route = matchedRoute(event);
    const tagsOf = route?.meta?.cacheTags;
    const method = event.req.method;
    const body = reply.body;
    if (!route || !tagsOf || (method !== "GET" && method !== "HEAD")) return;
    // A route that may hand out the CSRF cookie is never cacheable: the kernel adds the cookie after this.
    if (reply.status !== 200 || body === null || route.meta?.csrfCookie || setsCookie(reply)) return;
    const tags = tagsOf(event);
    const caching = cachingHeaders(body, tags, this.#cacheControl);
    if (method === "GET") {
      const entry = (key: string) =>
        buildEntry({ key, route: route.route, body: Buffer.from(body), headers: reply.headers, tags, caching });
      this.#metrics.miss(this.#keep(event, entry));
    }
    const notModified = matchesIfNoneMatch(event.req.headers.get("if-none-match"), caching.etag);
    const headers = replyHeaders(reply, notModified, caching);
    payload.reply = notModified ? new Reply(null, 304, headers) : new Reply(body, 200, headers);
  }

  /** Removes every response showing one of `tags`; any read in flight will not be kept. */
  purge(tags: readonly string[], reason: PurgeReason, counted: boolean): number {
    this.#epoch++;
    const removed = this.#store?.purge(tags) ?? 0;
    this.#metrics.purged(reason, removed, counted);
    return removed;
  }

  /**
   * Whether another process committed to the database since the last look; if so, everything held
   * may be stale and is dropped: a process purges by tag only what its own writes change.
   */
  #writtenElsewhere(): boolean {
    const version = this.#dataVersion();
    if (version === this.#version) return false;
    const first = this.#version === undefined;
    this.#version = version;
    if (first) return false;
    this.#epoch++;
    const removed = this.#store?.entries ?? 0;
    this.#store?.clear();
    this.#metrics.purged("elsewhere", removed, true);
    return true;
  }

  /** Keeps the miss's entry, built only when it will be kept. */
  #keep(event: H3Event, entry: (key: string) => CacheEntry): MissReason {
    if (!this.#store) return "off";
    if (this.#writtenElsewhere() || event.context[EPOCH] !== this.#epoch) return "raced";
    const key = requestTarget(event);
    return this.#store.set(key, entry(key)) ? "absent" : "too_large";
  }
}
