import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { buildEntry, cachingHeaders, matchesIfNoneMatch, strongEtag } from "../src/index.js";

const bytes = (text: string) => new TextEncoder().encode(text);

// The validator is a pure function of the body: equal bytes get equal ETags in every process (so a fleet of
// instances, or a restart, never invalidates a client's copy for nothing), and any change of the bytes changes it.
describe("strongEtag", () => {
  it("is the quoted, base64url first 128 bits of the body's SHA-256", () => {
    const body = bytes('{"slug":"hello"}');
    const expected = createHash("sha256").update(body).digest("base64url").slice(0, 22);
    expect(strongEtag(body)).toBe(`"${expected}"`);
    expect(strongEtag(body)).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
  });

  it("is the same for text and its UTF-8 bytes", () => {
    const text = '{"title":"Zoë über café ✓"}';
    expect(strongEtag(text)).toBe(strongEtag(bytes(text)));
  });

  it("is stable: the same bytes in other buffers give the same ETag", () => {
    const text = '{"articles":[],"next_cursor":null}';
    const first = strongEtag(bytes(text));
    expect(strongEtag(bytes(text))).toBe(first);
    expect(strongEtag(new Uint8Array(Buffer.from(text)))).toBe(first);
    expect(strongEtag(bytes(text).slice())).toBe(first);
  });

  it("changes with any byte of the body, and is strong (no W/)", () => {
    const etags = new Set(["a", "b", "ab", "ba", "", " "].map((text) => strongEtag(bytes(text))));
    expect(etags.size).toBe(6);
    for (const etag of etags) expect(etag.startsWith("W/")).toBe(false);
  });
});

// RFC 9110 §13.1.2: If-None-Match uses the weak comparison, so `W/"x"` matches `"x"`; `*` matches any current
// representation; a list matches when any member does. Anything else, including near misses, is a 200.
describe("matchesIfNoneMatch", () => {
  const etag = '"abc123"';

  it.each<[string | null | undefined, boolean]>([
    [undefined, false],
    [null, false],
    ["", false],
    ['"abc123"', true],
    ["*", true],
    [" * ", true],
    ['W/"abc123"', true],
    ['"other", "abc123"', true],
    ['"other",W/"abc123"', true],
    ['  "abc123"  ', true],
    ['"other"', false],
    ["abc123", false],
    ['"abc12"', false],
    ['"abc1234"', false],
    ['"ABC123"', false],
    ['W/"other", "nope"', false],
    ['"abc123', false],
  ])("If-None-Match %j → %s", (header, expected) => {
    expect(matchesIfNoneMatch(header, etag)).toBe(expected);
  });

  it("compares weakly when the stored validator is weak", () => {
    expect(matchesIfNoneMatch('"abc123"', 'W/"abc123"')).toBe(true);
    expect(matchesIfNoneMatch('W/"abc123"', 'W/"abc123"')).toBe(true);
    expect(matchesIfNoneMatch('"zzz"', 'W/"abc123"')).toBe(false);
  });
});

// An entry keeps what describes the content and leaves out what the kernel adds per request, so a hit never
// replays another request's id, rate-limit counters or CORS answer; the 304 carries the validators only.
describe("buildEntry", () => {
  const body = bytes('{"id":"1","slug":"hello"}');
  const headers = {
    "content-type": "application/json; charset=utf-8",
    "X-Request-Id": "req-1",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "content-length": "999",
    date: "Mon, 01 Jan 2024 00:00:00 GMT",
    vary: "Origin",
    "access-control-allow-origin": "https://a.example",
    "access-control-expose-headers": "etag",
    "ratelimit-remaining": "3",
    ETag: '"from-the-handler"',
    "cache-control": "no-cache",
    "cache-tag": "handler-tag",
    "surrogate-key": "handler-key",
    Deprecation: "true",
  };
  const tags = ["article:hello", "tag:a%20b"];
  const entry = buildEntry({
    key: "/api/v1/articles/hello",
    route: "/api/v1/articles/:slug",
    body,
    headers,
    tags,
    caching: cachingHeaders(body, tags, "public, max-age=0, s-maxage=60"),
  });
  const asMap = (pairs: readonly string[]) => {
    const map = new Map<string, string>();
    for (let i = 0; i < pairs.length; i += 2) map.set(pairs[i] as string, pairs[i + 1] as string);
    return map;
  };

  it("keeps content headers and sets its own validators and caching headers", () => {
    const ok = asMap(entry.ok.headers);
    expect(Object.fromEntries(ok)).toEqual({
      "content-type": "application/json; charset=utf-8",
      deprecation: "true",
      etag: strongEtag(body),
      "cache-control": "public, max-age=0, s-maxage=60",
      "cache-tag": "article:hello,tag:a%20b",
      "surrogate-key": "article:hello tag:a%20b",
    });
    expect(entry.ok.headers.length).toBe(ok.size * 2);
    expect(entry.ok.status).toBe(200);
    expect(entry.ok.body).toEqual(body);
    expect(entry.ok.route).toBe("/api/v1/articles/:slug");
    expect(entry.etag).toBe(strongEtag(body));
    expect(entry.tags).toEqual(["article:hello", "tag:a%20b"]);
  });

  it("prepares a bodiless 304 with the same validators", () => {
    expect(entry.notModified.status).toBe(304);
    expect(entry.notModified.body).toBeUndefined();
    expect(Object.fromEntries(asMap(entry.notModified.headers))).toEqual({
      etag: strongEtag(body),
      "cache-control": "public, max-age=0, s-maxage=60",
      "cache-tag": "article:hello,tag:a%20b",
      "surrogate-key": "article:hello tag:a%20b",
    });
  });

  it("costs at least its key, body and headers", () => {
    const headerChars = entry.ok.headers.reduce((sum, part) => sum + part.length, 0);
    expect(entry.bytes).toBeGreaterThanOrEqual("/api/v1/articles/hello".length + body.byteLength + headerChars);
  });
});
