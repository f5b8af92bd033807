import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import { join } from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { monotonicFactory } from "ulidx";
import { SLUG_PATTERN } from "../../packages/core/dist/index.js";
import { createSanitizer } from "../../plugins/articles/dist/sanitize.js";
import { cleanText, htmlToText } from "../../plugins/search/dist/text/html-to-text.js";
import { porterStem } from "../../plugins/search/dist/text/porter.js";
import { vocabularyWords } from "../../plugins/search/dist/text/tokenize.js";
import { deletionVariants, isCorrectable } from "../../plugins/search/dist/typo/variants.js";

/**
 * The practical ceiling for creates: `node:http` and better-sqlite3 doing the work contract §4–5
 * asks of `POST /api/v1/articles` with the articles and search plugins' data, and nothing else.
 * It checks the API key and the CSRF double submit, reads and validates the JSON, sanitizes the
 * content (the articles plugin's own sanitizer: the contract's allowlist is the same work
 * whoever runs it), enqueues with group commit into the same `_vellum_jobs` table and claims the
 * slug, committing with `synchronous=FULL` before the `202`, then applies the jobs in batches with
 * `synchronous=NORMAL`: the article row (the plugin's triggers write its feed and tag rows), the
 * search document, its FTS5 entry, its words with their stems and typo variants, its tags and the
 * live generation's counts, and marks the jobs applied — the rows Vellum writes, through the same
 * schema, computed with the search plugin's own text functions. What it leaves out is the
 * framework: routing, hooks, savepoints per job and subscriber, Kysely, metrics, the error envelope.
 * It runs on a copy of the seeded data dir and answers `GET /api/v1/csrf`, `GET /api/v1/jobs/:id`
 * and, for readiness only, `GET /api/v1/articles?limit=1` (no reads are measured on it).
 * Usage: node reference-creates.mjs --port <n> --data-dir <dir>; the API key comes from SERVICE_API_KEY.
 */
const { values } = parseArgs({ options: { port: { type: "string" }, "data-dir": { type: "string" } } });
const port = Number(values.port);
const dataDir = values["data-dir"];
const apiKey = process.env.SERVICE_API_KEY;
if (!Number.isInteger(port) || port <= 0 || !dataDir || !apiKey) {
  console.error("reference-creates: pass --port <n> --data-dir <dir> and set SERVICE_API_KEY");
  process.exit(2);
}

const QUEUE = "articles";
const MAX_BODY_BYTES = 1024 * 1024 + 64 * 1024;
const INTAKE_BATCH = 256;
const APPLY_BATCH = 256;
const SECURITY = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

const db = new Database(join(dataDir, "db", "vellum.sqlite"), { fileMustExist: true });
db.pragma("journal_mode = WAL");
db.pragma("synchronous = FULL");
db.pragma("busy_timeout = 5000");
db.pragma("foreign_keys = ON");
db.pragma("temp_store = MEMORY");

const live = db.prepare(`SELECT generation FROM search_generations WHERE state = 'active' AND broken = 0`).get();
if (!live) {
  console.error("reference-creates: the data dir has no live search generation (seed it with vellum first)");
  process.exit(2);
}
const g = live.generation;
const docsTable = `search_docs_g${g}`;

const nextId = monotonicFactory();
const sanitize = createSanitizer({ mediaPrefix: "/media/" });
const csrfKey = randomBytes(32);
const sign = (nonce) => createHmac("sha256", csrfKey).update(nonce).digest("base64url");
const keyBuffer = Buffer.from(`Bearer ${apiKey}`);

const slugHolder = db.prepare(
  `SELECT id FROM articles_items WHERE slug = ? UNION ALL SELECT id FROM articles_pending WHERE slug = ?`,
);
const insertJob = db.prepare(
  `INSERT INTO _vellum_jobs (id, queue, key, type, payload, status, attempts, run_at, last_error, error_code, created_at, updated_at)
   VALUES (?, '${QUEUE}', ?, 'article.create', ?, 'queued', 0, ?, NULL, NULL, ?, ?)`,
);
const insertClaim = db.prepare(`INSERT INTO articles_pending (id, slug) VALUES (?, ?)`);
const jobStatus = db.prepare(`SELECT status FROM _vellum_jobs WHERE id = ?`).pluck();
const insertArticle = db.prepare(
  `INSERT INTO articles_items (id, slug, title, tags, created_at, updated_at, content)
   SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM articles_pending WHERE id = ?)`,
);
const insertDoc = db
  .prepare(
    `INSERT INTO ${docsTable} (article_id, slug, title, tags, tags_text, body, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING rowid`,
  )
  .pluck();
const indexDocs = db.prepare(
  `INSERT INTO search_fts_g${g} (rowid, title, tags_text, body)
   SELECT rowid, title, tags_text, body FROM ${docsTable} WHERE rowid IN (SELECT value FROM json_each(?))`,
);
const countTerms = db.prepare(
  `INSERT INTO search_terms_g${g} (term, docs) SELECT key, value FROM json_each(?) WHERE true
   ON CONFLICT (term) DO UPDATE SET docs = docs + excluded.docs RETURNING term, docs`,
);
const stemTerms = db.prepare(
  `UPDATE search_terms_g${g} SET stem = s.value FROM json_each(?) AS s WHERE search_terms_g${g}.term = s.key`,
);
const addVariants = db.prepare(
  `INSERT OR IGNORE INTO search_variants_g${g} (variant, term) SELECT value ->> 0, value ->> 1 FROM json_each(?)`,
);
const countTags = db.prepare(
  `INSERT INTO search_tags_g${g} (tag, docs) SELECT key, value FROM json_each(?) WHERE true
   ON CONFLICT (tag) DO UPDATE SET docs = docs + excluded.docs`,
);
const touchGeneration = db.prepare(
  `UPDATE search_generations SET documents = documents + ?, heartbeat_at = ?, indexed_at = ? WHERE generation = ?`,
);
const markApplied = db.prepare(
  `UPDATE _vellum_jobs SET status = 'applied', updated_at = ?, payload = 'null'
   WHERE queue = '${QUEUE}' AND status = 'queued' AND id IN (SELECT value FROM json_each(?))`,
);

/** One enqueue transaction for every create that arrived meanwhile; returns each one's job or a conflict. */
const enqueue = db.transaction((inputs) => {
  const now = Date.now();
  const at = new Date(now).toISOString();
  return inputs.map((input) => {
    if (slugHolder.get(input.slug, input.slug)) return undefined;
    const id = nextId(now);
    insertJob.run(id, input.slug, JSON.stringify(input), now, at, at);
    insertClaim.run(id, input.slug);
    return { id, input, created_at: at };
  });
});

/** One apply transaction: the articles, their search entries and counts, and the jobs marked applied. */
const apply = db.transaction((jobs) => {
  const rowids = [];
  const terms = new Map();
  const tags = new Map();
  for (const { id, input, created_at } of jobs) {
    const { title, slug, content } = input;
    if (
      insertArticle.run(id, slug, title, JSON.stringify(input.tags), created_at, created_at, content, id).changes === 0
    )
      continue;
    const docTags = [...new Set(input.tags.map(cleanText).filter((tag) => tag.length > 0))];
    const doc = { title: cleanText(title), tagsText: docTags.join("\n"), body: htmlToText(content) };
    rowids.push(
      insertDoc.get(id, slug, doc.title, JSON.stringify(docTags), doc.tagsText, doc.body, created_at, created_at),
    );
    for (const word of vocabularyWords(`${doc.title}\n${doc.tagsText}\n${doc.body}`))
      terms.set(word, (terms.get(word) ?? 0) + 1);
    for (const tag of docTags) tags.set(tag, (tags.get(tag) ?? 0) + 1);
  }
  if (rowids.length > 0) {
    indexDocs.run(JSON.stringify(rowids));
    const counted = countTerms.all(JSON.stringify(Object.fromEntries(terms)));
    const created = counted.filter((row) => row.docs === terms.get(row.term)).map((row) => row.term);
    if (created.length > 0) {
      stemTerms.run(JSON.stringify(Object.fromEntries(created.map((term) => [term, porterStem(term)]))));
      const pairs = created.filter(isCorrectable).flatMap((term) => deletionVariants(term).map((v) => [v, term]));
      addVariants.run(JSON.stringify(pairs));
    }
    countTags.run(JSON.stringify(Object.fromEntries(tags)));
    const now = new Date().toISOString();
    touchGeneration.run(rowids.length, now, now, g);
  }
  markApplied.run(new Date().toISOString(), JSON.stringify(jobs.map((job) => job.id)));
});

/** @type {{ input: object, resolve: (job: object | undefined) => void, reject: (error: unknown) => void }[]} */
const waiting = [];
const toApply = [];
let applying = false;
let intakeScheduled = false;

function applyQueued() {
  while (toApply.length > 0) {
    const batch = toApply.splice(0, APPLY_BATCH);
    // The jobs are durable already: their effects' commit need not wait for the disk.
    db.pragma("synchronous = NORMAL");
    try {
      apply(batch);
    } finally {
      db.pragma("synchronous = FULL");
    }
  }
  applying = false;
}

function drainIntake() {
  while (waiting.length > 0) {
    const batch = waiting.splice(0, INTAKE_BATCH);
    try {
      const jobs = enqueue(batch.map((entry) => entry.input));
      batch.forEach((entry, i) => entry.resolve(jobs[i]));
      toApply.push(...jobs.filter(Boolean));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    }
  }
  if (toApply.length > 0 && !applying) {
    applying = true;
    setImmediate(applyQueued);
  }
  intakeScheduled = false;
}

function submit(input) {
  return new Promise((resolve, reject) => {
    waiting.push({ input, resolve, reject });
    if (!intakeScheduled) {
      intakeScheduled = true;
      setImmediate(drainIntake);
    }
  });
}

let requests = 0;
function send(res, status, body, headers = {}) {
  const text = JSON.stringify(body);
  // Assigned, not spread: see reference-articles.mjs.
  const all = Object.assign({}, SECURITY);
  all["x-request-id"] = `ref-${(requests++).toString(36)}`;
  all["content-type"] = "application/json";
  all["content-length"] = Buffer.byteLength(text);
  res.writeHead(status, Object.assign(all, headers));
  res.end(text);
}

const fail = (res, status, code, message) => send(res, status, { error: { code, message } });

function cookie(header, name) {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function csrfOk(req) {
  const token = cookie(req.headers.cookie, "svc_csrf");
  const header = req.headers["x-csrf-token"];
  if (!token || typeof header !== "string" || token !== header) return false;
  const dot = token.indexOf(".");
  if (dot <= 0) return false;
  const expected = Buffer.from(sign(token.slice(0, dot)));
  const given = Buffer.from(token.slice(dot + 1));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function keyOk(req) {
  const given = Buffer.from(req.headers.authorization ?? "");
  return given.length === keyBuffer.length && timingSafeEqual(given, keyBuffer);
}

/** The create's fields as the articles plugin checks them, or a message for a 400. */
function validate(body) {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "body must be a JSON object";
  const { title, slug, content, tags = [] } = body;
  if (typeof title !== "string" || title.trim().length === 0 || [...title.trim()].length > 300) return "bad title";
  if (typeof slug !== "string" || !SLUG_PATTERN.test(slug)) return "bad slug";
  if (typeof content !== "string" || Buffer.byteLength(content) > 1024 * 1024) return "bad content";
  if (!Array.isArray(tags) || tags.length > 20) return "bad tags";
  const kept = new Set();
  for (const tag of tags) {
    if (typeof tag !== "string" || tag.trim().length === 0 || [...tag.trim()].length > 64) return "bad tag";
    kept.add(tag.trim());
  }
  return { title: title.trim(), slug, content, tags: [...kept] };
}

async function create(req, res) {
  if (!keyOk(req)) return fail(res, 401, "unauthorized", "a valid API key is required");
  if (!csrfOk(req)) return fail(res, 403, "csrf_failed", "the CSRF token is missing or does not match");
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return fail(res, 413, "payload_too_large", "the body is too large");
    chunks.push(chunk);
  }
  let body;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return fail(res, 400, "invalid_json", "the body is not valid JSON");
  }
  const input = validate(body);
  if (typeof input === "string") return fail(res, 400, "validation_failed", input);
  const job = await submit({ ...input, content: sanitize(input.content) });
  if (!job) return fail(res, 409, "slug_conflict", "the slug is taken");
  send(res, 202, { id: job.id, status: "queued" }, { location: `/api/v1/articles/${input.slug}` });
}

const server = createServer((req, res) => {
  const url = req.url ?? "/";
  if (req.method === "POST" && url === "/api/v1/articles") {
    create(req, res).catch(() => fail(res, 500, "internal", "internal error"));
    return;
  }
  if (req.method === "GET" && url === "/api/v1/csrf") {
    const nonce = randomBytes(24).toString("base64url");
    const token = `${nonce}.${sign(nonce)}`;
    send(res, 200, { token }, { "set-cookie": `svc_csrf=${token}; Path=/; SameSite=Strict` });
    return;
  }
  if (req.method === "GET" && url.startsWith("/api/v1/jobs/")) {
    const id = url.slice("/api/v1/jobs/".length);
    const status = jobStatus.get(id);
    if (status === undefined) fail(res, 404, "not_found", "no such job");
    else send(res, 200, { id, status });
    return;
  }
  if (req.method === "GET" && url === "/api/v1/articles?limit=1") {
    send(res, 200, { items: [] });
    return;
  }
  fail(res, 404, "not_found", "not found");
});
server.listen(port, "127.0.0.1");
process.on("SIGTERM", () => server.close(() => db.close()));
