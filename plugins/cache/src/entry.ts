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

/**
 * A strong validator: 128 bits of the body's SHA-256 (of its UTF-8 bytes when it is text), so equal
 * bytes get equal ETags in every process.
 */
export function strongEtag(body: string | Uint8Array): string {
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
 * Headers of the handler's reply that describe the content, kept in the entry. The kernel adds its
 * per-request headers (request id, security headers, CORS, rate-limit counters) after `http:reply`;
 * should a handler set one of them, or what the transport decides (length, date), it is left out.
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
export interface CachingHeaders {
  etag: string;
  "cache-control": string;
  "cache-tag": string;
  "surrogate-key": string;
}

/** The caching headers of a response with `body` that shows `tags`. */
export function cachingHeaders(
  body: string | Uint8Array,
  tags: readonly string[],
  cacheControl: string,
): CachingHeaders {
  return {
    etag: strongEtag(body),
    "cache-control": cacheControl,
    "cache-tag": tags.join(","),
    "surrogate-key": tags.join(" "),
  };
}

/** Builds the entry of a 200 response of a cacheable route. */
export function buildEntry(options: {
  key: string;
  route: string;
  body: Uint8Array;
  /** The handler's own response headers. */
  headers: Readonly<Record<string, string>>;
  tags: readonly string[];
  caching: CachingHeaders;
}): CacheEntry {
  const { key, route, body, tags, caching } = options;
  const validators = Object.entries(caching).flat();
  const content: string[] = [];
  for (const [name, value] of Object.entries(options.headers)) {
    const lower = name.toLowerCase();
    if (isKept(lower)) content.push(lower, value);
  }
  const headers = [...content, ...validators];
  const headerBytes = headers.reduce((sum, part) => sum + part.length, 0);
  return {
    etag: caching.etag,
    tags,
    bytes: key.length + body.byteLength + headerBytes * 2,
    ok: { status: 200, headers, body, route },
    notModified: { status: 304, headers: validators, route },
  };
}
