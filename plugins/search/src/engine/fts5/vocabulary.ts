import { sql } from "@vellum/core";
import type { Db } from "../../tables.js";
import { porterStem } from "../../text/porter.js";
import { deletionVariants, isCorrectable } from "../../typo/variants.js";
import { prepared } from "./prepared.js";
import type { GenerationTables } from "./schema.js";

/** Rows per multi-row statement (2–3 parameters each, far below SQLite's variable limit). */
const CHUNK = 4000;

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Adds `delta` to `counts[key]` for every key (a document's words or tags entering or leaving). */
export function countInto(counts: Map<string, number>, keys: Iterable<string>, delta: number): void {
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + delta);
}

/** Changes as one JSON parameter for `json_each` (large batches stay cheap to bind). */
const asJson = (deltas: Map<string, number>) =>
  JSON.stringify(Object.fromEntries([...deltas].filter(([, d]) => d !== 0)));

/**
 * Adds count changes to the words (`term`) or tags (`tag`) of generation `t` and returns the keys
 * that were created and those whose count fell to zero or below.
 */
async function upsertCounts(db: Db, t: GenerationTables, column: "term" | "tag", deltas: Map<string, number>) {
  const created: string[] = [];
  const emptied: string[] = [];
  const table = column === "term" ? t.terms : t.tags;
  const upsert = prepared<{ key: string; docs: number }>(`count-${column}`, t.generation, 1, () =>
    sql`INSERT INTO ${sql.table(table)} (${sql.id(column)}, docs)
      SELECT key, value FROM json_each(${""}) WHERE true
      ON CONFLICT (${sql.id(column)}) DO UPDATE SET docs = docs + excluded.docs
      RETURNING ${sql.id(column)} AS key, docs`.compile(db),
  );
  for (const row of await upsert.rows(db, [asJson(deltas)])) {
    if (row.docs <= 0) emptied.push(row.key);
    else if (row.docs === deltas.get(row.key)) created.push(row.key);
  }
  return { created, emptied };
}

const variantPairs = (words: readonly string[]) =>
  JSON.stringify(
    words.filter(isCorrectable).flatMap((term) => deletionVariants(term).map((variant) => [variant, term])),
  );

/** Gives new words their stem and their deletion variants (typo correction). */
async function describeTerms(db: Db, t: GenerationTables, words: readonly string[]): Promise<void> {
  if (words.length === 0) return;
  const stems = JSON.stringify(Object.fromEntries(words.map((term) => [term, porterStem(term)])));
  const stem = prepared("stem-terms", t.generation, 1, () =>
    sql`UPDATE ${sql.table(t.terms)} SET stem = s.value FROM json_each(${""}) AS s
      WHERE ${sql.table(t.terms)}.term = s.key`.compile(db),
  );
  await stem.run(db, [stems]);
  const vary = prepared("add-variants", t.generation, 1, () =>
    sql`INSERT OR IGNORE INTO ${sql.table(t.variants)} (variant, term)
      SELECT value ->> 0, value ->> 1 FROM json_each(${""})`.compile(db),
  );
  await vary.run(db, [variantPairs(words)]);
}

/** Deletes the words (`term`) or tags (`tag`) of generation `t` named in `keys`. */
async function forgetKeys(db: Db, t: GenerationTables, column: "term" | "tag", keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  const table = column === "term" ? t.terms : t.tags;
  const forget = prepared(`forget-${column}`, t.generation, 1, () =>
    sql`DELETE FROM ${sql.table(table)} WHERE ${sql.id(column)} IN (SELECT value FROM json_each(${""}))`.compile(db),
  );
  await forget.run(db, [JSON.stringify(keys)]);
}

async function forgetTerms(db: Db, t: GenerationTables, words: readonly string[]): Promise<void> {
  if (words.length === 0) return;
  await forgetKeys(db, t, "term", words);
  const unvary = prepared("forget-variants", t.generation, 1, () =>
    sql`DELETE FROM ${sql.table(t.variants)}
      WHERE (variant, term) IN (SELECT value ->> 0, value ->> 1 FROM json_each(${""}))`.compile(db),
  );
  await unvary.run(db, [variantPairs(words)]);
}

/**
 * Applies one write's word and tag changes. In a generation being built, counts may pass through
 * zero or below while the builder's counts are still to come, so nothing is deleted then
 * (`finishVocabulary` does it before the generation goes live).
 */
export async function applyDeltas(
  db: Db,
  t: GenerationTables,
  terms: Map<string, number>,
  tags: Map<string, number>,
  building: boolean,
): Promise<void> {
  const words = await upsertCounts(db, t, "term", terms);
  await describeTerms(db, t, words.created);
  const tagChanges = await upsertCounts(db, t, "tag", tags);
  if (building) return;
  await forgetTerms(db, t, words.emptied);
  await forgetKeys(db, t, "tag", tagChanges.emptied);
}

/** Adds the builder's counts (kept in memory while copying batches) to a generation being built. */
export async function addBuildCounts(
  db: Db,
  t: GenerationTables,
  terms: Map<string, number>,
  tags: Map<string, number>,
) {
  for (const [table, column, deltas] of [
    [t.terms, "term", terms],
    [t.tags, "tag", tags],
  ] as const) {
    await sql`INSERT INTO ${sql.table(table)} (${sql.id(column)}, docs)
      SELECT key, value FROM json_each(${asJson(deltas)}) WHERE true
      ON CONFLICT (${sql.id(column)}) DO UPDATE SET docs = docs + excluded.docs`.execute(db);
  }
}

/** Describes up to `limit` words that have no stem yet; returns how many it did (0 when done). */
export async function describePending(db: Db, t: GenerationTables, limit: number): Promise<number> {
  const rows = await sql<{ term: string }>`
    SELECT term FROM ${sql.table(t.terms)} WHERE stem IS NULL AND docs > 0 LIMIT ${limit}`.execute(db);
  await describeTerms(
    db,
    t,
    rows.rows.map((r) => r.term),
  );
  return rows.rows.length;
}

/** Before a built generation goes live: removes words and tags no document has any more. */
export async function finishVocabulary(db: Db, t: GenerationTables): Promise<void> {
  const rows = await sql<{ term: string }>`SELECT term FROM ${sql.table(t.terms)} WHERE docs <= 0`.execute(db);
  await forgetTerms(
    db,
    t,
    rows.rows.map((r) => r.term),
  );
  await sql`DELETE FROM ${sql.table(t.tags)} WHERE docs <= 0`.execute(db);
}

/**
 * Documents per stem (FTS5 matches by stem): the sum over the vocabulary words with that stem, an
 * upper bound that is exact when one word carries the stem.
 */
export async function stemDocs(db: Db, t: GenerationTables, stems: readonly string[]): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (const part of chunks([...new Set(stems)])) {
    const rows = await sql<{ stem: string; docs: number }>`
      SELECT stem, sum(docs) AS docs FROM ${sql.table(t.terms)} WHERE stem IN (${sql.join(part)}) GROUP BY stem`.execute(
      db,
    );
    for (const row of rows.rows) found.set(row.stem, row.docs);
  }
  return found;
}

/** Documents per word, for the given words that are in the vocabulary. */
export async function termDocs(db: Db, t: GenerationTables, words: readonly string[]): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (const part of chunks(words)) {
    const rows = await sql<{ term: string; docs: number }>`
      SELECT term, docs FROM ${sql.table(t.terms)} WHERE term IN (${sql.join(part)})`.execute(db);
    for (const row of rows.rows) found.set(row.term, row.docs);
  }
  return found;
}

/** Smallest string greater than every string starting with `prefix`. */
function prefixEnd(prefix: string): string {
  return `${prefix}\u{10ffff}`;
}

/** The most used words starting with `prefix`, most documents first. */
export async function completions(
  db: Db,
  t: GenerationTables,
  prefix: string,
  limit: number,
): Promise<Array<{ term: string; docs: number }>> {
  const rows = await sql<{ term: string; docs: number }>`
    SELECT term, docs FROM ${sql.table(t.terms)} WHERE term >= ${prefix} AND term < ${prefixEnd(prefix)}
    ORDER BY docs DESC, term LIMIT ${limit}`.execute(db);
  return rows.rows;
}

/** Vocabulary words sharing a deletion variant with `word`: every word within one edit, and some within two. */
export async function correctionCandidates(
  db: Db,
  t: GenerationTables,
  word: string,
): Promise<Array<{ term: string; docs: number }>> {
  const rows = await sql<{ term: string; docs: number }>`
    SELECT DISTINCT v.term AS term, w.docs AS docs
    FROM ${sql.table(t.variants)} AS v JOIN ${sql.table(t.terms)} AS w ON w.term = v.term
    WHERE v.variant IN (${sql.join(deletionVariants(word))})`.execute(db);
  return rows.rows;
}
