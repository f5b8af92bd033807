import { join } from "node:path";
import Database from "better-sqlite3";
import { articleHasWord, indexOfSlug } from "./queries.mjs";

/**
 * Judges a misspelled query's top hit: does the article contain the intended word? Two ways:
 * `exact` (the word itself, whole, in title, tags or body) and `stem` (the word or a form with
 * the same Porter stem, as the search index matches words: "delivered" for "deliver"). The stem
 * check asks the built index itself, read-only, so both engines are judged by the same rule.
 * @param {string} dataDir
 */
export function recoveryJudge(dataDir) {
  const db = new Database(join(dataDir, "db", "vellum.sqlite"), { readonly: true, fileMustExist: true });
  const { generation } = db.prepare("SELECT generation FROM search_generations WHERE state = 'active'").get();
  const fts = `search_fts_g${generation}`;
  const stmt = db.prepare(
    `SELECT 1 FROM ${fts} WHERE ${fts} MATCH ? AND rowid = (SELECT rowid FROM search_docs_g${generation} WHERE slug = ?)`,
  );
  return {
    /** @param {string} slug @param {string} word */
    judge(slug, word) {
      return { exact: articleHasWord(indexOfSlug(slug), word), stem: stmt.get(`"${word}"`, slug) !== undefined };
    },
    close: () => db.close(),
  };
}
