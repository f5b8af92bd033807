import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";

/**
 * The practical ceiling for the article reads: `node:http` answering GET /api/v1/articles/:slug
 * and GET /api/v1/articles (limit, cursor, tag) from the same SQLite file with better-sqlite3
 * prepared statements and the same JSON (cursors signed with the same key), and nothing else: no
 * routing library, security headers, cookies, metrics or error envelope.
 * `--mode static` answers the same URLs with bytes read once at start: bare node:http.
 * Usage: node reference-articles.mjs --port <n> --data-dir <dir> [--mode sqlite|static]
 */
const { values } = parseArgs({
  options: { port: { type: "string" }, "data-dir": { type: "string" }, mode: { type: "string", default: "sqlite" } },
});
const port = Number(values.port);
const dataDir = values["data-dir"];
if (!Number.isInteger(port) || port <= 0 || !dataDir || !["sqlite", "static"].includes(values.mode ?? "")) {
  console.error("reference-articles: pass --port <n> --data-dir <dir> [--mode sqlite|static]");
  process.exit(2);
}

const db = new Database(join(dataDir, "db", "vellum.sqlite"), { readonly: true, fileMustExist: true });
const secret = readFileSync(join(dataDir, "settings", "articles-cursor-secret"), "utf8");
const summary = "id, title, slug, tags, created_at, updated_at";
const bySlug = db.prepare(`SELECT ${summary}, content FROM articles_items WHERE slug = ?`);
const page = db.prepare(`SELECT ${summary} FROM articles_items ORDER BY id DESC LIMIT ?`);
const pageAfter = db.prepare(`SELECT ${summary} FROM articles_items WHERE id < ? ORDER BY id DESC LIMIT ?`);
const tagged = `SELECT i.id, i.title, i.slug, i.tags, i.created_at, i.updated_at FROM articles_tags t
  JOIN articles_items i ON i.id = t.article_id WHERE t.tag = ?`;
const tagPage = db.prepare(`${tagged} ORDER BY t.article_id DESC LIMIT ?`);
const tagPageAfter = db.prepare(`${tagged} AND t.article_id < ? ORDER BY t.article_id DESC LIMIT ?`);

const mac = (id, tag) =>
  createHmac("sha256", secret)
    .update(`articles-cursor/v1\n${tag ?? ""}\n${id}`)
    .digest()
    .subarray(0, 16)
    .toString("base64url");
const toArticle = (row) => ({ ...row, tags: JSON.parse(row.tags) });

/** @returns {{ status: number, body: string }} */
function answer(url) {
  const { pathname, searchParams } = new URL(url, "http://reference");
  if (pathname.startsWith("/api/v1/articles/")) {
    const row = bySlug.get(decodeURIComponent(pathname.slice("/api/v1/articles/".length)));
    return row ? { status: 200, body: JSON.stringify(toArticle(row)) } : { status: 404, body: "{}" };
  }
  if (pathname !== "/api/v1/articles") return { status: 404, body: "{}" };
  const limit = Number(searchParams.get("limit") ?? 20);
  const tag = searchParams.get("tag") ?? undefined;
  const cursor = searchParams.get("cursor");
  const before = cursor?.split(".")[0];
  if (cursor && mac(before, tag) !== cursor.split(".")[1]) return { status: 400, body: "{}" };
  const rows = tag
    ? before
      ? tagPageAfter.all(tag, before, limit + 1)
      : tagPage.all(tag, limit + 1)
    : before
      ? pageAfter.all(before, limit + 1)
      : page.all(limit + 1);
  const articles = rows.slice(0, limit).map(toArticle);
  const last = articles.at(-1);
  const next_cursor = rows.length > limit && last ? `${last.id}.${mac(last.id, tag)}` : null;
  return { status: 200, body: JSON.stringify({ articles, next_cursor }) };
}

const live = JSON.stringify({ live: true });
const cache = new Map();
createServer((req, res) => {
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
  res.writeHead(result.status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(result.body),
  });
  res.end(result.body);
}).listen(port, "127.0.0.1");
