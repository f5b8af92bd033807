import { hash } from "node:crypto";
import type { PreparedResponse } from "@vellum/core";

/** One cached response: the 200 and its 304, each prepared once. */
export interface CacheEntry {
  readonly etag: string;
  readonly tags: readonly string[];
  /** What the entry costs the cache: body, headers and key. */
  readonly bytes: number;
  readonly ok: PreparedResponse;
  readonly notModified: PreparedResponse;
}

/** A strong validator: 128 bits of the body's SHA-256, so equal bytes get equal ETags in every process. */
export function strongEtag(body: Uint8Array): string {
  return `"${hash("sha256", body, "base64url").slice(0, 22)}"`;
}

/** True when `If-None-Match` names `etag` (weak comparison, as RFC 9110 §13.1.2 asks) or is `*`. */
export function matchesIfNoneMatch(header: string | null | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  const opaque = etag.startsWith("W/") ? etag.slice(2) : etag;
  for (const raw of header.split(",")) {
    const candidate = raw.trim();
    if ((candidate.startsWith("W/") ? candidate.slice(2) : candidate) === opaque) return true;
  }
  return false;
}

/** Names of the validators and caching headers, which the entry sets. */
export const CACHING_HEADERS = new Set(["etag", "cache-control", "cache-tag", "surrogate-key"]);

/**
 * Headers of the handler's response that describe the content, kept in the entry. What the kernel
 * adds per request (request id, security headers, CORS, rate-limit counters) or the transport
 * decides (length, date) is left out; a response that sets a cookie is never cached.
 */
const NOT_KEPT = new Set([
  "x-request-id",
  "x-content-type-options",
  "referrer-policy",
  "x-frame-options",
  "content-length",
  "date",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "vary",
  ...CACHING_HEADERS,
]);

const isKept = (name: string) =>
  !NOT_KEPT.has(name) && !name.startsWith("access-control-") && !name.startsWith("ratelimit-");

/** The validators and caching headers every cacheable read carries, on 200 and 304 alike. */
export function cachingHeaders(etag: string, tags: readonly string[], cacheControl: string): string[] {
  return ["etag", etag, "cache-control", cacheControl, "cache-tag", tags.join(","), "surrogate-key", tags.join(" ")];
}

/** Builds the entry of a 200 response of a cacheable route. */
export function buildEntry(options: {
  key: string;
  route: string;
  body: Uint8Array;
  /** The handler's response headers, `[name, value, …]`. */
  headers: readonly string[];
  tags: readonly string[];
  cacheControl: string;
}): CacheEntry {
  const { key, route, body, tags } = options;
  const etag = strongEtag(body);
  const validators = cachingHeaders(etag, tags, options.cacheControl);
  const content: string[] = [];
  const source = options.headers;
  for (let i = 0; i < source.length; i += 2) {
    const name = source[i] as string;
    if (isKept(name)) content.push(name, source[i + 1] as string);
  }
  const headers = [...content, ...validators];
  const headerBytes = headers.reduce((sum, part) => sum + part.length, 0);
  return {
    etag,
    tags,
    bytes: key.length + body.byteLength + headerBytes * 2,
    ok: { status: 200, headers, body, route },
    notModified: { status: 304, headers: validators, route },
  };
}
