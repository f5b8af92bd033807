import { sql } from "@vellum/core";
import type { Db } from "../../tables.js";
import { termFrequencies, termWeights, topTerms } from "../../ai/term-weights.js";
import type { RelatedHit, TagSuggestion } from "../types.js";
import { anyOf } from "./expression.js";
import { type GenerationTables, WEIGHTS } from "./schema.js";
import { termDocs } from "./vocabulary.js";

/** Words used to describe a document for similarity. */
const QUERY_TERMS = 10;
/** Neighbours whose tags vote in tag suggestions. */
const NEIGHBOURS = 20;

/** Words in more documents than this are too broad to say what a document is about. */
function maxDocs(documents: number): number {
  return Math.max(20, Math.min(Math.floor(documents * 0.02), 2000));
}

interface Neighbour extends RelatedHit {
  rowid: number;
}

async function neighbours(
  db: Db,
  t: GenerationTables,
  terms: string[],
  limit: number,
  exclude: number,
): Promise<Neighbour[]> {
  if (terms.length === 0) return [];
  const rows = await sql<{
    rowid: number;
    score: number;
    article_id: string;
    slug: string;
    title: string;
    tags: string;
    created_at: string;
    updated_at: string;
  }>`
    SELECT m.rowid AS rowid, m.score AS score, d.article_id, d.slug, d.title, d.tags, d.created_at, d.updated_at
    FROM (
      SELECT rowid, bm25(${sql.table(t.fts)}, ${sql.lit(WEIGHTS.title)}, ${sql.lit(WEIGHTS.tags)}, ${sql.lit(WEIGHTS.body)}) AS score
      FROM ${sql.table(t.fts)} WHERE ${sql.table(t.fts)} MATCH ${anyOf(terms)} AND rowid != ${exclude}
      ORDER BY score LIMIT ${limit}
    ) AS m JOIN ${sql.table(t.docs)} AS d ON d.rowid = m.rowid
    ORDER BY m.score`.execute(db);
  return rows.rows.map((r) => ({
    rowid: r.rowid,
    id: r.article_id,
    slug: r.slug,
    title: r.title,
    tags: JSON.parse(r.tags) as string[],
    score: Number((-r.score).toPrecision(6)),
    created_at: r.created_at,
    updated_at: r.updated_at,
  }));
}

async function describe(
  db: Db,
  t: GenerationTables,
  documents: number,
  text: { title: string; tags?: string[]; body: string },
  self: boolean,
) {
  const tf = termFrequencies(text);
  const docs = await termDocs(db, t, [...tf.keys()]);
  const weights = termWeights(tf, docs, documents, self);
  return { weights, terms: topTerms(weights, docs, QUERY_TERMS, maxDocs(documents)) };
}

/** Documents sharing the most heavily weighted words of the document with this slug. */
export async function related(db: Db, t: GenerationTables, documents: number, slug: string, limit: number) {
  const rows = await sql<{ rowid: number; title: string; tags: string; body: string }>`
    SELECT rowid, title, tags, body FROM ${sql.table(t.docs)} WHERE slug = ${slug}`.execute(db);
  const doc = rows.rows[0];
  if (!doc) return undefined;
  const { terms } = await describe(
    db,
    t,
    documents,
    { title: doc.title, tags: JSON.parse(doc.tags), body: doc.body },
    true,
  );
  const hits = await neighbours(db, t, terms, limit, doc.rowid);
  return { terms, hits: hits.map(({ rowid: _rowid, ...hit }) => hit) };
}

/**
 * Existing tags for a text. Two signals, each scaled to [0, 1] and averaged: the tags of the most
 * similar documents, each vote weighted by that document's similarity; and tags whose words the
 * text itself uses, weighted by those words' tf-idf.
 */
export async function suggestTags(
  db: Db,
  t: GenerationTables,
  documents: number,
  text: { title: string; body: string },
  limit: number,
  exclude: readonly string[],
): Promise<TagSuggestion[]> {
  const { weights, terms } = await describe(db, t, documents, text, false);
  const excluded = new Set(exclude.map((tag) => tag.toLowerCase()));
  const votes = new Map<string, number>();
  const found = await neighbours(db, t, terms, NEIGHBOURS, 0);
  const similarity = found.reduce((sum, n) => sum + n.score, 0) || 1;
  for (const n of found) for (const tag of n.tags) votes.set(tag, (votes.get(tag) ?? 0) + n.score / similarity);

  const heaviest = Math.max(0, ...weights.values()) || 1;
  const mentioned = new Map<string, number>();
  const words = [...weights.keys()];
  for (let i = 0; i < words.length; i += 500) {
    const part = words.slice(i, i + 500);
    const rows = await sql<{ tag: string }>`
      SELECT tag FROM ${sql.table(t.tags)} WHERE lower(tag) IN (${sql.join(part)})`.execute(db);
    for (const { tag } of rows.rows) mentioned.set(tag, (weights.get(tag.toLowerCase()) ?? 0) / heaviest);
  }
  const topVote = Math.max(0, ...votes.values()) || 1;
  const scores = new Map<string, number>();
  for (const [tag, vote] of votes) scores.set(tag, vote / topVote / 2);
  for (const [tag, weight] of mentioned) scores.set(tag, (scores.get(tag) ?? 0) + weight / 2);
  return [...scores]
    .filter(([tag]) => !excluded.has(tag.toLowerCase()))
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, limit)
    .map(([tag, score]) => ({ tag, score: Math.round(score * 10_000) / 10_000 }));
}
