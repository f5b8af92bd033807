import { sql } from "@vellum/core";
import type { Db } from "../../tables.js";
import { parseQuery } from "../../query/parse.js";
import { planQuery, type QueryPlan, type VocabularyLookup } from "../../query/plan.js";
import { makeSnippet, stemMatcher } from "../../snippet.js";
import type { SearchHit, SearchRequest, SearchResult } from "../types.js";
import { matchExpression, quote } from "./expression.js";
import { type GenerationTables, WEIGHTS } from "./schema.js";
import { completions, correctionCandidates, stemDocs } from "./vocabulary.js";

interface PageRow {
  rowid: number;
  score: number | null;
}

interface DocRow {
  rowid: number;
  article_id: string;
  slug: string;
  title: string;
  tags: string;
  created_at: string;
  updated_at: string;
  body: string;
}

const bm25 = (t: GenerationTables) =>
  sql`bm25(${sql.table(t.fts)}, ${sql.lit(WEIGHTS.title)}, ${sql.lit(WEIGHTS.tags)}, ${sql.lit(WEIGHTS.body)})`;

export function vocabularyLookup(db: Db, t: GenerationTables, documents: number): VocabularyLookup {
  return {
    documents,
    stemDocs: (stems) => stemDocs(db, t, stems),
    completions: (prefix, limit) => completions(db, t, prefix, limit),
    async matchCount(word, cap) {
      const rows = await sql<{ n: number }>`
        SELECT count(*) AS n FROM (SELECT 1 FROM ${sql.table(t.fts)} WHERE ${sql.table(t.fts)} MATCH ${quote(word)} LIMIT ${cap})`.execute(
        db,
      );
      return rows.rows[0]?.n ?? 0;
    },
    correctionCandidates: (word) => correctionCandidates(db, t, word),
  };
}

async function countMatches(db: Db, t: GenerationTables, match: string): Promise<number> {
  const rows = await sql<{ n: number }>`
    SELECT count(*) AS n FROM ${sql.table(t.fts)} WHERE ${sql.table(t.fts)} MATCH ${match}`.execute(db);
  return rows.rows[0]?.n ?? 0;
}

/** bm25 over every match; the total comes from the same pass. */
async function rankedPage(db: Db, t: GenerationTables, match: string, limit: number, offset: number) {
  const rows = await sql<PageRow & { total: number }>`
    WITH m AS MATERIALIZED (
      SELECT rowid, ${bm25(t)} AS score FROM ${sql.table(t.fts)} WHERE ${sql.table(t.fts)} MATCH ${match}
    )
    SELECT rowid, score, (SELECT count(*) FROM m) AS total FROM m
    ORDER BY score LIMIT ${limit} OFFSET ${offset}`.execute(db);
  const total = rows.rows[0]?.total ?? (offset > 0 ? await countMatches(db, t, match) : 0);
  return { page: rows.rows, total };
}

/** bm25 over the most recent matches only (enough of them to serve the requested page). */
async function windowPage(db: Db, t: GenerationTables, match: string, limit: number, offset: number, size: number) {
  const window = Math.max(size, offset + limit);
  const edge = await sql<{ rowid: number }>`
    SELECT rowid FROM ${sql.table(t.fts)} WHERE ${sql.table(t.fts)} MATCH ${match}
    ORDER BY rowid DESC LIMIT 1 OFFSET ${window - 1}`.execute(db);
  const from = edge.rows[0]?.rowid ?? 0;
  const rows = await sql<PageRow>`
    SELECT rowid, ${bm25(t)} AS score FROM ${sql.table(t.fts)}
    WHERE ${sql.table(t.fts)} MATCH ${match} AND rowid >= ${from}
    ORDER BY score LIMIT ${limit} OFFSET ${offset}`.execute(db);
  return { page: rows.rows, total: await countMatches(db, t, match) };
}

/** Newest first, unscored: the words carry no weight. */
async function recentPage(db: Db, t: GenerationTables, match: string, limit: number, offset: number) {
  const rows = await sql<{ rowid: number }>`
    SELECT rowid FROM ${sql.table(t.fts)} WHERE ${sql.table(t.fts)} MATCH ${match}
    ORDER BY rowid DESC LIMIT ${limit} OFFSET ${offset}`.execute(db);
  return { page: rows.rows.map((r) => ({ rowid: r.rowid, score: null })), total: await countMatches(db, t, match) };
}

/** Display fields of a page, with snippets made from the body text. */
async function hydrate(db: Db, t: GenerationTables, plan: QueryPlan, page: PageRow[]): Promise<SearchHit[]> {
  if (page.length === 0) return [];
  const rows = await sql<DocRow>`
    SELECT rowid, article_id, slug, title, tags, body, created_at, updated_at FROM ${sql.table(t.docs)}
    WHERE rowid IN (${sql.join(page.map((p) => p.rowid))})`.execute(db);
  const byRowid = new Map(rows.rows.map((r) => [r.rowid, r]));
  const match = stemMatcher(plan.groups.flatMap((g) => g.words));
  return page.flatMap((p) => {
    const doc = byRowid.get(p.rowid);
    if (!doc) return [];
    return [
      {
        id: doc.article_id,
        slug: doc.slug,
        title: doc.title,
        tags: JSON.parse(doc.tags) as string[],
        snippet: makeSnippet(doc.body, match),
        score: p.score === null ? 0 : Number((-p.score).toPrecision(6)),
        created_at: doc.created_at,
        updated_at: doc.updated_at,
      },
    ];
  });
}

export async function runPlan(db: Db, t: GenerationTables, plan: QueryPlan, request: SearchRequest) {
  const match = matchExpression(plan.groups);
  const { limit, offset } = request;
  const { page, total } =
    plan.kind === "ranked"
      ? await rankedPage(db, t, match, limit, offset)
      : plan.kind === "window"
        ? await windowPage(db, t, match, limit, offset, plan.window)
        : await recentPage(db, t, match, limit, offset);
  return { hits: await hydrate(db, t, plan, page), total };
}

/** Parses, plans and runs a query against one generation (inside the caller's read transaction). */
export async function search(
  db: Db,
  t: GenerationTables,
  documents: number,
  request: SearchRequest,
): Promise<SearchResult> {
  const plan = await planQuery(parseQuery(request.q), vocabularyLookup(db, t, documents));
  if (plan.kind === "empty") return { hits: [], total: 0, plan: "empty" };
  const { hits, total } = await runPlan(db, t, plan, request);
  return { hits, total, plan: plan.kind };
}
