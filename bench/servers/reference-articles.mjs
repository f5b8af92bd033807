import { createHash, createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";

/**
 * The practical ceiling for the article reads: `node:http` answering GET /api/v1/articles/:slug
 * and GET /api/v1/articles (limit, cursor, tag) from the same SQLite file with better-sqlite3
 * prepared statements and the same JSON (cursors signed with the same key; list pages from the
 * same `articles_feed` summaries), and nothing else: no routing library, metrics or error envelope.
 * `--mode static` answers the same URLs with bytes read once at start: bare node:http.
 * `--headers security` adds the headers every Vellum response must carry (contract §3, §4): the
 * security headers and a request id — fixed values here, so what it measures is their bytes on
 * the wire, not the work to make them. Cacheable reads carry no `svc_csrf` cookie (contract §4).
 * `--headers contract` also sends, on a 200, the caching headers contract §6 asks of article reads:
 * `ETag`, made as Vellum makes it from the SHA-256 of each body, `Cache-Control` and `Cache-Tag`.
 * With these, a response carries every header the contract requires of it.
 * `--headers vellum` adds Vellum's `Surrogate-Key` to those: every header Vellum sends, as
 * `h3-headers.mjs` does for the kernel's own route.
 * `--framework h3` gives the same answers with the same headers through h3's router on srvx's Node
 * adapter, as the kernel is served (`toNodeHandler`, a `FastResponse` with a plain header object):
 * the ceiling of any h3 app doing this work, framework included.
 * Usage: node reference-articles.mjs --port <n> --data-dir <dir> [--mode sqlite|static]
 *   [--headers none|security|contract|vellum] [--framework node|h3]
 */
const { values } = parseArgs({
  options: {
    port: { type: "string" },
    "data-dir": { type: "string" },
    mode: { type: "string", default: "sqlite" },
    headers: { type: "string", default: "none" },
    framework: { type: "string", default: "node" },
  },
});
const port = Number(values.port);
const dataDir = values["data-dir"];
const HEADER_SETS = ["none", "security", "contract", "vellum"];
const modeOk =
  ["sqlite", "static"].includes(values.mode ?? "") &&
  HEADER_SETS.includes(values.headers ?? "") &&
  ["node", "h3"].includes(values.framework ?? "") &&
  !(values.framework === "h3" && values.mode === "static");
if (!Number.isInteger(port) || port <= 0 || !dataDir || !modeOk) {
  console.error(
    "reference-articles: pass --port <n> --data-dir <dir> [--mode sqlite|static] [--headers none|security|contract|vellum] [--framework node|h3] (h3 with sqlite only)",
  );
  process.exit(2);
}

const db = new Database(join(dataDir, "db", "vellum.sqlite"), { readonly: true, fileMustExist: true });
const secret = readFileSync(join(dataDir, "settings", "articles-cursor-secret"), "utf8");
const bySlug = db.prepare(
  `SELECT id, title, slug, tags, content, created_at, updated_at FROM articles_items WHERE slug = ?`,
);
const page = db.prepare(`SELECT doc FROM articles_feed ORDER BY id DESC LIMIT ?`).pluck();
const pageAfter = db.prepare(`SELECT doc FROM articles_feed WHERE id < ? ORDER BY id DESC LIMIT ?`).pluck();
const tagged = `SELECT f.doc FROM articles_tags t JOIN articles_feed f ON f.id = t.article_id WHERE t.tag = ?`;
const tagPage = db.prepare(`${tagged} ORDER BY t.article_id DESC LIMIT ?`).pluck();
const tagPageAfter = db.prepare(`${tagged} AND t.article_id < ? ORDER BY t.article_id DESC LIMIT ?`).pluck();
const extraHeaders =
  values.headers !== "none"
    ? {
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "x-frame-options": "DENY",
        "x-request-id": "0123456789abcdef",
      }
    : {};

const mac = (id, tag) =>
  createHmac("sha256", secret)
    .update(`articles-cursor/v1\n${tag ?? ""}\n${id}`)
    .digest()
    .subarray(0, 16)
    .toString("base64url");
const toArticle = (row) => ({ ...row, tags: JSON.parse(row.tags) });

/** The caching headers of a 200 showing `tag` (`--headers contract` and `vellum`). */
const caching = (body, tag) => {
  if (values.headers !== "contract" && values.headers !== "vellum") return {};
  const headers = {
    etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
    "cache-control": "public, max-age=0, s-maxage=60, stale-while-revalidate=30",
    "cache-tag": tag,
  };
  if (values.headers === "vellum") headers["surrogate-key"] = tag;
  return headers;
};

/** @returns {{ status: number, body: string, headers?: Record<string, string> }} */
function answer(url) {
  const { pathname, searchParams } = new URL(url, "http://reference");
  if (pathname.startsWith("/api/v1/articles/")) {
    const row = bySlug.get(decodeURIComponent(pathname.slice("/api/v1/articles/".length)));
    if (!row) return { status: 404, body: "{}" };
    const body = JSON.stringify(toArticle(row));
    return { status: 200, body, headers: caching(body, `article:${row.slug}`) };
  }
  if (pathname !== "/api/v1/articles") return { status: 404, body: "{}" };
  const limit = Number(searchParams.get("limit") ?? 20);
  const tag = searchParams.get("tag") ?? undefined;
  const cursor = searchParams.get("cursor");
  const before = cursor?.split(".")[0];
  if (cursor && mac(before, tag) !== cursor.split(".")[1]) return { status: 400, body: "{}" };
  const docs = tag
    ? before
      ? tagPageAfter.all(tag, before, limit + 1)
      : tagPage.all(tag, limit + 1)
    : before
      ? pageAfter.all(before, limit + 1)
      : page.all(limit + 1);
  const articles = docs.slice(0, limit);
  const last = articles.at(-1) && JSON.parse(articles.at(-1)).id;
  const next_cursor = docs.length > limit && last ? `${last}.${mac(last, tag)}` : null;
  const body = `{"articles":[${articles.join(",")}],"next_cursor":${JSON.stringify(next_cursor)}}`;
  return { status: 200, body, headers: caching(body, tag ? `tag:${tag}` : "articles") };
}

const live = JSON.stringify({ live: true });

/**
 * `--framework h3`: the same answers, routed by h3. h3 and srvx are imported only then, and the
 * `node:http` path below is left as it was: with them loaded, that path's instruction count moved
 * by about 4 % (up for a read from SQLite, down for bytes from memory), and its figures are
 * compared across sessions.
 */
async function h3Listener() {
  const [{ H3 }, { FastResponse, toNodeHandler }] = await Promise.all([import("h3"), import("srvx/node")]);
  const app = new H3();
  app.get("/health/live", () => new FastResponse(live, { headers: { "content-type": "application/json" } }));
  const read = (event) => {
    const result = answer(event.runtime?.node?.req.url ?? "/");
    const headers = Object.assign({}, extraHeaders);
    headers["content-type"] = "application/json; charset=utf-8";
    Object.assign(headers, result.headers);
    headers["content-length"] = String(Buffer.byteLength(result.body));
    return new FastResponse(result.body, { status: result.status, headers });
  };
  app.get("/api/v1/articles", read);
  app.get("/api/v1/articles/:slug", read);
  return toNodeHandler(app.fetch);
}

const cache = new Map();
const nodeListener = (req, res) => {
  if (req.url === "/health/live") {
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(live) });
    res.end(live);
    return;
  }
  let result = values.mode === "static" ? cache.get(req.url) : undefined;
  if (!result) {
    result = answer(req.url ?? "/");
    if (values.mode === "static") cache.set(req.url, result);
  }
  // Assigned, not merged by two spreads: in Node 20's V8 that gives every object a hidden class of
  // its own, which slows building it and every read of it (docs/benchmarks.md, session 23).
  const headers = Object.assign({}, extraHeaders);
  headers["content-type"] = "application/json; charset=utf-8";
  Object.assign(headers, result.headers);
  headers["content-length"] = Buffer.byteLength(result.body);
  res.writeHead(result.status, headers);
  res.end(result.body);
};
createServer(values.framework === "h3" ? await h3Listener() : nodeListener).listen(port, "127.0.0.1");
