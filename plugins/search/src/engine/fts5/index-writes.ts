import { sql } from "@vellum/core";
import type { Db, DocsRow } from "../../tables.js";
import { vocabularyWords } from "../../text/tokenize.js";
import type { SearchDocument } from "../types.js";
import { touch } from "./generations.js";
import { prepared } from "./prepared.js";
import type { GenerationTables } from "./schema.js";
import { applyDeltas, countInto } from "./vocabulary.js";

/** What one write changes in a generation's counts: words and tags in or out, documents added. */
export interface IndexChange {
  terms: Map<string, number>;
  tags: Map<string, number>;
  added: number;
}

/** What removing a document needs of its stored row. */
type StoredText = Pick<DocsRow, "rowid" | "title" | "tags" | "tags_text" | "body">;

function documentWords(doc: { title: string; tags_text: string; body: string }): Set<string> {
  return vocabularyWords(`${doc.title}\n${doc.tags_text}\n${doc.body}`);
}

function row(doc: SearchDocument): Omit<DocsRow, "rowid"> {
  return {
    article_id: doc.id,
    slug: doc.slug,
    title: doc.title,
    tags: JSON.stringify(doc.tags),
    tags_text: doc.tags.join("\n"),
    body: doc.body,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
  };
}

async function stored(db: Db, t: GenerationTables, id: string): Promise<StoredText | undefined> {
  const query = prepared<StoredText>("stored", t.generation, 1, () =>
    sql`SELECT rowid, title, tags, tags_text, body FROM ${sql.table(t.docs)} WHERE article_id = ${""}`.compile(db),
  );
  return (await query.rows(db, [id]))[0];
}

/**
 * Removes a stored document from the FTS index and the docs table, and counts its words and tags
 * out. A document written earlier in the same transaction is not in the FTS index yet: its
 * pending entry is dropped instead (an FTS5 'delete' of text it never indexed would corrupt it).
 */
async function unindex(
  db: Db,
  t: GenerationTables,
  old: StoredText,
  terms: Map<string, number>,
  tags: Map<string, number>,
): Promise<void> {
  const pending = await sql`DELETE FROM search_pending_fts
    WHERE generation = ${t.generation} AND docid = ${old.rowid} RETURNING docid`.execute(db);
  if (pending.rows.length === 0) {
    await sql`INSERT INTO ${sql.table(t.fts)} (${sql.table(t.fts)}, rowid, title, tags_text, body)
      VALUES ('delete', ${old.rowid}, ${old.title}, ${old.tags_text}, ${old.body})`.execute(db);
  }
  await sql`DELETE FROM ${sql.table(t.docs)} WHERE rowid = ${old.rowid}`.execute(db);
  countInto(terms, documentWords(old), -1);
  countInto(tags, JSON.parse(old.tags) as string[], -1);
}

/**
 * Adds or replaces one document. The new row gets the next rowid, so rowid order is the order in
 * which documents were last written (the planner reads it as recency). Its full-text entry is
 * left pending (`search_pending_fts`) for `applyChanges`, which adds the entries of every write
 * of the transaction in one statement: FTS5 writes its in-memory terms to disk at every savepoint
 * release, so indexing each document inside its own job's savepoint made one tiny segment (and
 * merge work) per document. Returns the change to the counts, which `applyChanges` also writes.
 */
export async function upsertDocument(db: Db, t: GenerationTables, doc: SearchDocument): Promise<IndexChange> {
  const terms = new Map<string, number>();
  const tags = new Map<string, number>();
  const old = await stored(db, t, doc.id);
  if (old) await unindex(db, t, old, terms, tags);
  const values = row(doc);
  const insert = prepared<Pick<DocsRow, "rowid">>("insert", t.generation, 8, () => {
    const values = sql.join(Array.from({ length: 8 }, () => ""));
    return sql`INSERT INTO ${sql.table(t.docs)} (article_id, slug, title, tags, tags_text, body, created_at, updated_at)
      VALUES (${values}) RETURNING rowid`.compile(db);
  });
  const inserted = await insert.rows(db, [
    values.article_id,
    values.slug,
    values.title,
    values.tags,
    values.tags_text,
    values.body,
    values.created_at,
    values.updated_at,
  ]);
  const rowid = (inserted[0] as Pick<DocsRow, "rowid">).rowid;
  const pend = prepared("pend", t.generation, 2, () =>
    sql`INSERT INTO search_pending_fts (generation, docid) VALUES (${0}, ${0})`.compile(db),
  );
  await pend.run(db, [t.generation, rowid]);
  countInto(terms, documentWords(values), 1);
  countInto(tags, doc.tags, 1);
  return { terms, tags, added: old ? 0 : 1 };
}

/**
 * Removes one document; in a generation being built, also leaves a tombstone for the builder.
 * Returns the change to the counts, or undefined when the document was not indexed.
 */
export async function removeDocument(
  db: Db,
  t: GenerationTables,
  id: string,
  building: boolean,
): Promise<IndexChange | undefined> {
  if (building) {
    await sql`INSERT OR IGNORE INTO ${sql.table(t.tombstones)} (article_id) VALUES (${id})`.execute(db);
  }
  const old = await stored(db, t, id);
  if (!old) return undefined;
  const terms = new Map<string, number>();
  const tags = new Map<string, number>();
  await unindex(db, t, old, terms, tags);
  return { terms, tags, added: -1 };
}

/** Adds the pending full-text entries of generation `t` (see `upsertDocument`) to its FTS index. */
async function indexPending(db: Db, t: GenerationTables): Promise<void> {
  const index = prepared("index", t.generation, 1, () =>
    sql`INSERT INTO ${sql.table(t.fts)} (rowid, title, tags_text, body)
      SELECT d.rowid, d.title, d.tags_text, d.body
      FROM search_pending_fts p JOIN ${sql.table(t.docs)} d ON d.rowid = p.docid
      WHERE p.generation = ${0} ORDER BY p.docid`.compile(db),
  );
  await index.run(db, [t.generation]);
  await clearPending(db, t.generation);
}

/** Forgets the pending full-text entries of `generation` (indexed, or the generation broke). */
export async function clearPending(db: Db, generation: number): Promise<void> {
  const clear = prepared("clear", generation, 1, () =>
    db.deleteFrom("search_pending_fts").where("generation", "=", 0).compile(),
  );
  await clear.run(db, [generation]);
}

/**
 * Adds the transaction's pending full-text entries, then writes the summed count changes of
 * `changes` to the vocabulary, the tags and the document count.
 */
export async function applyChanges(
  db: Db,
  t: GenerationTables,
  changes: readonly IndexChange[],
  building: boolean,
): Promise<void> {
  const terms = new Map<string, number>();
  const tags = new Map<string, number>();
  let added = 0;
  for (const change of changes) {
    for (const [term, delta] of change.terms) terms.set(term, (terms.get(term) ?? 0) + delta);
    for (const [tag, delta] of change.tags) tags.set(tag, (tags.get(tag) ?? 0) + delta);
    added += change.added;
  }
  await indexPending(db, t);
  await applyDeltas(db, t, terms, tags, building);
  await touch(db, t.generation, added, true);
}

/**
 * Adds a batch read from the articles while building. A document already written by a live
 * change (or deleted meanwhile) is newer than the batch and is left alone. The words and tags of
 * the added documents are counted into `terms` and `tags` (written once the copy is done).
 * Returns how many documents were added.
 */
export async function insertBatch(
  db: Db,
  t: GenerationTables,
  docs: readonly SearchDocument[],
  terms: Map<string, number>,
  tags: Map<string, number>,
): Promise<number> {
  if (docs.length === 0) return 0;
  const rows = docs.map(row);
  const inserted = await sql<Pick<DocsRow, "rowid" | "article_id">>`
    INSERT INTO ${sql.table(t.docs)} (article_id, slug, title, tags, tags_text, body, created_at, updated_at)
    SELECT value ->> '$.article_id', value ->> '$.slug', value ->> '$.title', value ->> '$.tags',
      value ->> '$.tags_text', value ->> '$.body', value ->> '$.created_at', value ->> '$.updated_at'
    FROM json_each(${JSON.stringify(rows)})
    WHERE value ->> '$.article_id' NOT IN (SELECT article_id FROM ${sql.table(t.tombstones)})
    ON CONFLICT (article_id) DO NOTHING
    RETURNING rowid, article_id`.execute(db);
  if (inserted.rows.length === 0) return 0;
  const rowids = inserted.rows.map((r) => r.rowid);
  await sql`INSERT INTO ${sql.table(t.fts)} (rowid, title, tags_text, body)
    SELECT rowid, title, tags_text, body FROM ${sql.table(t.docs)}
    WHERE rowid BETWEEN ${Math.min(...rowids)} AND ${Math.max(...rowids)}`.execute(db);
  const ids = new Set(inserted.rows.map((r) => r.article_id));
  for (const r of rows) {
    if (!ids.has(r.article_id)) continue;
    countInto(terms, documentWords(r), 1);
    countInto(tags, JSON.parse(r.tags) as string[], 1);
  }
  await touch(db, t.generation, inserted.rows.length, false);
  return inserted.rows.length;
}
