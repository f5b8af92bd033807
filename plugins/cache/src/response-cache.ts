import {
  type H3Event,
  matchedRoute,
  type PreparedResponse,
  readResponse,
  requestTarget,
  responseFrom,
} from "@vellum/core";
import type { ShortcutRequest } from "@vellum/core";
import { buildEntry, CACHING_HEADERS, type CacheEntry, matchesIfNoneMatch } from "./entry.js";
import type { CacheMetrics, MissReason, PurgeReason } from "./metrics.js";
import type { CacheStore } from "./store.js";

const EPOCH = "cacheEpoch";

/** Whether `[name, value, …]` holds a header called `name`. */
function hasHeader(pairs: readonly string[], name: string): boolean {
  for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === name) return true;
  return false;
}

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

  /** `http:response`: the validators and caching headers, a 304 when the client has it, and the miss kept. */
  async afterRead(payload: { event: H3Event; response: Response }): Promise<void> {
    const { event, response } = payload;
    const route = matchedRoute(event);
    const tagsOf = route?.meta?.cacheTags;
    const method = event.req.method;
    if (!route || !tagsOf || (method !== "GET" && method !== "HEAD") || response.status !== 200) return;
    const parts = await readResponse(response);
    if (hasHeader(parts.headers, "set-cookie")) {
      payload.response = responseFrom(parts);
      return;
    }
    const key = requestTarget(event);
    const entry = buildEntry({
      key,
      route: route.route,
      body: parts.body,
      headers: parts.headers,
      tags: tagsOf(event),
      cacheControl: this.#cacheControl,
    });
    if (method === "GET") this.#metrics.miss(this.#keep(key, entry, event.context[EPOCH]));
    payload.response = this.#respond(parts.headers, entry, event.req.headers.get("if-none-match"));
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

  #keep(key: string, entry: CacheEntry, epoch: unknown): MissReason {
    if (!this.#store) return "off";
    if (this.#writtenElsewhere() || epoch !== this.#epoch) return "raced";
    return this.#store.set(key, entry) ? "absent" : "too_large";
  }

  /** The response as sent: the handler's headers (the kernel's among them) with the entry's. */
  #respond(original: readonly string[], entry: CacheEntry, ifNoneMatch: string | null): Response {
    const notModified = matchesIfNoneMatch(ifNoneMatch, entry.etag);
    const prepared = notModified ? entry.notModified : entry.ok;
    const headers: string[] = [];
    for (let i = 0; i < original.length; i += 2) {
      const name = original[i] as string;
      if (CACHING_HEADERS.has(name) || name === "content-length" || (notModified && name === "content-type")) continue;
      headers.push(name, original[i + 1] as string);
    }
    headers.push(...entry.notModified.headers);
    if (!notModified) headers.push("content-length", String(entry.ok.body?.byteLength ?? 0));
    return responseFrom({ status: prepared.status, headers, body: prepared.body ?? new Uint8Array(0) });
  }
}
