import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keepAliveAgent, type RawRequest, type RawResponse, send, type Server, startServer } from "./fuzz-support.js";

// Property-based fuzzing of the real `vellum serve` (contract §3 and §4): random methods, paths, query strings,
// headers, cookies and bodies. Every answer is below 500, carries a request id and the security headers, and every
// error is the envelope. Needs the built binary (`npm run build`; the root `npm test` builds first).
//
// FUZZ_RUNS raises the number of requests for a local soak (never below the default 10,000). A failure prints
// fast-check's seed and path; re-run with FUZZ_SEED=<seed> FUZZ_PATH=<path> to replay exactly that case.

const DEFAULT_RUNS = 10_000;
const RUNS = Math.max(DEFAULT_RUNS, Number(process.env.FUZZ_RUNS) || 0);
/** Requests in flight at once: each property run sends a batch of this many concurrently. */
const CONCURRENCY = 8;
/**
 * Node's HTTP parser answers a request head over 16 KiB itself (a bare 431, before Vellum sees it); the generator
 * stays below that. See the known-issue test at the end.
 */
const MAX_HEAD_BYTES = 14_000;

const API_KEY = randomBytes(24).toString("base64url");
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

let server: Server;
let agent: Agent;
let cwd: string;
/** A valid signed CSRF token (also the cookie value), fetched from the running service. */
let csrf = "";
/** Slugs and job ids that exist, so the generator also hits real resources. */
const slugs = ["fuzz-first", "fuzz-second", "fuzz-third"];
const jobIds: string[] = [];
/** Requests sent and statuses seen, for the report. */
let sent = 0;
const statuses = new Map<string, number>();

function header(res: RawResponse, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

async function call(req: RawRequest): Promise<RawResponse> {
  return send(server.url, agent, req);
}

async function json(res: RawResponse): Promise<Record<string, unknown>> {
  return JSON.parse(res.body.toString("utf8")) as Record<string, unknown>;
}

/** Creates an article through the README's flow (CSRF token, Bearer key, cookie + header); returns the job id. */
async function create(slug: string, extraHeaders: Record<string, string> = {}): Promise<string> {
  const token = (await json(await call({ method: "GET", target: "/api/v1/csrf", headers: extraHeaders }))).token;
  expect(typeof token).toBe("string");
  const res = await call({
    method: "POST",
    target: "/api/v1/articles",
    headers: {
      ...extraHeaders,
      authorization: `Bearer ${API_KEY}`,
      "x-csrf-token": String(token),
      cookie: `svc_csrf=${String(token)}`,
      "content-type": "application/json",
    },
    body: JSON.stringify({ title: `Fuzz ${slug}`, slug, content: "<p>fuzz target</p>", tags: ["fuzz"] }),
  });
  expect(res.status, res.body.toString("utf8")).toBe(202);
  const id = (await json(res)).id;
  expect(typeof id).toBe("string");
  return String(id);
}

async function waitApplied(id: string, extraHeaders: Record<string, string> = {}): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await call({ method: "GET", target: `/api/v1/jobs/${id}`, headers: extraHeaders });
    const status = res.status === 200 ? (await json(res)).status : undefined;
    if (status === "applied") return;
    if (Date.now() > deadline) throw new Error(`job ${id} not applied: ${res.status} ${res.body.toString("utf8")}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// --- generators -------------------------------------------------------------------------------------------------

/** A header value Node's HTTP client accepts (it refuses control characters and code points above U+00FF). */
const headerSafe = (s: string) => s.replace(/[^\t\x20-\x7e\x80-\xff]/g, "").trim();
/** Latin-1 text from arbitrary Unicode: UTF-8 bytes read as Latin-1, what a client sending raw UTF-8 does. */
const utf8AsLatin1 = (s: string) => Buffer.from(s, "utf8").toString("latin1");

const MALFORMED_ESCAPES = ["%ZZ", "%E0%A4%A", "%", "%%", "%C0%AF", "%00", "%2F", "%2e%2e", "%FF%FE", "%u0041", "%25"];

const text = fc.string({ unit: "grapheme", maxLength: 40 });
const longRun = fc
  .tuple(fc.constantFrom("a", "%41", "-", "é", "/", "."), fc.integer({ min: 100, max: 3_000 }))
  .map(([unit, n]) => unit.repeat(n));

/** A path segment as it goes on the wire (ASCII 0x21-0x7e, as Node's client requires). */
const segment = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[a-z0-9_-]{1,24}$/) },
  { weight: 2, arbitrary: fc.constantFrom(...slugs, "hello", "UPPER", "a".repeat(201), "..", ".", "", "~", "*") },
  { weight: 3, arbitrary: text.map(encodeURIComponent) },
  { weight: 2, arbitrary: fc.constantFrom(...MALFORMED_ESCAPES) },
  { weight: 1, arbitrary: longRun.map((s) => encodeURI(s)) },
  { weight: 2, arbitrary: fc.string({ maxLength: 20 }).map((s) => s.replace(/[^\x21-\x7e]|[?#]/g, "")) },
);

const jobId = fc.oneof(
  fc.constantFrom("01ARZ3NDEKTSV4RRFFQ69G5FAV", "0", "-1", "null", "%00"),
  fc.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/),
  fc.constant("__job__"), // replaced by a real job id at send time
);

const prefix = fc.constantFrom(
  "/api/v1/articles",
  "/api/v1/articles/",
  "/api/v1/jobs",
  "/api/v1/search",
  "/api/v1/csrf",
  "/api/v1",
  "/health",
  "/health/live",
  "/health/ready",
  "/health/security",
  "/metrics",
  "/docs/api/errors",
  "/admin/reindex",
  "/admin",
  "/admin/assets",
  "/admin/key-check",
  "",
);

const path = fc.oneof(
  { weight: 3, arbitrary: prefix },
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.constantFrom("/api/v1/articles", "/health", "/docs/api", "/admin", "/api/v1"), segment)
      .map(([p, s]) => `${p}/${s}`),
  },
  { weight: 2, arbitrary: jobId.map((id) => `/api/v1/jobs/${id}`) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(prefix, fc.array(segment, { minLength: 1, maxLength: 6 }), fc.boolean())
      .map(([p, segs, slash]) => `${p}/${segs.join("/")}${slash ? "/" : ""}`),
  },
  { weight: 1, arbitrary: fc.constantFrom("//", "/./api/v1/articles", "/api/v1/../v1/articles", "/%2e%2e/health") },
);

const queryKey = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom("limit", "offset", "q", "cursor", "tag", "slug", "sort", "status", "page") },
  { weight: 2, arbitrary: text.map(encodeURIComponent) },
  { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_ESCAPES, "", "limit[]", "__proto__", "constructor") },
);

const queryValue = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: -1_000, max: 20_000 }).map(String) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "0",
      "1",
      "100",
      "101",
      "10000",
      "10001",
      "1e3",
      "NaN",
      "-0",
      "0x10",
      "%205",
      "9".repeat(40),
    ),
  },
  { weight: 3, arbitrary: text.map(encodeURIComponent) },
  { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_ESCAPES, "", "+", "%20", "a+b", "*", "\"'<>") },
  { weight: 1, arbitrary: longRun.map(encodeURIComponent) },
  { weight: 1, arbitrary: fc.base64String({ maxLength: 120 }).map(encodeURIComponent) },
);

const query = fc.oneof(
  { weight: 2, arbitrary: fc.constant("") },
  { weight: 1, arbitrary: fc.constantFrom("?", "?&", "?=", "?==", "?limit", "?&&q=", "?q=a&q=b") },
  {
    weight: 5,
    arbitrary: fc
      .array(fc.tuple(queryKey, queryValue), { minLength: 1, maxLength: 5 })
      .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join("&")}`),
  },
);

/** `__csrf__` and `__key__` are replaced by the real token and key at send time (they exist only then). */
const junk = fc.string({ maxLength: 60 }).map(headerSafe);
const latin1 = fc.string({ unit: "binary", maxLength: 40 }).map((s) => headerSafe(utf8AsLatin1(s)));

const headerArbs = {
  "x-request-id": fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9._-]{1,128}$/),
    junk,
    latin1,
    fc.constantFrom("", "a".repeat(129), "a b", "../../etc/passwd", "id\u00e9"),
  ),
  cookie: fc.oneof(
    fc.constant("svc_csrf=__csrf__"),
    fc.constantFrom("svc_csrf=", "svc_csrf", "svc_csrf=a.b", "svc_csrf=__csrf__x", "svc_csrf=__csrf__; svc_csrf=junk"),
    junk.map((v) => `svc_csrf=${v}`),
    fc.tuple(junk, junk).map(([k, v]) => `${k}=${v}; svc_csrf=__csrf__`),
    junk,
    latin1,
  ),
  authorization: fc.oneof(
    { weight: 4, arbitrary: fc.constant("Bearer __key__") },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "Bearer",
        "Bearer ",
        "bearer __key__",
        "Bearer __key__x",
        "Basic __key__",
        "Bearer  __key__",
      ),
    },
    { weight: 2, arbitrary: junk.map((v) => `Bearer ${v}`) },
    { weight: 1, arbitrary: junk },
    { weight: 1, arbitrary: latin1 },
  ),
  "x-api-key": fc.oneof(fc.constant("__key__"), junk),
  "x-csrf-token": fc.oneof({ weight: 3, arbitrary: fc.constant("__csrf__") }, { weight: 1, arbitrary: junk }),
  "content-type": fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        "application/json",
        "application/json; charset=utf-8",
        "application/json;charset=UTF-8",
        "APPLICATION/JSON",
        "application/json; charset=latin1",
        "application/merge-patch+json",
        "text/plain",
        "text/html",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=xyz",
        "multipart/form-data",
        "application/octet-stream",
        "",
        "json",
        "*/*",
      ),
    },
    { weight: 1, arbitrary: junk },
  ),
  "if-none-match": fc.oneof(fc.constantFrom("*", '"abc"', 'W/"abc"', '""', "W/", '"a", "b"'), junk),
  "if-modified-since": fc.oneof(fc.constantFrom("Thu, 01 Jan 1970 00:00:00 GMT", "yesterday"), junk),
  origin: fc.oneof(fc.constantFrom("http://evil.example", "null", "http://127.0.0.1", "https://localhost:3000"), junk),
  "x-forwarded-for": fc.oneof(
    fc.ipV4(),
    fc.ipV6(),
    fc.constantFrom("127.0.0.1", "10.0.0.1", "203.0.113.7", "unknown", ",", ", ,", "1.1.1.1, 2.2.2.2"),
    junk,
  ),
  accept: fc.oneof(fc.constantFrom("application/json", "text/html", "*/*", "text/event-stream"), junk),
  "accept-encoding": fc.constantFrom("gzip", "br", "identity", "*", "gzip;q=0"),
  "access-control-request-method": fc.constantFrom("POST", "DELETE", "PATCH", "GET"),
  range: fc.constantFrom("bytes=0-10", "bytes=-1", "bytes=x"),
} satisfies Record<string, fc.Arbitrary<string>>;

const headers = fc.record(headerArbs, { requiredKeys: [] }).map((h) => h as Record<string, string>);

/** Article creates and updates: mostly plausible fields (so some pass validation), sometimes anything at all. */
const articleLike = fc.record(
  {
    title: fc.oneof(
      { weight: 4, arbitrary: text },
      { weight: 1, arbitrary: fc.constantFrom("", "   ", "t".repeat(301)) },
      { weight: 1, arbitrary: fc.anything() },
    ),
    slug: fc.oneof(
      { weight: 5, arbitrary: fc.stringMatching(/^[a-z0-9_-]{1,30}$/) },
      { weight: 1, arbitrary: fc.constantFrom(...slugs, "", "UPPER", "a".repeat(201), "../x") },
      { weight: 1, arbitrary: text },
      { weight: 1, arbitrary: fc.anything() },
    ),
    content: fc.oneof(
      {
        weight: 3,
        arbitrary: fc.constantFrom(
          "<p>x</p>",
          "<script>alert(1)</script>",
          '<a href="javascript:alert(1)">x</a>',
          "<img src=x onerror=1>",
        ),
      },
      { weight: 2, arbitrary: text },
      { weight: 1, arbitrary: fc.anything() },
    ),
    tags: fc.oneof(
      { weight: 3, arbitrary: fc.array(fc.oneof(text, fc.constantFrom("", " ", "t".repeat(65))), { maxLength: 25 }) },
      { weight: 1, arbitrary: fc.anything() },
    ),
    extra: fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue(), { maxKeys: 3 }),
  },
  { requiredKeys: ["extra"] },
);

const articleJson = articleLike.map(({ extra, ...fields }) => JSON.stringify({ ...extra, ...fields }));

const body = fc.oneof(
  { weight: 60, arbitrary: fc.constant(undefined) },
  { weight: 40, arbitrary: articleJson },
  { weight: 30, arbitrary: fc.json({ maxDepth: 3 }) },
  {
    weight: 20,
    arbitrary: fc.tuple(articleLike, fc.nat()).map(([a, cut]) => {
      const s = JSON.stringify(a);
      return s.slice(0, cut % Math.max(1, s.length));
    }),
  },
  { weight: 10, arbitrary: fc.string({ unit: "binary", maxLength: 200 }) },
  {
    weight: 10,
    arbitrary: fc.constantFrom(
      "",
      "null",
      "[]",
      "1",
      '"x"',
      "{",
      "}",
      "{}",
      "\u0000",
      "\ufeff{}",
      '{"__proto__":{"x":1}}',
    ),
  },
  {
    weight: 10,
    arbitrary: fc
      .integer({ min: 1_000, max: 300_000 })
      .map((n) => JSON.stringify({ title: "Big", slug: "big-one", content: `<p>${"x".repeat(n)}</p>` })),
  },
  // Over the 2 MiB JSON cap: rare (about 1 request in 180), it is the most expensive case.
  { weight: 1, arbitrary: fc.constant("oversize") },
);

const method = fc.constantFrom("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS");

/** Anything: every header optional and random, so most requests stop at routing, auth or CSRF. */
const anyRequest = fc.record({ method, path, query, headers, body });

/**
 * Writes that mostly carry the real key, cookie and token and a JSON content type, so the bodies reach the
 * articles plugin's validation (and some are created, 202) rather than stopping at the gates.
 */
const writeRequest = fc.record({
  method: fc.constantFrom("POST", "POST", "POST", "PUT", "PUT", "PATCH", "DELETE"),
  path: fc.oneof(
    { weight: 4, arbitrary: fc.constant("/api/v1/articles") },
    { weight: 2, arbitrary: fc.constantFrom(...slugs).map((slug) => `/api/v1/articles/${slug}`) },
    { weight: 1, arbitrary: segment.map((s) => `/api/v1/articles/${s}`) },
  ),
  query: fc.oneof({ weight: 5, arbitrary: fc.constant("") }, { weight: 1, arbitrary: query }),
  headers: fc
    .tuple(
      fc.record(
        {
          authorization: fc.oneof({ weight: 9, arbitrary: fc.constant("Bearer __key__") }, headerArbs.authorization),
          cookie: fc.oneof({ weight: 9, arbitrary: fc.constant("svc_csrf=__csrf__") }, headerArbs.cookie),
          "x-csrf-token": fc.oneof({ weight: 9, arbitrary: fc.constant("__csrf__") }, headerArbs["x-csrf-token"]),
          "content-type": fc.oneof(
            { weight: 4, arbitrary: fc.constant("application/json") },
            headerArbs["content-type"],
          ),
        },
        { requiredKeys: [] },
      ),
      fc.ipV4(),
      headers,
    )
    .map(([gates, ip, rest]) => ({ ...rest, "x-forwarded-for": ip, ...gates }) as Record<string, string>),
  body: fc.oneof({ weight: 3, arbitrary: articleJson }, { weight: 1, arbitrary: body }),
});

const requestArb = fc
  .oneof({ weight: 3, arbitrary: anyRequest }, { weight: 2, arbitrary: writeRequest })
  .filter(
    (r) =>
      r.path.length + r.query.length + Object.entries(r.headers).reduce((n, [k, v]) => n + k.length + v.length + 4, 0) <
      MAX_HEAD_BYTES,
  );

type Generated = typeof requestArb extends fc.Arbitrary<infer T> ? T : never;

const OVERSIZE_BODY = JSON.stringify({ title: "x", slug: "too-big", content: "y".repeat(2 * 1024 * 1024) });

/** Fills in the secrets and ids that exist only at run time. */
function materialise(r: Generated): RawRequest {
  const fill = (s: string) => s.replaceAll("__key__", API_KEY).replaceAll("__csrf__", csrf);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) headers[k] = fill(v);
  const target = (r.path + r.query)
    .replaceAll("__job__", jobIds[sent % jobIds.length] ?? "none")
    // Node's client sends only 0x21-0xff in a path; the generators keep to ASCII, this is a safety net.
    .replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
  const body = r.body === "oversize" ? OVERSIZE_BODY : r.body;
  return { method: r.method, target: target.startsWith("/") ? target : `/${target}`, headers, body };
}

/** What §3 and §4 demand of every response; returns the problems found (empty when it conforms). */
function problems(req: RawRequest, res: RawResponse): string[] {
  const found: string[] = [];
  if (res.status >= 500) found.push(`status ${res.status}`);
  const id = header(res, "x-request-id");
  if (!id) found.push("no X-Request-Id");
  else if (!REQUEST_ID.test(id)) found.push(`malformed X-Request-Id ${JSON.stringify(id)}`);
  const incoming = req.headers["x-request-id"]?.trim();
  if (incoming !== undefined && REQUEST_ID.test(incoming) && id !== incoming) {
    found.push(`valid incoming X-Request-Id ${incoming} not kept (got ${String(id)})`);
  }
  if (header(res, "x-content-type-options") !== "nosniff") found.push("X-Content-Type-Options is not nosniff");
  if (header(res, "referrer-policy") !== "no-referrer") found.push("Referrer-Policy is not no-referrer");
  if (header(res, "x-frame-options") !== "DENY") found.push("X-Frame-Options is not DENY");
  if (res.status === 405 && !header(res, "allow")) found.push("405 without Allow");
  if (res.status === 401 && !/^Bearer/i.test(header(res, "www-authenticate") ?? ""))
    found.push("401 without WWW-Authenticate: Bearer");
  if (res.status === 429 && !header(res, "retry-after")) found.push("429 without Retry-After");
  if (res.status >= 400 && req.method !== "HEAD") {
    const text = res.body.toString("utf8");
    let envelope: unknown;
    try {
      envelope = JSON.parse(text);
    } catch {
      found.push(`error body is not JSON: ${text.slice(0, 200)}`);
    }
    const error = (envelope as { error?: Record<string, unknown> } | undefined)?.error;
    if (envelope !== undefined) {
      if (!error || typeof error !== "object") found.push(`no error envelope: ${text.slice(0, 200)}`);
      else {
        if (typeof error.code !== "string" || !/^[a-z_]+$/.test(error.code))
          found.push(`bad code ${String(error.code)}`);
        if (typeof error.message !== "string") found.push("no message");
        if (error.request_id !== id)
          found.push(`request_id ${String(error.request_id)} is not the header ${String(id)}`);
        if (error.docs !== `/docs/api/errors#${String(error.code)}`) found.push(`bad docs ${String(error.docs)}`);
      }
    }
    if (text.includes(cwd) || /\n\s+at /.test(text) || /SQLITE_|node_modules/.test(text)) {
      found.push(`internals leaked: ${text.slice(0, 300)}`);
    }
  }
  if (res.status === 304 && res.body.length > 0) found.push("304 with a body");
  return found;
}

function errorCode(res: RawResponse): string {
  try {
    return String((JSON.parse(res.body.toString("utf8")) as { error?: { code?: unknown } }).error?.code);
  } catch {
    return "?";
  }
}

function describeRequest(req: RawRequest): string {
  const body =
    req.body === undefined ? "" : `\nbody (${req.body.length} chars): ${JSON.stringify(req.body.slice(0, 500))}`;
  return `${req.method} ${req.target.slice(0, 500)}\nheaders: ${JSON.stringify(req.headers)}${body}`;
}

// --- the run ----------------------------------------------------------------------------------------------------

describe("fuzz: vellum serve against random requests (contract §3, §4)", () => {
  beforeAll(async () => {
    cwd = mkdtempSync(join(tmpdir(), "vellum-fuzz-"));
    server = await startServer(cwd, {
      SERVICE_API_KEY: API_KEY,
      SERVICE_DATA_DIR: join(cwd, "data"),
      // `info` prints the "listening on" line the test waits for (per-request lines are dropped but a tail).
      SERVICE_LOG_LEVEL: "info",
      // The client IP comes from X-Forwarded-For, so random requests spread over many IPs: lockouts and rate
      // limits are exercised without locking every write of the run out (the checks after it use their own IP).
      SERVICE_TRUST_PROXY: "1",
    });
    agent = keepAliveAgent(CONCURRENCY);
    csrf = String((await json(await call({ method: "GET", target: "/api/v1/csrf", headers: {} }))).token);
    for (const slug of slugs) jobIds.push(await create(slug, { "x-forwarded-for": "198.51.100.1" }));
    for (const id of jobIds) await waitApplied(id);
  });

  afterAll(async () => {
    agent?.destroy();
    await server?.stop();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  it(
    `answers ${RUNS} random requests below 500, with a request id, the security headers and the error envelope`,
    async () => {
      const started = Date.now();
      const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
      const batches = Math.ceil(RUNS / CONCURRENCY);
      await fc.assert(
        fc.asyncProperty(fc.array(requestArb, { minLength: CONCURRENCY, maxLength: CONCURRENCY }), async (batch) => {
          const reqs = batch.map(materialise);
          const results = await Promise.all(
            reqs.map(async (req) => {
              sent++;
              try {
                const res = await call(req);
                const key = `${res.status}${res.status >= 400 && req.method !== "HEAD" ? ` ${errorCode(res)}` : ""}`;
                statuses.set(key, (statuses.get(key) ?? 0) + 1);
                return problems(req, res).map((p) => `${p}\n  ${res.status} for ${describeRequest(req)}`);
              } catch (error) {
                return [`request failed: ${String(error)}\n  for ${describeRequest(req)}`];
              }
            }),
          );
          const failures = results.flat();
          if (failures.length > 0) throw new Error(failures.join("\n\n"));
        }),
        {
          numRuns: batches,
          ...(seed !== undefined ? { seed, path: process.env.FUZZ_PATH } : {}),
        },
      );
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const summary = [...statuses.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${s}: ${n}`);
      console.warn(`fuzz: ${sent} requests in ${seconds} s; statuses (and error codes):\n  ${summary.join("\n  ")}`);
      expect(sent).toBeGreaterThanOrEqual(RUNS);
    },
    Math.max(180_000, RUNS * 20),
  );

  // Found by this fuzz test: requests Node's HTTP parser refuses before Vellum's handler runs (a head over
  // 16 KiB, a raw non-ASCII byte in the request target) got Node's bare `431`/`400`. The standalone listener now
  // answers them itself (`packages/core/src/node/client-error.ts`). The generator keeps clear of them
  // (MAX_HEAD_BYTES, ASCII targets) so that the random cases exercise the handlers; this test covers them.
  it("answers requests Node's parser refuses with the envelope, a request id and the security headers", async () => {
    const cases: RawRequest[] = [
      { method: "GET", target: `/api/v1/articles/${"a".repeat(20_000)}`, headers: {} },
      { method: "GET", target: "/health", headers: { "x-padding": "a".repeat(20_000) } },
      { method: "GET", target: "/api/v1/articles/\xe4\xb8\xad", headers: {} },
    ];
    const found: string[] = [];
    for (const req of cases) {
      const res = await send(server.url, keepAliveAgent(1), req);
      found.push(...problems(req, res).map((p) => `${p} (${res.status} for ${describeRequest(req).slice(0, 80)})`));
    }
    expect(found).toEqual([]);
  });

  it("is healthy afterwards and still accepts and applies a normal create", async () => {
    const live = await call({ method: "GET", target: "/health/live", headers: {} });
    expect(live.status).toBe(200);
    const health = await call({ method: "GET", target: "/health", headers: {} });
    expect(health.status).toBeLessThan(500);
    expect(header(health, "content-type")).toMatch(/json/);
    // A fresh client IP: the run may legitimately have locked out the addresses it used.
    const client = { "x-forwarded-for": "198.51.100.250" };
    const id = await create("after-the-fuzz", client);
    await waitApplied(id, client);
    const article = await call({ method: "GET", target: "/api/v1/articles/after-the-fuzz", headers: {} });
    expect(article.status).toBe(200);
    expect((await json(article)).title).toBe("Fuzz after-the-fuzz");
    expect(server.child.exitCode).toBeNull();
  });
});
